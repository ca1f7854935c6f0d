//! The seven endpoints. Handlers only translate: HTTP in, engine call, HTTP out; every rule
//! lives in the engine and in `caption-core`'s validators.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Request, State};
use axum::http::{StatusCode, header};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use bytes::Bytes;
use caption_core::{
    Checked, CreateJobResponse, GenerateRequest, GenerateResponse, JobError, JobStatus, Template,
    TemplateSummary, TranscriptResult, UnknownFields, UploadDescriptor, ValidationErrors,
    parse_generate_request_with, parse_transcript_request,
};
use caption_engine::{Engine, GenerateStatus, TranscriptionStatus};
use caption_store::LocalAuthority;
use serde::Serialize;
use serde_json::Value;

use crate::auth::{ApiKeys, require_api_key};
use crate::storage_routes::{StorageRoutes, storage_router};
use crate::{ApiError, FieldProblem, openapi, preview, studio};

/// Longest file name `/signedUrl` takes (the key keeps at most 100 characters of it).
const MAX_FILE_NAME_CHARS: usize = 1024;

/// What the routes share: the engine, the accepted keys and the limits.
#[derive(Debug, Clone)]
pub struct AppState {
    engine: Engine,
    keys: ApiKeys,
    local: Option<LocalAuthority>,
    max_body_bytes: usize,
    sync_generate_limit: Duration,
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
        }
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

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

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
    let document = Bytes::from(openapi().to_pretty_json().unwrap_or_default());
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
pub(crate) struct PathParam<T>(T);

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
pub(crate) struct QueryParams<T>(T);

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            rejection.body_text(),
        )
    }
}

/// The first of `names` present in the query, empty values counting as absent.
fn first_param<'q>(query: &'q HashMap<String, String>, names: &[&str]) -> Option<&'q str> {
    names
        .iter()
        .find_map(|name| query.get(*name))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

