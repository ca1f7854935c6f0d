//! `GET /v1/openapi.json`: the interface, generated from the route annotations in `api.rs` and
//! the schema types below.
//!
//! The wire types live in `caption-core`, which stays serde-only; these mirrors carry the same
//! serde names and add what a schema needs (ranges, enums, descriptions). The tests in
//! `tests/openapi.rs` check every mirror against real serialised values of the core types, so
//! a renamed field cannot drift unnoticed.
#![allow(
    dead_code,
    reason = "the mirrors exist for their derived schemas and are never constructed"
)]

use std::collections::BTreeMap;

use caption_core::{
    CapitalizationType, DisplayEmojis, DisplayMode, DisplayWords, EffectMode, EffectType,
    SpokenMode,
};
use serde::Serialize;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ObjectBuilder, RefOr, Schema, Type};
use utoipa::{Modify, OpenApi, PartialSchema, ToSchema};

/// One transcribed word with its timing.
#[derive(Serialize, ToSchema)]
#[schema(as = Word)]
pub(crate) struct WordSchema {
    /// Start time, seconds.
    #[schema(minimum = 0, maximum = 86400)]
    start: f64,
    /// End time, seconds; not before `start`.
    #[schema(minimum = 0, maximum = 86400)]
    end: f64,
    /// The word as transcribed.
    #[schema(max_length = 1000)]
    word: String,
    /// The word with its punctuation.
    #[schema(max_length = 1000)]
    punctuated_word: String,
    /// Extension: an emoji shown with this word.
    #[schema(nullable = false, min_length = 1, max_length = 16)]
    emoji: Option<String>,
}

/// An sRGB color; channels 0–255 (fractions are rounded).
#[derive(Serialize, ToSchema)]
#[schema(as = Color)]
pub(crate) struct ColorSchema {
    #[schema(minimum = 0, maximum = 255)]
    r: f64,
    #[schema(minimum = 0, maximum = 255)]
    g: f64,
    #[schema(minimum = 0, maximum = 255)]
    b: f64,
    /// Extension: opacity, default 255.
    #[schema(nullable = false, minimum = 0, maximum = 255)]
    a: Option<f64>,
}

/// Colors of one role; several colors cycle through the video, an empty list leaves the role
/// unused.
#[derive(Serialize, ToSchema)]
#[schema(as = ColorSet)]
pub(crate) struct ColorSetSchema {
    #[schema(max_items = 64)]
    colors: Vec<ColorSchema>,
}

/// The six color roles.
#[derive(Serialize, ToSchema)]
#[schema(as = Colors)]
pub(crate) struct ColorsSchema {
    /// Text of words not yet spoken.
    #[serde(rename = "defaultColor")]
    default_color: ColorSetSchema,
    /// Text of words already spoken (see `spokenMode`).
    #[serde(rename = "spokenColor")]
    spoken_color: ColorSetSchema,
    /// The word being spoken (its text, or its box with `wordHasBackground`).
    #[serde(rename = "hilightColor")]
    hilight_color: ColorSetSchema,
    /// Outline.
    #[serde(rename = "strokeColor")]
    stroke_color: ColorSetSchema,
    /// Box behind words or lines with `wordHasBackground`.
    #[serde(rename = "backgroundColor")]
    background_color: ColorSetSchema,
    /// Shadow with `wordHasShadow` and `wordHasCustomShadowColor`.
    #[serde(rename = "shadowColor")]
    shadow_color: ColorSetSchema,
}

/// `colors` of a request: every role optional.
#[derive(Serialize, ToSchema)]
#[schema(as = ColorsPatch)]
pub(crate) struct ColorsPatchSchema {
    #[serde(rename = "defaultColor")]
    default_color: Option<ColorSetSchema>,
    #[serde(rename = "spokenColor")]
    spoken_color: Option<ColorSetSchema>,
    #[serde(rename = "hilightColor")]
    hilight_color: Option<ColorSetSchema>,
    #[serde(rename = "strokeColor")]
    stroke_color: Option<ColorSetSchema>,
    #[serde(rename = "backgroundColor")]
    background_color: Option<ColorSetSchema>,
    #[serde(rename = "shadowColor")]
    shadow_color: Option<ColorSetSchema>,
}

