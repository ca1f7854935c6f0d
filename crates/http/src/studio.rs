//! The studio: a single page at `/` that captions a video in the browser through the public
//! API alone (upload, transcribe, edit words, style with previews, generate). Its files are
//! compiled into the binary, so `captions serve` needs nothing beside itself.

use axum::Router;
use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::ApiError;

const JS: &str = "text/javascript; charset=utf-8";

/// The studio's files under `/studio/`: name, media type, contents.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "studio.css",
        "text/css; charset=utf-8",
        include_str!("../studio/studio.css"),
    ),
    ("app.js", JS, include_str!("../studio/app.js")),
    ("api.js", JS, include_str!("../studio/api.js")),
    ("editor.js", JS, include_str!("../studio/editor.js")),
    ("style.js", JS, include_str!("../studio/style.js")),
    (
        "icon.svg",
        "image/svg+xml",
        include_str!("../studio/icon.svg"),
    ),
];

const INDEX: &str = include_str!("../studio/index.html");

/// `/` and `/studio/{file}`; no key needed to load the page (it asks for one).
pub(crate) fn studio_router() -> Router {
    Router::new()
        .route("/", get(index))
        .route("/studio/{file}", get(asset))
}

/// The files change with the binary, so browsers revalidate on every load rather than keep a
/// studio older than the service it talks to.
const CACHE: &str = "no-cache";

async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, CACHE),
        ],
        INDEX,
    )
        .into_response()
}

async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, media_type, body)) => (
            [
                (header::CONTENT_TYPE, *media_type),
                (header::CACHE_CONTROL, CACHE),
            ],
            *body,
        )
            .into_response(),
        None => ApiError::not_found_route().into_response(),
    }
}