#[utoipa::path(
    post, path = "/v1/transcript", tag = "captions",
    summary = "Queue the transcription of an uploaded file",
    request_body = openapi::TranscriptRequestSchema,
    responses(
        (status = 200, description = "The job was queued", body = openapi::CreateJobResponseSchema),
        (status = 400, description = "Malformed JSON", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No uploaded file with that identifier", body = openapi::ErrorBodySchema),
        (status = 413, description = "Body too large", body = openapi::ErrorBodySchema),
        (status = 422, description = "A field breaks a rule", body = openapi::ErrorBodySchema),
        (status = 503, description = "Storage unavailable", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn create_transcript(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<CreateJobResponse>, ApiError> {
    let (request, webhook_url) = match (parse_transcript_request(&body), webhook_url(&body)) {
        (Ok(request), Ok(webhook_url)) => (request, webhook_url),
        (request, webhook) => return Err(all_problems([request.err(), webhook.err()])),
    };
    let job_id = state
        .engine
        .submit_transcription_with(&request.input, &request.lang, webhook_url.as_deref())
        .await?;
    Ok(Json(CreateJobResponse { job_id }))
}

/// One 422 listing the problems of every part of a request that failed.
fn all_problems<const N: usize>(parts: [Option<ValidationErrors>; N]) -> ApiError {
    let mut all = ValidationErrors::default();
    for errors in parts.into_iter().flatten() {
        all.0.extend(errors.0);
    }
    ApiError::invalid(&all)
}

/// `webhook_url` of a request body: absent, null or a non-empty string.
fn webhook_url(body: &Value) -> Result<Option<String>, ValidationErrors> {
    match body.get("webhook_url") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(url)) if !url.is_empty() => Ok(Some(url.clone())),
        Some(_) => Err(ValidationErrors::one(
            "webhook_url",
            "must be an http or https URL",
        )),
    }
}

/// `async` of a generate body: absent, null or a boolean.
fn async_flag(body: &Value) -> Result<bool, ValidationErrors> {
    match body.get("async") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(_) => Err(ValidationErrors::one("async", "must be true or false")),
    }
}

/// A generate body read whole: every problem of the request, the webhook and the async flag
/// in one 422. Unknown fields are warnings, or errors with `?strict=true`.
fn generate_body(
    engine: &Engine,
    body: &Value,
    query: &HashMap<String, String>,
) -> Result<(Checked<GenerateRequest>, Option<String>, bool), ApiError> {
    let unknown = match query.get("strict").map(String::as_str) {
        None | Some("false" | "0") => UnknownFields::Warn,
        Some("true" | "1" | "") => UnknownFields::Deny,
        Some(_) => {
            return Err(ApiError::invalid(&ValidationErrors::one(
                "strict",
                "must be true or false",
            )));
        }
    };
    let request = parse_generate_request_with(body, unknown);
    let webhook = webhook_url(body);
    let flag = async_flag(body);
    match (request, webhook, flag) {
        (Ok(request), Ok(webhook), Ok(flag)) => Ok((request, webhook, flag)),
        (request, webhook, flag) => {
            // A font that is not installed is reported with the rest (a valid request has it
            // checked when its config is resolved).
            let font = body
                .pointer("/config/font")
                .and_then(Value::as_str)
                .filter(|f| !f.trim().is_empty())
                .and_then(|f| engine.missing_font_rule(f).ok().flatten())
                .map(|rule| ValidationErrors::one("config.font", rule));
            Err(all_problems([
                request.err(),
                webhook.err(),
                flag.err(),
                font,
            ]))
        }
    }
}

/// A transcription job on the wire: the interface's fields plus `duration_s`.
#[derive(Serialize)]
pub(crate) struct TranscriptView {
    #[serde(flatten)]
    result: TranscriptResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_s: Option<f64>,
}

impl From<TranscriptionStatus> for TranscriptView {
    fn from(status: TranscriptionStatus) -> Self {
        Self {
            result: status.result,
            duration_s: status.duration_s,
        }
    }
}

#[utoipa::path(
    get, path = "/v1/transcript/{jobId}", tag = "captions",
    summary = "A transcription job's status, and its words once COMPLETED",
    params(("jobId" = String, Path, description = "The job_id from POST /transcript")),
    responses(
        (status = 200, description = "The job", body = openapi::TranscriptResultSchema),
        (status = 400, description = "Malformed path", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such job", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn get_transcript(
    State(state): State<AppState>,
    PathParam(job_id): PathParam<String>,
) -> Result<Json<TranscriptView>, ApiError> {
    Ok(Json(
        state.engine.transcription_status(&job_id).await?.into(),
    ))
}

#[utoipa::path(
    delete, path = "/v1/transcript/{jobId}", tag = "captions",
    summary = "Cancel a queued or running transcription",
    description = "The job fails at once with error code `cancelled` and its worker stops \
        within about a second. Its webhook, if it has one, gets a `transcript.failed` event.",
    params(("jobId" = String, Path, description = "The job_id from POST /transcript")),
    responses(
        (status = 200, description = "The job, now FAILED with code `cancelled`", body = openapi::TranscriptResultSchema),
        (status = 400, description = "Malformed path", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such job", body = openapi::ErrorBodySchema),
        (status = 409, description = "The job already ended (code `already_finished`)", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn cancel_transcript(
    State(state): State<AppState>,
    PathParam(job_id): PathParam<String>,
) -> Result<Json<TranscriptView>, ApiError> {
    Ok(Json(
        state.engine.cancel_transcription(&job_id).await?.into(),
    ))
}

/// `POST /generate`'s answer: the link, and the job id of an async request.
#[derive(Serialize)]
pub(crate) struct GenerateAnswer {
    download_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<String>,
    /// Unknown fields of the request, ignored (`[{path, rule}]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<FieldProblem>,
}

#[utoipa::path(
    post, path = "/v1/generate", tag = "captions",
    summary = "Burn captions into an uploaded video; returns a download link",
    description = "Synchronous by default: the answer comes when the video is stored. A \
        synchronous request that takes longer than the service's limit (`sync_generate_limit_s`, \
        default 50 s) still completes, but proxies and load balancers often cut connections \
        after 60 s: for long inputs send `\"async\": true`, which answers at once with the \
        link and a `job_id` to follow at GET /v1/generate/{jobId} (the link answers 404 until \
        the file exists), and/or a `webhook_url` to be told when it ends.",
    params(
        ("strict" = Option<bool>, Query, description = "Unknown fields are a 422 instead of `warnings` in the answer"),
    ),
    request_body = openapi::GenerateRequestSchema,
    responses(
        (status = 200, description = "The captioned video is stored (or, with async, queued)", body = openapi::GenerateResponseSchema),
        (status = 400, description = "Malformed JSON", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such file or template", body = openapi::ErrorBodySchema),
        (status = 413, description = "Body too large", body = openapi::ErrorBodySchema),
        (status = 422, description = "A field breaks a rule, or the file is not a usable video", body = openapi::ErrorBodySchema),
        (status = 429, description = "Every generate slot is busy; retry later", body = openapi::ErrorBodySchema),
        (status = 503, description = "Storage unavailable", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn generate(
    State(state): State<AppState>,
    QueryParams(query): QueryParams<HashMap<String, String>>,
    JsonBody(body): JsonBody,
) -> Result<Json<GenerateAnswer>, ApiError> {
    let (checked, webhook_url, is_async) = generate_body(&state.engine, &body, &query)?;
    let request = checked.value;
    let warnings: Vec<FieldProblem> = checked
        .warnings
        .iter()
        .map(|w| FieldProblem {
            path: w.path.clone(),
            rule: w.rule.clone(),
        })
        .collect();
    if is_async {
        let (job_id, download_url) = state
            .engine
            .generate_async(request, webhook_url.as_deref())
            .await?;
        return Ok(Json(GenerateAnswer {
            download_url,
            job_id: Some(job_id),
            warnings,
        }));
    }
    let input = request.input.clone();
    let started = tokio::time::Instant::now();
    let burn = state.engine.generate_with(request, webhook_url.as_deref());
    tokio::pin!(burn);
    let limit = state.sync_generate_limit;
    let GenerateResponse { download_url } = tokio::select! {
        done = &mut burn => done?,
        () = tokio::time::sleep(limit) => {
            tracing::warn!(
                input, limit_s = limit.as_secs(),
                "a synchronous generate outlives the limit; it goes on, but long inputs should use \"async\": true"
            );
            burn.await?
        }
    };
    tracing::debug!(
        input,
        elapsed_s = started.elapsed().as_secs_f64(),
        "synchronous generate done"
    );
    Ok(Json(GenerateAnswer {
        download_url,
        job_id: None,
        warnings,
    }))
}

/// A background generate on the wire.
#[derive(Serialize)]
pub(crate) struct GenerateJobView {
    job_id: String,
    status: JobStatus,
    progress: u8,
    download_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<JobError>,
}

impl From<GenerateStatus> for GenerateJobView {
    fn from(status: GenerateStatus) -> Self {
        Self {
            job_id: status.job_id,
            status: status.status,
            progress: status.progress,
            download_url: status.download_url,
            error: status.error,
        }
    }
}

#[utoipa::path(
    get, path = "/v1/generate/{jobId}", tag = "captions",
    summary = "A background generate's status and progress",
    params(("jobId" = String, Path, description = "The job_id from POST /generate with \"async\": true")),
    responses(
        (status = 200, description = "The job", body = openapi::GenerateJobSchema),
        (status = 400, description = "Malformed path", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such job", body = openapi::ErrorBodySchema),
        (status = 503, description = "Storage unavailable", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn get_generate(
    State(state): State<AppState>,
    PathParam(job_id): PathParam<String>,
) -> Result<Json<GenerateJobView>, ApiError> {
    Ok(Json(state.engine.generate_status(&job_id).await?.into()))
}

#[utoipa::path(
    delete, path = "/v1/generate/{jobId}", tag = "captions",
    summary = "Cancel a queued or running background generate",
    description = "The job fails at once with error code `cancelled` and its burn stops.",
    params(("jobId" = String, Path, description = "The job_id from POST /generate with \"async\": true")),
    responses(
        (status = 200, description = "The job, now FAILED with code `cancelled`", body = openapi::GenerateJobSchema),
        (status = 400, description = "Malformed path", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such job", body = openapi::ErrorBodySchema),
        (status = 409, description = "The job already ended (code `already_finished`)", body = openapi::ErrorBodySchema),
        (status = 503, description = "Storage unavailable", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn cancel_generate(
    State(state): State<AppState>,
    PathParam(job_id): PathParam<String>,
) -> Result<Json<GenerateJobView>, ApiError> {
    Ok(Json(state.engine.cancel_generate(&job_id).await?.into()))
}

#[utoipa::path(
    get, path = "/v1/templates", tag = "captions",
    summary = "The caption style templates: id and name of each",
    responses(
        (status = 200, description = "Every template", body = Vec<openapi::TemplateSummarySchema>),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn list_templates(State(state): State<AppState>) -> Json<Vec<TemplateSummary>> {
    Json(state.engine.templates())
}

#[utoipa::path(
    get, path = "/v1/templates/{templateId}", tag = "captions",
    summary = "One template with its full config",
    params(("templateId" = String, Path, description = "A template id from GET /templates")),
    responses(
        (status = 200, description = "The template", body = openapi::TemplateSchema),
        (status = 400, description = "Malformed path", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 404, description = "No such template", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn get_template(
    State(state): State<AppState>,
    PathParam(template_id): PathParam<String>,
) -> Result<Json<Template>, ApiError> {
    Ok(Json(state.engine.template(&template_id)?))
}

#[utoipa::path(
    get, path = "/v1/signedUrl", tag = "captions",
    summary = "An upload descriptor: a file identifier, a URL and the form fields to POST",
    params(
        ("fileName" = String, Query, min_length = 1, max_length = 1024, description = "Name of the file to upload (`filename` and `name` are accepted too)"),
    ),
    responses(
        (status = 200, description = "POST the fields, then the file (last), as multipart/form-data to url", body = openapi::UploadDescriptorSchema),
        (status = 400, description = "Malformed query", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 422, description = "No file name", body = openapi::ErrorBodySchema),
        (status = 503, description = "Storage unavailable", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn signed_url(
    State(state): State<AppState>,
    QueryParams(query): QueryParams<HashMap<String, String>>,
) -> Result<Json<UploadDescriptor>, ApiError> {
    let name = first_param(&query, &["fileName", "filename", "name"]).ok_or_else(|| {
        ApiError::invalid(&ValidationErrors::one(
            "fileName",
            "is required (the name of the file to upload)",
        ))
    })?;
    if name.chars().count() > MAX_FILE_NAME_CHARS {
        return Err(ApiError::invalid(&ValidationErrors::one(
            "fileName",
            format!("must be at most {MAX_FILE_NAME_CHARS} characters"),
        )));
    }
    let descriptor = state
        .engine
        .storage()
        .upload_descriptor(name)
        .await
        .map_err(caption_engine::Error::from)?;
    Ok(Json(descriptor))
}

#[utoipa::path(
    get, path = "/v1/fonts", tag = "captions",
    summary = "Installed font families, optionally only those covering a language",
    params(
        ("lang" = Option<String>, Query, pattern = "^([a-z]{2,3}(-[a-z0-9]{2,8})*)?$", description = "ISO 639-1 code (`en`) or tag (`zh-cn`); `language` is accepted too. Without it (or empty), every font."),
    ),
    responses(
        (status = 200, description = "Font family names", body = Vec<String>),
        (status = 400, description = "Malformed query", body = openapi::ErrorBodySchema),
        (status = 401, description = "Missing or wrong x-api-key", body = openapi::ErrorBodySchema),
        (status = 422, description = "Unknown language code", body = openapi::ErrorBodySchema),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn list_fonts(
    State(state): State<AppState>,
    QueryParams(query): QueryParams<HashMap<String, String>>,
) -> Result<Json<Vec<String>>, ApiError> {
    let lang = first_param(&query, &["lang", "language"]).map(str::to_owned);
    // Font discovery reads fontconfig's caches from disk.
    let engine = state.engine.clone();
    let fonts = tokio::task::spawn_blocking(move || engine.fonts(lang.as_deref()))
        .await
        .map_err(|e| caption_engine::Error::Internal(format!("font listing task: {e}")))??;
    Ok(Json(fonts))
}
