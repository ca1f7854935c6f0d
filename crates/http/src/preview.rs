//! `POST /v1/preview`: one caption frame as a PNG, drawn as a burn would draw it.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use caption_core::{ConfigPatch, ValidationErrors, Word, parse_generate_request, rules};
use caption_engine::PreviewFrame;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::ApiError;
use crate::state::{AppState, JsonBody};
use crate::wire::{self, component_refs};

/// Smallest side of a preview frame, pixels.
const MIN_SIDE_PX: u64 = 16;
/// Largest side of a preview frame, pixels (4K UHD's long side).
const MAX_SIDE_PX: u64 = 3840;
/// Largest preview frame, pixels (4K UHD).
const MAX_PIXELS: u64 = 3840 * 2160;

/// Body of `POST /preview`, validated as loose JSON (the style fields by the generate request's
/// walker, the frame fields below); this type gives the document its schema.
#[derive(JsonSchema)]
#[schemars(rename = "PreviewRequest")]
#[expect(dead_code, reason = "describes a body that is validated as loose JSON")]
pub(crate) struct PreviewBody {
    /// The words, as in `POST /generate` (default: none, which draws an empty frame).
    #[serde(default)]
    #[schemars(length(max = rules::MAX_WORDS))]
    words: Option<Vec<Word>>,
    /// A partial config over the template, as in `POST /generate`.
    #[serde(default)]
    config: Option<ConfigPatch>,
    /// The template `config` overrides (default: the default template).
    #[serde(default, rename = "templateId")]
    #[schemars(length(min = 1, max = rules::MAX_TEMPLATE_ID_CHARS))]
    template_id: Option<String>,
    /// The moment drawn, seconds (default: the middle of the first word).
    #[serde(default)]
    #[schemars(range(min = rules::WORD_TIME_S.min, max = rules::WORD_TIME_S.max))]
    at: Option<f64>,
    /// Frame width in pixels, the video's (or a smaller one of the same shape: sizes scale
    /// with the shorter side). Default 1080.
    #[serde(default)]
    #[schemars(range(min = MIN_SIDE_PX, max = MAX_SIDE_PX))]
    width: Option<u32>,
    /// Frame height in pixels. Default 1920. At most 3840 × 2160 pixels in all.
    #[serde(default)]
    #[schemars(range(min = MIN_SIDE_PX, max = MAX_SIDE_PX))]
    height: Option<u32>,
}

component_refs!(PreviewBodyRef => PreviewBody);

/// The frame fields of a preview body: `width`, `height` and `at`.
fn frame_fields(
    map: &Map<String, Value>,
    words_start_s: Option<(f64, f64)>,
) -> Result<PreviewFrame, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let mut side = |name: &str, default: u32| match map.get(name) {
        None | Some(Value::Null) => default,
        Some(v) => match v.as_u64() {
            Some(n) if (MIN_SIDE_PX..=MAX_SIDE_PX).contains(&n) => n as u32,
            _ => {
                errors.push(
                    name,
                    format!("must be an integer from {MIN_SIDE_PX} to {MAX_SIDE_PX}"),
                );
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
            Some(t)
                if t.is_finite()
                    && (rules::WORD_TIME_S.min..=rules::WORD_TIME_S.max).contains(&t) =>
            {
                t
            }
            _ => {
                errors.push(
                    "at",
                    format!(
                        "must be a number of seconds from {} to {}",
                        rules::WORD_TIME_S.min,
                        rules::WORD_TIME_S.max
                    ),
                );
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
    request_body = PreviewBodyRef,
    responses(
        (status = 200, description = "The frame", content_type = "image/png", body = Vec<u8>),
        (status = 400, description = "Malformed JSON", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such template", body = wire::ErrorBodyRef),
        (status = 413, description = "Body too large", body = wire::ErrorBodyRef),
        (status = 422, description = "A field breaks a rule", body = wire::ErrorBodyRef),
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
