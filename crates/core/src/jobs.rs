use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::patch::ConfigPatch;
use crate::rules;
use crate::speakers::SpeakerCount;
use crate::word::Word;

/// Body of `POST /transcript`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TranscriptRequest {
    /// The `file` identifier returned by `/signedUrl` (the key of an uploaded object).
    #[schemars(length(min = 1, max = rules::MAX_INPUT_CHARS))]
    pub input: String,
    /// ISO 639-1 code or `auto` (the default).
    #[serde(default = "default_lang")]
    #[schemars(regex(pattern = rules::LANG_PATTERN))]
    pub lang: String,
    /// Extension: `transcribe` (the default) keeps the spoken language; `translate` gives
    /// English words whatever the language spoken (a multilingual model is needed).
    #[serde(default)]
    #[schemars(with = "Option<TranscriptTask>")]
    pub task: TranscriptTask,
    /// Extension: keep the fillers of English speech ("um", "uh") as words marked `filler`,
    /// for a generate with `cutFillers`; whisper leaves most of them out otherwise.
    #[serde(
        rename = "keepFillers",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    #[schemars(with = "Option<bool>")]
    pub keep_fillers: bool,
    /// Extension: tell the speakers apart, `"auto"` or how many (1 to 8): every word then has a
    /// `speaker` ("S1", "S2", … in order of first speech), which a style's `speakerColors`
    /// colours. Absent: no speakers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speakers: Option<SpeakerCount>,
}

wire_enum!(
    /// What a transcription gives.
    TranscriptTask {
        /// The words as spoken, in their language.
        Transcribe = "transcribe",
        /// The speech translated into English words.
        Translate = "translate",
    }
);

wire_enum!(
    /// The shape of a reframed video, width:height: the input is cropped to it around the face
    /// of whoever is speaking, and the captions are laid out for the cropped frame.
    Reframe {
        /// Vertical video, for Shorts, Reels and TikTok.
        Vertical = "9:16",
        /// Square.
        Square = "1:1",
        /// Portrait, for feed posts.
        Portrait = "4:5",
    }
);

/// Why `reframe` goes with the `video` output only.
pub(crate) const RULE_REFRAME_OUTPUT: &str =
    "needs \"output\": \"video\" (a caption layer keeps the input's frame)";

impl Reframe {
    /// The ratio as (width, height).
    ///
    /// ```
    /// assert_eq!(caption_core::Reframe::Vertical.ratio(), (9, 16));
    /// ```
    pub fn ratio(self) -> (u32, u32) {
        match self {
            Self::Vertical => (9, 16),
            Self::Square => (1, 1),
            Self::Portrait => (4, 5),
        }
    }
}

wire_enum!(
    /// What `POST /generate` writes.
    OutputKind {
        /// The input video with the captions burned in (MP4).
        Video = "video",
        /// The captions alone on a transparent background: ProRes 4444 with alpha, in MOV.
        OverlayMov = "overlay-mov",
        /// The captions alone on a transparent background: VP9 with alpha, in WebM.
        OverlayWebm = "overlay-webm",
    }
);

impl Default for TranscriptTask {
    /// The words as spoken.
    fn default() -> Self {
        Self::Transcribe
    }
}

impl Default for OutputKind {
    /// The burned video.
    fn default() -> Self {
        Self::Video
    }
}

fn default_lang() -> String {
    "auto".to_owned()
}

/// Response of `POST /transcript`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreateJobResponse {
    /// The id to poll `GET /transcript/{jobId}` with.
    pub job_id: String,
}

/// Status of a transcription job: `IN_QUEUE` → `IN_PROGRESS` → `COMPLETED` | `FAILED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// Waiting for a worker.
    InQueue,
    /// A worker has it.
    InProgress,
    /// Done; the words are there.
    Completed,
    /// Done without words; the error says why.
    Failed,
}

impl JobStatus {
    /// The wire spelling (`IN_QUEUE`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InQueue => "IN_QUEUE",
            Self::InProgress => "IN_PROGRESS",
            Self::Completed => "COMPLETED",
            Self::Failed => "FAILED",
        }
    }

    /// True once the job can no longer change.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Completed | Self::Failed)
    }
}

/// Why a job failed: a stable snake_case `code` (`no_audio`, `unreadable_input`, ...) and a
/// message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobError {
    /// Stable snake_case code.
    pub code: String,
    /// A sentence for people.
    pub message: String,
}

/// Response of `GET /transcript/{jobId}`.
///
/// `words` is `null` unless the status is `COMPLETED`. `progress` (0–100) and `error` are
/// extensions; `error` appears only on `FAILED`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TranscriptResult {
    /// Where the job is.
    pub status: JobStatus,
    /// The words, once `COMPLETED`.
    #[serde(default)]
    pub words: Option<Vec<Word>>,
    /// Extension: percent done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100))]
    pub progress: Option<u8>,
    /// Extension: why it failed, on `FAILED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JobError>,
}

/// Body of `POST /generate`: the input file, the timed words and a (partial) style configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GenerateRequest {
    /// The `file` identifier returned by `/signedUrl` (the key of an uploaded object).
    #[schemars(length(min = 1, max = rules::MAX_INPUT_CHARS))]
    pub input: String,
    /// The timed words to burn.
    #[schemars(length(max = rules::MAX_WORDS))]
    pub words: Vec<Word>,
    /// The style, over the template's.
    #[serde(default)]
    pub config: ConfigPatch,
    /// Extension: the template the `config` overrides (default: the default template).
    #[serde(
        default,
        rename = "templateId",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = rules::MAX_TEMPLATE_ID_CHARS))]
    pub template_id: Option<String>,
    /// Extension: what to write (default `video`, the burned video).
    #[serde(default)]
    #[schemars(with = "Option<OutputKind>")]
    pub output: OutputKind,
    /// Extension: crop the video to this shape (`9:16`, `1:1` or `4:5`), following the face of
    /// whoever speaks; the captions are laid out for the cropped frame. Absent: the input's
    /// shape. Only with the `video` output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reframe: Option<Reframe>,
}

/// Response of `POST /generate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GenerateResponse {
    /// A link to the captioned video, valid for the download TTL.
    pub download_url: String,
}

/// Response of `GET /signedUrl`: a unique file identifier, the URL to POST a multipart form to,
/// and the form fields to send before the file (`key`, `bucket`, `Policy`, `X-Amz-Algorithm`,
/// `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Signature`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UploadDescriptor {
    /// The file identifier to name in `/transcript` and `/generate` (an object key).
    pub file: String,
    /// Where to POST the multipart form.
    pub url: String,
    /// Form fields to send, in any order, before the file.
    pub fields: BTreeMap<String, String>,
}