/// A string schema whose values are exactly `names`.
fn string_enum(names: &[&str], description: &str) -> Schema {
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(names.iter().copied()))
            .description(Some(description))
            .build(),
    )
}

/// Declares a string enum schema from a core mode enum's full value list.
macro_rules! mode_schema {
    ($mirror:ident, $name:literal, $core:ty, $doc:literal) => {
        pub(crate) struct $mirror;

        impl PartialSchema for $mirror {
            fn schema() -> RefOr<Schema> {
                RefOr::T(string_enum(<$core>::NAMES, $doc))
            }
        }

        impl ToSchema for $mirror {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
            }
        }

        impl Serialize for $mirror {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_unit()
            }
        }
    };
}

mode_schema!(
    DisplayModeSchema,
    "DisplayMode",
    DisplayMode,
    "Which words of the page are visible: all at once, appearing as spoken, or one at a time."
);
mode_schema!(
    DisplayWordsSchema,
    "DisplayWords",
    DisplayWords,
    "How words are grouped into pages."
);
mode_schema!(
    SpokenModeSchema,
    "SpokenMode",
    SpokenMode,
    "Which words take spokenColor."
);
mode_schema!(EffectTypeSchema, "EffectType", EffectType, "The animation.");
mode_schema!(
    EffectModeSchema,
    "EffectMode",
    EffectMode,
    "What the animation applies to."
);
mode_schema!(
    DisplayEmojisSchema,
    "DisplayEmojis",
    DisplayEmojis,
    "Where emoji are shown."
);
mode_schema!(
    CapitalizationTypeSchema,
    "CapitalizationType",
    CapitalizationType,
    "Letter case applied to every word."
);

/// The six modes of a template.
#[derive(Serialize, ToSchema)]
#[schema(as = Modes)]
pub(crate) struct ModesSchema {
    #[serde(rename = "displayMode")]
    display_mode: DisplayModeSchema,
    #[serde(rename = "displayWords")]
    display_words: DisplayWordsSchema,
    #[serde(rename = "spokenMode")]
    spoken_mode: SpokenModeSchema,
    #[serde(rename = "effectType")]
    effect_type: EffectTypeSchema,
    #[serde(rename = "effectMode")]
    effect_mode: EffectModeSchema,
    #[serde(rename = "displayEmojis")]
    display_emojis: DisplayEmojisSchema,
}

/// `modes` of a request: every mode optional.
#[derive(Serialize, ToSchema)]
#[schema(as = ModesPatch)]
pub(crate) struct ModesPatchSchema {
    #[serde(rename = "displayMode")]
    display_mode: Option<DisplayModeSchema>,
    #[serde(rename = "displayWords")]
    display_words: Option<DisplayWordsSchema>,
    #[serde(rename = "spokenMode")]
    spoken_mode: Option<SpokenModeSchema>,
    #[serde(rename = "effectType")]
    effect_type: Option<EffectTypeSchema>,
    #[serde(rename = "effectMode")]
    effect_mode: Option<EffectModeSchema>,
    #[serde(rename = "displayEmojis")]
    display_emojis: Option<DisplayEmojisSchema>,
}

/// Pixels on a reference frame whose shorter side is 1080 px, scaled with the output.
#[derive(Serialize, ToSchema)]
#[schema(as = Sizes)]
pub(crate) struct SizesSchema {
    /// Em size of the text.
    #[serde(rename = "fontSize")]
    #[schema(minimum = 1, maximum = 1000)]
    font_px: f64,
    /// Outline width.
    #[serde(rename = "strokeSize")]
    #[schema(minimum = 0, maximum = 100)]
    stroke_px: f64,
    /// Shadow blur radius.
    #[serde(rename = "blurSize")]
    #[schema(minimum = 0, maximum = 100)]
    blur_px: f64,
    /// Emoji height.
    #[serde(rename = "emojiSize")]
    #[schema(minimum = 0, maximum = 1000)]
    emoji_px: f64,
    /// Corner radius of word and line boxes.
    #[serde(rename = "backgroundRadius")]
    #[schema(minimum = 0, maximum = 500)]
    background_radius_px: f64,
}

