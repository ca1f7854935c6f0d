//! The caption engine's HTTP adapter (axum).
//!
//! [`router`] maps the interface's seven endpoints under `/v1` onto an
//! [`Engine`](caption_engine::Engine), behind an `x-api-key` check ([`ApiKeys`], constant
//! time), with `{"error": {"code", "message"}}` bodies for every failure ([`ApiError`]), plus
//! `/v1/openapi.json` ([`openapi`]), `/healthz`, `POST /v1/preview` (one caption frame as a
//! PNG), the studio page at `/` (a browser client of the same API, its files compiled in) and,
//! for local storage, the signed upload and download routes ([`storage_router`]). [`serve`] runs it all from a [`ServiceConfig`] (one
//! TOML file plus `CAPTIONS_*` environment overrides) with graceful shutdown.
//!
//! ```
//! use std::sync::Arc;
//!
//! use axum::body::{Body, to_bytes};
//! use axum::http::{Request, StatusCode};
//! use caption_engine::{Engine, EngineOptions};
//! use caption_http::{ApiKeys, AppState, router};
//! use caption_jobs::EmbeddedJobStore;
//! use caption_store::{StorageOptions, open_storage};
//! use tower::ServiceExt as _;
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let dir = tempfile::tempdir()?;
//! let storage = open_storage(&StorageOptions::local(dir.path().join("storage"), "http://127.0.0.1:8080"))?;
//! let jobs = Arc::new(EmbeddedJobStore::open(dir.path().join("jobs.redb"))?);
//! let engine = Engine::new(EngineOptions::default().data_dir(dir.path().to_owned()), storage.storage, jobs)?;
//! let app = router(AppState::new(engine, ApiKeys::new(["secret-key"])));
//!
//! let ask = |key: &str| Request::get("/v1/templates").header("x-api-key", key).body(Body::empty());
//! let refused = app.clone().oneshot(ask("wrong-key")?).await?;
//! assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
//! let listed = app.oneshot(ask("secret-key")?).await?;
//! assert_eq!(listed.status(), StatusCode::OK);
//! let body: serde_json::Value = serde_json::from_slice(&to_bytes(listed.into_body(), 1 << 20).await?)?;
//! assert!(body.as_array().is_some_and(|t| t.iter().any(|t| t["id"] == "bold-highlight")), "{body}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod api;
mod auth;
mod config;
mod error;
mod limits;
mod openapi;
mod preview;
mod routes;
mod server;
mod state;
mod storage_routes;
mod studio;
mod wire;

pub use auth::ApiKeys;
pub use config::{S3Config, ServiceConfig, StorageKind};
pub use error::{ApiError, Error, FieldProblem, Result};
pub use limits::KeyLimits;
pub use openapi::{openapi, schemas};
pub use routes::router;
pub use server::{Server, serve};
pub use state::AppState;
pub use storage_routes::{StorageRoutes, storage_router};
