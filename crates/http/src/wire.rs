//! The service's own shapes on the wire, around `caption-core`'s types: their JSON Schemas are
//! derived (schemars) like the core types', and the OpenAPI document's components are made of
//! both (`openapi.rs`). The route annotations name components through the `*Ref` markers
//! below, which carry a derived schema's name and nothing else.

use caption_core::{
    CreateJobResponse, GenerateRequest, JobError, JobStatus, Template, TemplateSummary,
    TranscriptRequest, TranscriptResult, UploadDescriptor,
};
use caption_engine::{GenerateStatus, TranscriptionStatus};
use schemars::JsonSchema;
use serde::Serialize;

use crate::FieldProblem;

/// Longest `webhook_url`, characters.
pub(crate) const MAX_WEBHOOK_URL_CHARS: usize = 2048;

/// Body of `POST /transcript`: the interface's fields and the service's webhook. Read by
/// `parse_transcript_request` and the webhook check; this type gives the document its schema.
#[derive(JsonSchema)]
#[schemars(rename = "TranscriptRequest")]
#[expect(dead_code, reason = "describes a body that is validated as loose JSON")]
pub(crate) struct TranscriptBody {
    #[serde(flatten)]
    request: TranscriptRequest,
    /// Extension: where to POST a signed `transcript.completed` or `transcript.failed` event
    /// when the job ends (see the document's description). Loopback, private, link-local and
    /// metadata addresses are refused (422) unless the service allows them.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_WEBHOOK_URL_CHARS), regex(pattern = "^https?://"))]
    webhook_url: Option<String>,
}

/// Body of `POST /generate`: the interface's fields and the service's `async` and webhook.
#[derive(JsonSchema)]
#[schemars(rename = "GenerateRequest")]
#[expect(dead_code, reason = "describes a body that is validated as loose JSON")]
pub(crate) struct GenerateBody {
    #[serde(flatten)]
    request: GenerateRequest,
    /// Extension: answer at once with `download_url` and a `job_id` (follow it at
    /// `GET /generate/{jobId}`) instead of when the video is stored. The way for long inputs.
    #[serde(default, rename = "async")]
    run_async: Option<bool>,
    /// Extension: where to POST a signed `generate.completed` or `generate.failed` event when
    /// the video is stored or the burn fails. Loopback, private, link-local and metadata
    /// addresses are refused (422) unless the service allows them.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_WEBHOOK_URL_CHARS), regex(pattern = "^https?://"))]
    webhook_url: Option<String>,
}

/// Declares markers that name a derived schema in the route annotations: utoipa writes a
/// `$ref` to the component of that name, which `openapi.rs` fills with the derived
/// schema.
macro_rules! component_refs {
    ($($marker:ident => $ty:ty),+ $(,)?) => {$(
        #[doc = concat!("The `", stringify!($ty), "` component, in a route annotation.")]
        pub(crate) struct $marker;

        impl utoipa::PartialSchema for $marker {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::Ref::from_schema_name(<$ty as schemars::JsonSchema>::schema_name()).into()
            }
        }

        impl utoipa::ToSchema for $marker {
            fn name() -> std::borrow::Cow<'static, str> {
                <$ty as schemars::JsonSchema>::schema_name()
            }
        }
    )+};
}

pub(crate) use component_refs;

component_refs!(
    TranscriptBodyRef => TranscriptBody,
    GenerateBodyRef => GenerateBody,
    TranscriptViewRef => TranscriptView,
    GenerateAnswerRef => GenerateAnswer,
    GenerateJobRef => GenerateJobView,
    CreateJobResponseRef => CreateJobResponse,
    TemplateRef => Template,
    TemplateSummaryRef => TemplateSummary,
    UploadDescriptorRef => UploadDescriptor,
    ErrorBodyRef => crate::error::Body<'static>,
);

/// A transcription job on the wire: the interface's fields plus `duration_s`.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "TranscriptResult")]
/// Response of `GET /transcript/{jobId}`: words only when `COMPLETED`; `error` (code
/// `cancelled` after DELETE) only when `FAILED`.
pub(crate) struct TranscriptView {
    #[serde(flatten)]
    result: TranscriptResult,
    /// Extension: length of the input in seconds, once a worker has read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
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

/// `POST /generate`'s answer: the link, and the job id of an async request.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "GenerateResponse")]
/// Response of `POST /generate`.
pub(crate) struct GenerateAnswer {
    /// Where the captioned video is downloaded (with `async`, it answers 404 until stored).
    pub(crate) download_url: String,
    /// Extension: with `"async": true`, the job to follow at `GET /generate/{jobId}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) job_id: Option<String>,
    /// Extension: fields of the request no rule knows, ignored, each with the closest known
    /// name (send `?strict=true` to have them refused with a 422 instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) warnings: Vec<FieldProblem>,
}

/// A background generate on the wire.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "GenerateJob")]
/// A background generate (`POST /generate` with `"async": true`).
pub(crate) struct GenerateJobView {
    job_id: String,
    status: JobStatus,
    /// Percent done; 100 once the video is stored.
    #[schemars(range(max = 100))]
    progress: u8,
    /// Where the video is downloaded; answers 404 until the job is `COMPLETED`.
    download_url: String,
    /// Present on `FAILED`; code `cancelled` after DELETE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