/// `sizes` of a request: every size optional.
#[derive(Serialize, ToSchema)]
#[schema(as = SizesPatch)]
pub(crate) struct SizesPatchSchema {
    #[serde(rename = "fontSize")]
    #[schema(minimum = 1, maximum = 1000)]
    font_px: Option<f64>,
    #[serde(rename = "strokeSize")]
    #[schema(minimum = 0, maximum = 100)]
    stroke_px: Option<f64>,
    #[serde(rename = "blurSize")]
    #[schema(minimum = 0, maximum = 100)]
    blur_px: Option<f64>,
    #[serde(rename = "emojiSize")]
    #[schema(minimum = 0, maximum = 1000)]
    emoji_px: Option<f64>,
    #[serde(rename = "backgroundRadius")]
    #[schema(minimum = 0, maximum = 500)]
    background_radius_px: Option<f64>,
}

/// Centre of the caption block as fractions of the frame.
#[derive(Serialize, ToSchema)]
#[schema(as = Position)]
pub(crate) struct PositionSchema {
    #[schema(minimum = 0, maximum = 1)]
    x: f64,
    #[schema(minimum = 0, maximum = 1)]
    y: f64,
}

/// A complete style configuration, as templates carry it.
#[derive(Serialize, ToSchema)]
#[schema(as = Config)]
pub(crate) struct ConfigSchema {
    colors: ColorsSchema,
    modes: ModesSchema,
    sizes: SizesSchema,
    #[serde(rename = "linesCount")]
    #[schema(minimum = 1, maximum = 10)]
    lines_count: u32,
    #[serde(rename = "wordsPerLineCount")]
    #[schema(minimum = 1, maximum = 50)]
    words_per_line_count: u32,
    #[serde(rename = "wordHasBackground")]
    word_has_background: bool,
    #[serde(rename = "wordHasPunctuation")]
    word_has_punctuation: bool,
    #[serde(rename = "wordHasShadow")]
    word_has_shadow: bool,
    #[serde(rename = "wordHasCustomShadowColor")]
    word_has_custom_shadow_color: bool,
    #[serde(rename = "emojiAnimated")]
    emoji_animated: bool,
    #[serde(rename = "capitalizationType")]
    capitalization_type: CapitalizationTypeSchema,
    /// Extension: font family, as listed by `/fonts`.
    font: String,
    /// Extension: CSS weight.
    #[serde(rename = "fontWeight")]
    #[schema(minimum = 100, maximum = 900)]
    font_weight: u16,
    /// Extension.
    position: PositionSchema,
    /// Extension: widest line as a fraction of the frame width.
    #[serde(rename = "maxWidth")]
    #[schema(minimum = 0.1, maximum = 1)]
    max_width: f64,
}

