//! Real servers for tests, started on 127.0.0.1 in a throwaway folder and stopped (the process
//! killed, the folder removed) when the guard drops.
//!
//! - [`PostgresServer`]: a fresh PostgreSQL cluster from Debian's packages, run as the
//!   unprivileged `postgres` user when the tests run as root (PostgreSQL refuses to run as root).
//! - [`Chromedriver`]: Debian's chromedriver, for tests that drive Chromium through WebDriver.
//! - [`S3sServer`]: s3s-fs, an S3 server that checks signatures and POST policies.
//! - [`Tmpfs`]: a small tmpfs, for a disk that fills up.
//! - [`Service`]: `captions serve` itself ([`ServeCommand`] says how to start it).
//!
//! [`fuzz`] runs arbitrary and mutated input through a parser and tallies what it did.
//! [`media`] makes videos with speech and reads their frames; [`speech`] makes speech with
//! known word times; [`dialogue`] makes conversations of several voices with known speakers;
//! [`upload`] plays a browser's form upload with curl; [`faces`] gives a real face, and clips
//! in which it moves along a known path.
//!
//! With the `service` feature: `webhook` receives a service's events, and `soak` runs
//! clients, two service processes and a fault injector for a set time and reports what broke
//! (`scripts/soak`).
//!
//! ```
//! let server = caption_testkit::PostgresServer::start()?;
//! let url = server.database("jobs")?;
//! assert_eq!(url, server.url("jobs"));
//! assert!(std::net::TcpStream::connect(("127.0.0.1", server.port())).is_ok());
//! # Ok::<(), String>(())
//! ```

#![warn(missing_docs)]

mod chromedriver;
pub mod dialogue;
pub mod faces;
pub mod fuzz;
pub mod media;
mod postgres;
mod s3s;
mod serve;
#[cfg(feature = "service")]
pub mod soak;
pub mod speech;
mod tmpfs;
pub mod upload;
#[cfg(feature = "service")]
pub mod webhook;

pub use chromedriver::{CHROMIUM, Chromedriver};
pub use postgres::PostgresServer;
pub use s3s::S3sServer;
pub use serve::{ServeCommand, Service, wait_for_port};
pub use tmpfs::Tmpfs;

/// A TCP port that was free a moment ago on 127.0.0.1: for a server a test starts. Another
/// process may take it in between, which on a test machine does not happen in practice.
///
/// ```
/// let port = caption_testkit::free_port()?;
/// assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
