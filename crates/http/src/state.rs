//! What the handlers share: the state of the routes and the extractors that turn a bad request
//! into a JSON error.

use std::time::Duration;

use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use bytes::Bytes;
use caption_engine::Engine;
use caption_store::LocalAuthority;
use serde_json::Value;

use crate::ApiError;
use crate::auth::ApiKeys;
use crate::limits::KeyLimits;

/// What the routes share: the engine, the accepted keys and the limits.
#[derive(Debug, Clone)]
pub struct AppState {
    pub(crate) engine: Engine,
    pub(crate) keys: ApiKeys,
    pub(crate) local: Option<LocalAuthority>,
    pub(crate) max_body_bytes: usize,
    pub(crate) sync_generate_limit: Duration,
    pub(crate) limits: KeyLimits,
}

impl AppState {
    /// Routes over `engine`, open to holders of `keys`; JSON bodies up to 64 MiB.
    pub fn new(engine: Engine, keys: ApiKeys) -> Self {
        Self {
            engine,
            keys,
            local: None,
            max_body_bytes: 64 * 1024 * 1024,
            sync_generate_limit: Duration::from_secs(50),
            limits: KeyLimits::default(),
        }
    }

    /// Jobs and synchronous generates at once per API key; beyond, 429. Default
    /// [`KeyLimits::default`].
    pub fn with_key_limits(mut self, limits: KeyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A synchronous generate running longer than this still completes, but is logged as one
    /// that should have been `"async": true`. Default 50 s.
    pub fn with_sync_generate_limit(mut self, limit: Duration) -> Self {
        self.sync_generate_limit = limit;
        self
    }

    /// Also serves local storage's upload and download routes, signed by `authority`
    /// (needed when the engine's storage is local; S3 serves its own).
    pub fn with_local_storage(mut self, authority: LocalAuthority) -> Self {
        self.local = Some(authority);
        self
    }

    /// Largest JSON request body; larger ones get 413.
    pub fn with_max_body_bytes(mut self, max_body_bytes: usize) -> Self {
        self.max_body_bytes = max_body_bytes;
        self
    }

    /// The engine the routes call.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

/// A JSON body as a loose value, for the validators to walk; 400 when it does not parse,
/// 413 when it is over the limit.
pub(crate) struct JsonBody(pub(crate) Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes =
            Bytes::from_request(request, state)
                .await
                .map_err(|rejection: BytesRejection| {
                    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                        ApiError::too_large(state.max_body_bytes)
                    } else {
                        ApiError::new(
                            StatusCode::BAD_REQUEST,
                            "bad_request",
                            "the request body could not be read",
                        )
                    }
                })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(ApiError::malformed_json)
    }
}

/// A path parameter; a malformed one (bad percent-encoding) is a JSON 400.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub(crate) struct PathParam<T>(pub(crate) T);

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            rejection.body_text(),
        )
    }
}

/// Query parameters; a malformed query string is a JSON 400.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub(crate) struct QueryParams<T>(pub(crate) T);

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            rejection.body_text(),
        )
    }
}