/// The config of a generate request: every field optional; given fields replace the base
/// template's (the default template, or `templateId`'s).
#[derive(Serialize, ToSchema)]
#[schema(as = ConfigPatch)]
pub(crate) struct ConfigPatchSchema {
    colors: Option<ColorsPatchSchema>,
    modes: Option<ModesPatchSchema>,
    sizes: Option<SizesPatchSchema>,
    #[serde(rename = "linesCount")]
    #[schema(minimum = 1, maximum = 10)]
    lines_count: Option<u32>,
    #[serde(rename = "wordsPerLineCount")]
    #[schema(minimum = 1, maximum = 50)]
    words_per_line_count: Option<u32>,
    #[serde(rename = "wordHasBackground")]
    word_has_background: Option<bool>,
    #[serde(rename = "wordHasPunctuation")]
    word_has_punctuation: Option<bool>,
    #[serde(rename = "wordHasShadow")]
    word_has_shadow: Option<bool>,
    #[serde(rename = "wordHasCustomShadowColor")]
    word_has_custom_shadow_color: Option<bool>,
    #[serde(rename = "emojiAnimated")]
    emoji_animated: Option<bool>,
    #[serde(rename = "capitalizationType")]
    capitalization_type: Option<CapitalizationTypeSchema>,
    #[schema(min_length = 1, max_length = 200)]
    font: Option<String>,
    #[serde(rename = "fontWeight")]
    #[schema(minimum = 100, maximum = 900)]
    font_weight: Option<u16>,
    position: Option<PositionSchema>,
    #[serde(rename = "maxWidth")]
    #[schema(minimum = 0.1, maximum = 1)]
    max_width: Option<f64>,
}

/// A caption style with its full configuration.
#[derive(Serialize, ToSchema)]
#[schema(as = Template)]
pub(crate) struct TemplateSchema {
    id: String,
    name: String,
    config: ConfigSchema,
}

/// An entry of the template list.
#[derive(Serialize, ToSchema)]
#[schema(as = TemplateSummary)]
pub(crate) struct TemplateSummarySchema {
    id: String,
    name: String,
}

/// Body of `POST /transcript`.
#[derive(Serialize, ToSchema)]
#[schema(as = TranscriptRequest)]
pub(crate) struct TranscriptRequestSchema {
    /// The `file` identifier returned by `/signedUrl` (an object key).
    #[schema(
        min_length = 1,
        max_length = 1024,
        pattern = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}(/[A-Za-z0-9_-][A-Za-z0-9._-]{0,254})*$"
    )]
    input: String,
    /// ISO 639-1 code or `auto` (the default).
    #[schema(pattern = "^(auto|[a-z]{2})$")]
    lang: Option<String>,
    /// Extension: where to POST a signed `transcript.completed` or `transcript.failed` event
    /// when the job ends (see the document's description). Loopback, private, link-local and
    /// metadata addresses are refused (422) unless the service allows them.
    #[schema(
        nullable = false,
        min_length = 1,
        max_length = 2048,
        pattern = "^https?://"
    )]
    webhook_url: Option<String>,
}

/// Response of `POST /transcript`.
#[derive(Serialize, ToSchema)]
#[schema(as = CreateJobResponse)]
pub(crate) struct CreateJobResponseSchema {
    job_id: String,
}

/// A job's status.
#[derive(Serialize, ToSchema)]
#[schema(as = JobStatus)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum JobStatusSchema {
    InQueue,
    InProgress,
    Completed,
    Failed,
}

/// Why a job failed.
#[derive(Serialize, ToSchema)]
#[schema(as = JobError)]
pub(crate) struct JobErrorSchema {
    code: String,
    message: String,
}

/// Response of `GET /transcript/{jobId}`: words only when `COMPLETED`.
#[derive(Serialize, ToSchema)]
#[schema(as = TranscriptResult)]
pub(crate) struct TranscriptResultSchema {
    status: JobStatusSchema,
    #[schema(required = true)]
    words: Option<Vec<WordSchema>>,
    /// Extension: percent done.
    #[schema(nullable = false, minimum = 0, maximum = 100)]
    progress: Option<u8>,
    /// Extension: present on `FAILED`; code `cancelled` after DELETE.
    #[schema(nullable = false)]
    error: Option<JobErrorSchema>,
    /// Extension: length of the input in seconds, once a worker has read it.
    #[schema(nullable = false, minimum = 0)]
    duration_s: Option<f64>,
}

