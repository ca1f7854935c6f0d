//! Run: `cargo run -p caption-http --example embed` then `curl -H 'x-api-key: demo-key' http://127.0.0.1:3000/captions/v1/templates`
//!
//! Embeds the caption service in another axum application: the host app keeps its own routes
//! (`/`), and the caption routes live under `/captions`. Local storage and the job database go
//! to a temporary folder; transcription uses the installed `tiny.en` model.
#![allow(
    clippy::print_stdout,
    reason = "an example talks to its user on stdout"
)]

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use caption_engine::{Engine, EngineOptions};
use caption_http::{ApiKeys, AppState, router};
use caption_jobs::EmbeddedJobStore;
use caption_store::{StorageOptions, open_storage};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = tempfile::tempdir()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    // Upload and download links must point at where the caption routes are mounted.
    let public_url = format!("http://{}/captions", listener.local_addr()?);

    let opened = open_storage(&StorageOptions::local(
        data.path().join("storage"),
        &public_url,
    ))?;
    let jobs = Arc::new(EmbeddedJobStore::open(data.path().join("jobs.redb"))?);
    let options = EngineOptions::default()
        .data_dir(data.path().to_owned())
        .model("tiny.en".to_owned());
    let engine = Engine::new(options, opened.storage, jobs)?;
    let workers = engine.spawn_workers(true).await?;

    let mut captions = AppState::new(engine, ApiKeys::new(["demo-key"]));
    if let Some(authority) = opened.local {
        captions = captions.with_local_storage(authority);
    }
    let app = Router::new()
        .route("/", get(|| async { "the host application" }))
        .nest("/captions", router(captions));

    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    workers.shutdown().await;
    Ok(())
}
