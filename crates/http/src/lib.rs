//! The caption engine's HTTP adapter (axum).
//!
//! [`router`] maps the interface's seven endpoints under `/v1` onto an
//! [`Engine`](caption_engine::Engine), behind an `x-api-key` check ([`ApiKeys`], constant
//! time), with `{"error": {"code", "message"}}` bodies for every failure ([`ApiError`]), plus
//! `/v1/openapi.json` ([`openapi`]), `/healthz`, `POST /v1/preview` (one caption frame as a
//! PNG), the studio page at `/` (a browser client of the same API, its files compiled in) and,
//! for local storage, the signed upload and download routes ([`storage_router`]). [`serve`] runs it all from a [`ServiceConfig`] (one
//! TOML file plus `CAPTIONS_*` environment overrides) with graceful shutdown.

mod api;
mod auth;
mod config;
mod error;
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
pub use openapi::{openapi, schemas};
pub use routes::router;
pub use server::{Server, serve};
pub use state::AppState;
pub use storage_routes::{StorageRoutes, storage_router};
