//! Run: `cargo run -p caption-http --example storage_server -- <data dir> [port]`
//!
//! Serves local storage's upload and download routes on 127.0.0.1 and prints one JSON line:
//! the base URL and an upload descriptor for `big.bin` (up to 4 GiB), ready for curl -F.
//! `scripts/measure-upload-rss` uses it to measure memory during a 1 GiB upload.
#![allow(
    clippy::print_stdout,
    reason = "an example talks to its user on stdout"
)]

use std::sync::Arc;

use caption_http::{StorageRoutes, storage_router};
use caption_store::{LinkOptions, LocalStorage, Storage as _};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let data_dir = args
        .next()
        .ok_or("usage: storage_server <data dir> [port]")?;
    let port: u16 = args.next().map(|p| p.parse()).transpose()?.unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let base_url = format!("http://{}", listener.local_addr()?);
    let storage = LocalStorage::open(data_dir.as_ref(), &base_url, LinkOptions::default())?;
    let descriptor = storage.upload_descriptor("big.bin").await?;
    println!(
        "{}",
        serde_json::json!({ "base_url": base_url, "descriptor": descriptor })
    );
    let router = storage_router(StorageRoutes {
        storage: Arc::new(storage.clone()),
        authority: storage.authority().clone(),
    });
    axum::serve(listener, router).await?;
    Ok(())
}
