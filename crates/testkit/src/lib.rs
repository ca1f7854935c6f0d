//! Real servers for tests, started on 127.0.0.1 in a throwaway folder and stopped (the process
//! killed, the folder removed) when the guard drops.
//!
//! - [`PostgresServer`]: a fresh PostgreSQL cluster from Debian's packages, run as the
//!   unprivileged `postgres` user when the tests run as root (PostgreSQL refuses to run as root).
//! - [`Chromedriver`]: Debian's chromedriver, for tests that drive Chromium through WebDriver.
//!
//! [`media`] makes videos with speech and reads their frames; [`speech`] makes speech with
//! known word times.

mod chromedriver;
pub mod media;
mod postgres;
pub mod speech;

pub use chromedriver::{CHROMIUM, Chromedriver};
pub use postgres::PostgresServer;

/// A TCP port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
