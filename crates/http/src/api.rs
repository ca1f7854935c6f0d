//! The seven endpoints. Handlers only translate: HTTP in, engine call, HTTP out; every rule
//! lives in the engine and in `caption-core`'s validators.

use std::collections::HashMap;

use axum::extract::State;
use axum::{Extension, Json};
use caption_core::{
    Checked, CreateJobResponse, GenerateRequest, GenerateResponse, Template, TemplateSummary,
    UnknownFields, UploadDescriptor, ValidationErrors, parse_generate_request_with,
    parse_transcript_request,
};
use caption_engine::Engine;
use serde_json::Value;

use crate::limits::{JobKind, KeyId};
use crate::state::{AppState, JsonBody, PathParam, QueryParams};
use crate::wire::{self, GenerateAnswer, GenerateJobView, TranscriptView};
use crate::{ApiError, FieldProblem};

/// Longest file name `/signedUrl` takes (the key keeps at most 100 characters of it).
const MAX_FILE_NAME_CHARS: usize = 1024;

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
    request_body = wire::TranscriptBodyRef,
    responses(
        (status = 200, description = "The job was queued", body = wire::CreateJobResponseRef),
        (status = 400, description = "Malformed JSON", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No uploaded file with that identifier", body = wire::ErrorBodyRef),
        (status = 413, description = "Body too large", body = wire::ErrorBodyRef),
        (status = 422, description = "A field breaks a rule", body = wire::ErrorBodyRef),
        (status = 429, description = "This API key has as many jobs queued or running as it may (code `busy`, `Retry-After`)", body = wire::ErrorBodyRef),
        (status = 503, description = "Storage unavailable", body = wire::ErrorBodyRef),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn create_transcript(
    State(state): State<AppState>,
    Extension(key): Extension<KeyId>,
    JsonBody(body): JsonBody,
) -> Result<Json<CreateJobResponse>, ApiError> {
    let (request, webhook_url) = match (parse_transcript_request(&body), webhook_url(&body)) {
        (Ok(request), Ok(webhook_url)) => (request, webhook_url),
        (request, webhook) => return Err(all_problems([request.err(), webhook.err()])),
    };
    // A bad request gets its own error before the key's limit is looked at.
    state
        .engine
        .check_transcription(&request, webhook_url.as_deref())
        .await?;
    let room = state.limits.admit_job(key, &state.engine).await?;
    let job_id = state
        .engine
        .submit_transcription_with(&request, webhook_url.as_deref())
        .await?;
    room.submitted(job_id.clone(), JobKind::Transcript);
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

#[utoipa::path(
    get, path = "/v1/transcript/{jobId}", tag = "captions",
    summary = "A transcription job's status, and its words once COMPLETED",
    params(("jobId" = String, Path, description = "The job_id from POST /transcript")),
    responses(
        (status = 200, description = "The job", body = wire::TranscriptViewRef),
        (status = 400, description = "Malformed path", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such job", body = wire::ErrorBodyRef),
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
        (status = 200, description = "The job, now FAILED with code `cancelled`", body = wire::TranscriptViewRef),
        (status = 400, description = "Malformed path", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such job", body = wire::ErrorBodyRef),
        (status = 409, description = "The job already ended (code `already_finished`)", body = wire::ErrorBodyRef),
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
    request_body = wire::GenerateBodyRef,
    responses(
        (status = 200, description = "The captioned video is stored (or, with async, queued)", body = wire::GenerateAnswerRef),
        (status = 400, description = "Malformed JSON", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such file or template", body = wire::ErrorBodyRef),
        (status = 413, description = "Body too large", body = wire::ErrorBodyRef),
        (status = 422, description = "A field breaks a rule, or the file is not a usable video", body = wire::ErrorBodyRef),
        (status = 429, description = "Every generate slot is busy, or this API key's own limit of generates or jobs is reached (code `busy`, `Retry-After`); retry later", body = wire::ErrorBodyRef),
        (status = 503, description = "Storage unavailable", body = wire::ErrorBodyRef),
    ),
    security(("api_key" = []))
)]
pub(crate) async fn generate(
    State(state): State<AppState>,
    Extension(key): Extension<KeyId>,
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
    // A bad request (no such input, a template or font missing, a webhook URL refused) gets
    // its own error before any limit is looked at: never `busy`.
    state
        .engine
        .check_generate(&request, webhook_url.as_deref())
        .await?;
    if is_async {
        let room = state.limits.admit_job(key, &state.engine).await?;
        let (job_id, download_url) = state
            .engine
            .generate_async(request, webhook_url.as_deref())
            .await?;
        room.submitted(job_id.clone(), JobKind::Generate);
        return Ok(Json(GenerateAnswer {
            download_url,
            job_id: Some(job_id),
            warnings,
        }));
    }
    let _slot = state.limits.start_generate(key)?;
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

#[utoipa::path(
    get, path = "/v1/generate/{jobId}", tag = "captions",
    summary = "A background generate's status and progress",
    params(("jobId" = String, Path, description = "The job_id from POST /generate with \"async\": true")),
    responses(
        (status = 200, description = "The job", body = wire::GenerateJobRef),
        (status = 400, description = "Malformed path", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such job", body = wire::ErrorBodyRef),
        (status = 503, description = "Storage unavailable", body = wire::ErrorBodyRef),
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
        (status = 200, description = "The job, now FAILED with code `cancelled`", body = wire::GenerateJobRef),
        (status = 400, description = "Malformed path", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such job", body = wire::ErrorBodyRef),
        (status = 409, description = "The job already ended (code `already_finished`)", body = wire::ErrorBodyRef),
        (status = 503, description = "Storage unavailable", body = wire::ErrorBodyRef),
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
        (status = 200, description = "Every template", body = Vec<wire::TemplateSummaryRef>),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
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
        (status = 200, description = "The template", body = wire::TemplateRef),
        (status = 400, description = "Malformed path", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 404, description = "No such template", body = wire::ErrorBodyRef),
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
        (status = 200, description = "POST the fields, then the file (last), as multipart/form-data to url", body = wire::UploadDescriptorRef),
        (status = 400, description = "Malformed query", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 422, description = "No file name", body = wire::ErrorBodyRef),
        (status = 503, description = "Storage unavailable", body = wire::ErrorBodyRef),
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
        ("lang" = Option<String>, Query, pattern = "^([A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*)?$", description = "ISO 639-1 code (`en`) or tag (`zh-cn`), in any case, `_` for `-` accepted; `language` is accepted too. Without it (or empty), every font."),
    ),
    responses(
        (status = 200, description = "Font family names", body = Vec<String>),
        (status = 400, description = "Malformed query", body = wire::ErrorBodyRef),
        (status = 401, description = "Missing or wrong x-api-key", body = wire::ErrorBodyRef),
        (status = 422, description = "Unknown language code", body = wire::ErrorBodyRef),
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