/// A background generate (`POST /generate` with `"async": true`).
#[derive(Serialize, ToSchema)]
#[schema(as = GenerateJob)]
pub(crate) struct GenerateJobSchema {
    job_id: String,
    status: JobStatusSchema,
    /// Percent done; 100 once the video is stored.
    #[schema(minimum = 0, maximum = 100)]
    progress: u8,
    /// Where the video is downloaded; answers 404 until the job is `COMPLETED`.
    download_url: String,
    /// Present on `FAILED`; code `cancelled` after DELETE.
    #[schema(nullable = false)]
    error: Option<JobErrorSchema>,
}

/// Body of `POST /generate`.
#[derive(Serialize, ToSchema)]
#[schema(as = GenerateRequest)]
pub(crate) struct GenerateRequestSchema {
    /// The `file` identifier returned by `/signedUrl` (an object key).
    #[schema(
        min_length = 1,
        max_length = 1024,
        pattern = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}(/[A-Za-z0-9_-][A-Za-z0-9._-]{0,254})*$"
    )]
    input: String,
    #[schema(max_items = 200000)]
    words: Vec<WordSchema>,
    config: Option<ConfigPatchSchema>,
    /// Extension: the template `config` overrides (default: the default template).
    #[serde(rename = "templateId")]
    #[schema(min_length = 1, max_length = 100)]
    template_id: Option<String>,
    /// Extension: answer at once with `download_url` and a `job_id` (follow it at
    /// `GET /generate/{jobId}`) instead of when the video is stored. The way for long inputs.
    #[serde(rename = "async")]
    #[schema(nullable = false)]
    run_async: Option<bool>,
    /// Extension: where to POST a signed `generate.completed` or `generate.failed` event when
    /// the video is stored or the burn fails. Loopback, private, link-local and metadata
    /// addresses are refused (422) unless the service allows them.
    #[schema(
        nullable = false,
        min_length = 1,
        max_length = 2048,
        pattern = "^https?://"
    )]
    webhook_url: Option<String>,
}

/// Response of `POST /generate`.
#[derive(Serialize, ToSchema)]
#[schema(as = GenerateResponse)]
pub(crate) struct GenerateResponseSchema {
    /// Where the captioned video is downloaded (with `async`, it answers 404 until stored).
    download_url: String,
    /// Extension: with `"async": true`, the job to follow at `GET /generate/{jobId}`.
    #[schema(nullable = false)]
    job_id: Option<String>,
    /// Extension: fields of the request no rule knows, ignored, each with the closest known
    /// name (send `?strict=true` to have them refused with a 422 instead).
    #[schema(nullable = false)]
    warnings: Option<Vec<FieldProblemSchema>>,
}

/// Response of `GET /signedUrl`: POST `fields` then the file (last) as multipart/form-data
/// to `url`; afterwards `file` is the `input` of `/transcript` and `/generate`.
#[derive(Serialize, ToSchema)]
#[schema(as = UploadDescriptor)]
pub(crate) struct UploadDescriptorSchema {
    file: String,
    url: String,
    /// key, bucket, Policy, X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Signature.
    fields: BTreeMap<String, String>,
}

/// One problem of a 422.
#[derive(Serialize, ToSchema)]
#[schema(as = FieldProblem)]
pub(crate) struct FieldProblemSchema {
    /// e.g. `config.colors.hilightColor.colors[0].r`.
    path: String,
    rule: String,
}

#[derive(Serialize, ToSchema)]
#[schema(as = ErrorDetail)]
pub(crate) struct ErrorDetailSchema {
    /// Stable snake_case code: `unauthorized`, `malformed_json`, `invalid_request`,
    /// `not_found`, `too_large`, `busy`, `no_audio`, `unreadable_input`, `already_finished`,
    /// `internal`, ...
    code: String,
    message: String,
    /// Every problem of a 422.
    #[schema(nullable = false)]
    details: Option<Vec<FieldProblemSchema>>,
}

/// The body of every error response.
#[derive(Serialize, ToSchema)]
#[schema(as = ErrorBody)]
pub(crate) struct ErrorBodySchema {
    error: ErrorDetailSchema,
}

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

/// The document served at `/v1/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
