//! `GET /v1/openapi.json`: the interface, its paths from the route annotations in `api.rs` and
//! `preview.rs`, its components the JSON Schemas derived from the wire types (`caption-core`'s
//! and the service's own in `wire.rs`), the same schemas whose limits the validators read.

use caption_core::{
    Config, ConfigPatch, CreateJobResponse, Template, TemplateSummary, UploadDescriptor, Word,
    schema_generator,
};
use serde_json::{Map, Value};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::preview::PreviewBody;
use crate::wire::{GenerateAnswer, GenerateBody, GenerateJobView, TranscriptBody, TranscriptView};

/// Adds the `x-api-key` scheme.
struct ApiKeyScheme;

impl Modify for ApiKeyScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("x-api-key"))),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Caption transcription and video generation",
        version = "1.0.0",
        description = "Transcribes speech into timed words and burns animated word-by-word \
            captions into videos. Every /v1 endpoint except this document needs an x-api-key \
            header. Errors are {\"error\": {\"code\", \"message\"}}.\n\n\
            Webhooks: POST /transcript and POST /generate take an optional `webhook_url`. When \
            the work ends, the service POSTs a JSON event `{\"id\", \"type\", \"job_id\", \
            \"status\", \"download_url\"?, \"error\"?, \"created_at\"}` (type \
            `transcript.completed`, `transcript.failed`, `generate.completed` or \
            `generate.failed`) with the header `x-captions-signature: t=<unix seconds>,v1=<hex \
            HMAC-SHA256 of \"<t>.<raw body>\" keyed by the service's webhook secret>`. Any 2xx \
            answer accepts it; otherwise it is retried with exponential backoff for a day. \
            Delivery is at least once: deduplicate on `id`."
    ),
    paths(
        crate::api::create_transcript,
        crate::api::get_transcript,
        crate::api::cancel_transcript,
        crate::api::generate,
        crate::api::get_generate,
        crate::api::cancel_generate,
        crate::api::list_templates,
        crate::api::get_template,
        crate::api::signed_url,
        crate::api::list_fonts,
        crate::preview::preview,
    ),
    modifiers(&ApiKeyScheme),
    tags((name = "captions"))
)]
pub(crate) struct ApiDoc;

/// The document served at `/v1/openapi.json` (OpenAPI 3.1), with [`schemas`] as its
/// components.
///
/// ```
/// let document = caption_http::openapi();
/// assert!(document["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")));
/// assert!(document["paths"]["/v1/transcript"]["post"].is_object());
/// let config = &document["components"]["schemas"]["Config"];
/// assert_eq!(config["properties"]["fontWeight"]["maximum"], 900);
/// ```
pub fn openapi() -> Value {
    let mut document = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
    if let Some(document) = document.as_object_mut() {
        let components = document
            .entry("components")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(components) = components.as_object_mut() {
            components.insert("schemas".to_owned(), Value::Object(schemas()));
        }
    }
    document
}

/// The document's named schemas, derived from the types the service reads and writes: the
/// request and response bodies and everything they refer to, keyed by name.
pub fn schemas() -> Map<String, Value> {
    let mut generator = schema_generator();
    // The service's bodies, which carry core types and add the service's extensions: they take
    // the interface's names (`TranscriptRequest`, `GenerateRequest`, ...).
    generator.subschema_for::<TranscriptBody>();
    generator.subschema_for::<GenerateBody>();
    generator.subschema_for::<TranscriptView>();
    generator.subschema_for::<GenerateAnswer>();
    generator.subschema_for::<GenerateJobView>();
    generator.subschema_for::<PreviewBody>();
    generator.subschema_for::<crate::error::Body<'static>>();
    // Core types served as they are.
    generator.subschema_for::<CreateJobResponse>();
    generator.subschema_for::<Template>();
    generator.subschema_for::<TemplateSummary>();
    generator.subschema_for::<UploadDescriptor>();
    generator.subschema_for::<Word>();
    generator.subschema_for::<Config>();
    generator.subschema_for::<ConfigPatch>();
    generator.take_definitions(true)
}
