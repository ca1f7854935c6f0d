//! The whole service's router: the endpoints, the document, the health check, the studio and
//! local storage's routes.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::routing::{get, post};
use axum::{Json, middleware};
use bytes::Bytes;
use serde_json::Value;

use crate::api::{
    cancel_generate, cancel_transcript, create_transcript, generate, get_generate, get_template,
    get_transcript, list_fonts, list_templates, signed_url,
};
use crate::auth::require_api_key;
use crate::openapi::openapi;
use crate::state::AppState;
use crate::storage_routes::{StorageRoutes, storage_router};
use crate::{ApiError, preview, studio};

/// The whole service: the seven endpoints under `/v1` (x-api-key) with `/v1/preview`,
/// `/v1/openapi.json`, `/healthz`, the studio page at `/` and, for local storage, the signed
/// upload and download routes. Every error, unknown paths included, is a JSON body.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/v1/transcript", post(create_transcript))
        .route(
            "/v1/transcript/{jobId}",
            get(get_transcript).delete(cancel_transcript),
        )
        .route("/v1/generate", post(generate))
        .route(
            "/v1/generate/{jobId}",
            get(get_generate).delete(cancel_generate),
        )
        .route("/v1/templates", get(list_templates))
        .route("/v1/templates/{templateId}", get(get_template))
        .route("/v1/signedUrl", get(signed_url))
        .route("/v1/fonts", get(list_fonts))
        .route("/v1/preview", post(preview::preview))
        .route_layer(middleware::from_fn_with_state(
            state.keys.clone(),
            require_api_key,
        ))
        .layer(DefaultBodyLimit::max(state.max_body_bytes))
        .with_state(state.clone());
    // Serialised once: the document never changes while the process runs.
    let document = Bytes::from(serde_json::to_vec_pretty(&openapi()).unwrap_or_default());
    let mut app = Router::new()
        .route(
            "/v1/openapi.json",
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    document.clone(),
                )
            }),
        )
        .route("/healthz", get(healthz))
        .merge(studio::studio_router())
        .merge(api);
    if let Some(authority) = state.local {
        app = app.merge(storage_router(StorageRoutes {
            storage: state.engine.storage().clone(),
            authority,
        }));
    }
    app.fallback(|| async { ApiError::not_found_route() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
}

async fn healthz() -> Json<Value> {
    Json(serde_json::json!({ "status": "ok" }))
}
