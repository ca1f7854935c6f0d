//! `POST /v1/preview`: one caption frame as a PNG, drawn as a burn would draw it.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use caption_core::{ValidationErrors, parse_generate_request};
use caption_engine::PreviewFrame;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::api::{AppState, JsonBody};
use crate::{ApiError, openapi};

/// Largest side of a preview frame, pixels (4K UHD's long side).
const MAX_SIDE_PX: u64 = 3840;
/// Largest preview frame, pixels (4K UHD).
const MAX_PIXELS: u64 = 3840 * 2160;

/// Body of `POST /preview`.
#[derive(Serialize, ToSchema)]
#[schema(as = PreviewRequest)]
pub(crate) struct PreviewRequestSchema {
    /// The words, as in `POST /generate` (default: none, which draws an empty frame).
    #[schema(max_items = 200000)]
    words: Option<Vec<openapi::WordSchema>>,
    /// A partial config over the template, as in `POST /generate`.
    config: Option<openapi::ConfigPatchSchema>,
    /// The template `config` overrides (default: the default template).
    #[serde(rename = "templateId")]
    #[schema(min_length = 1, max_length = 100)]
    template_id: Option<String>,
    /// The moment drawn, seconds (default: the middle of the first word).
    #[schema(nullable = false, minimum = 0, maximum = 86400)]
    at: Option<f64>,
    /// Frame width in pixels, the video's (or a smaller one of the same shape: sizes scale
    /// with the shorter side). Default 1080.
    #[schema(nullable = false, minimum = 16, maximum = 3840)]
    width: Option<u32>,
    /// Frame height in pixels. Default 1920. At most 3840 × 2160 pixels in all.
    #[schema(nullable = false, minimum = 16, maximum = 3840)]
    height: Option<u32>,
}

/// The frame fields of a preview body: `width`, `height` and `at`.
fn frame_fields(
    map: &Map<String, Value>,
    words_start_s: Option<(f64, f64)>,
) -> Result<PreviewFrame, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let mut side = |name: &str, default: u32| match map.get(name) {
        None | Some(Value::Null) => default,
        Some(v) => match v.as_u64() {
            Some(n) if (16..=MAX_SIDE_PX).contains(&n) => n as u32,
            _ => {
                errors.push(name, format!("must be an integer from 16 to {MAX_SIDE_PX}"));
                default
            }
        },
    };
    let width_px = side("width", 1080);
    let height_px = side("height", 1920);
    if u64::from(width_px) * u64::from(height_px) > MAX_PIXELS {
        errors.push(
            "width",
            format!("width × height must be at most {MAX_PIXELS} pixels (3840 × 2160)"),
        );
    }
    let default_at_s = words_start_s.map_or(0.0, |(start, end)| (start + end) / 2.0);
    let at_s = match map.get("at") {
        None | Some(Value::Null) => default_at_s,
        Some(v) => match v.as_f64() {
            Some(t) if t.is_finite() && (0.0..=86400.0).contains(&t) => t,
            _ => {
                errors.push("at", "must be a number of seconds from 0 to 86400");
                0.0
            }
        },
    };
    if errors.is_empty() {
        Ok(PreviewFrame::new(width_px, height_px, at_s))
    } else {
        Err(errors)
    }
}

#[utoipa::path(
    post, path = "/v1/preview", tag = "captions",
    summary = "One caption frame as a PNG, drawn as POST /generate would burn it",
    description = "Takes the words, config and templateId of a generate request (validated by \
        the same rules, with the same field paths in a 422) plus the frame's `width`, `height` \
        and the moment `at`, and answers a PNG of that size whose pixels are the caption alone \
        (transparent elsewhere), to lay over the video's frame at that moment.",
    request_body = PreviewRequestSchema,
    responses(
        (status = 200, description = "The frame", content_type = "image/png", body = Vec<u8>),
        (status = 400, description = "Malformed JSON", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such template", body = openapi::ErrorBodySchema),
        (status = 413, description = "Body too large", body = openapi::ErrorBodySchema),
        (status = 422, description = "A field breaks a rule", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn preview(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let Value::Object(map) = &body else {
        return Err(ApiError::invalid(&ValidationErrors::one(
            "body",
            "must be an object",
        )));
    };
    // The style fields are a generate request's, checked by the same walker (same paths and
    // rules); the input is the only field a preview does not take.
    let mut generate_shaped = Map::new();
    generate_shaped.insert("input".to_owned(), Value::String("preview".to_owned()));
    generate_shaped.insert(
        "words".to_owned(),
        map.get("words")
            .cloned()
            .unwrap_or(Value::Array(Vec::new())),
    );
    for name in ["config", "templateId"] {
        if let Some(v) = map.get(name) {
            generate_shaped.insert(name.to_owned(), v.clone());
        }
    }
    let style = parse_generate_request(&Value::Object(generate_shaped));
    let first_word = style
        .as_ref()
        .ok()
        .and_then(|r| r.words.first())
        .map(|w| (w.start, w.end));
    let (request, frame) = match (style, frame_fields(map, first_word)) {
        (Ok(request), Ok(frame)) => (request, frame),
        (style, frame) => {
            let mut errors = ValidationErrors::default();
            for e in [style.err(), frame.err()].into_iter().flatten() {
                for problem in e.iter() {
                    errors.push(problem.path.clone(), problem.rule.clone());
                }
            }
            return Err(ApiError::invalid(&errors));
        }
    };
    let engine = state.engine().clone();
    let png = tokio::task::spawn_blocking(move || {
        let config = engine.resolve_config(&request)?;
        engine.preview_png(&request.words, &config, frame)
    })
    .await
    .map_err(|e| caption_engine::Error::Internal(format!("preview task: {e}")))??;
    Ok((
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        png,
    )
        .into_response())
}
