use std::time::{SystemTime, UNIX_EPOCH};

use caption_core::{JobError, JobStatus, TranscriptResult, Word};
use serde::{Deserialize, Serialize};

/// What a job does. Each kind has its own workers, which claim only their kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Speech to words (`POST /transcript`).
    #[default]
    Transcribe,
    /// A captioned video burned in the background (`POST /generate` with `"async": true`).
    Generate,
    /// One signed webhook event to deliver (retried with backoff until it is accepted).
    Webhook,
}

impl JobKind {
    /// The stored spelling (`transcribe`, `generate`, `webhook`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transcribe => "transcribe",
            Self::Generate => "generate",
            Self::Webhook => "webhook",
        }
    }

    /// The kind of a stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "transcribe" => Some(Self::Transcribe),
            "generate" => Some(Self::Generate),
            "webhook" => Some(Self::Webhook),
            _ => None,
        }
    }
}

/// What to do: everything a worker on any machine needs (no local paths).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Storage key of the input file; for a [`JobKind::Webhook`] delivery, the id of the job
    /// whose end it announces.
    pub input: String,
    /// `auto` or an ISO 639-1 code (transcription).
    pub lang: String,
    /// Which workers run it.
    #[serde(default)]
    pub kind: JobKind,
    /// Kind-specific details: a generate job's request and output key; a delivery's ready-made
    /// event when it announces no stored job.
    #[serde(default)]
    pub payload: Option<serde_json::Value>,
    /// Where the job's end is announced. When a job that has one (other than a delivery)
    /// finishes, the store queues its [`JobKind::Webhook`] delivery in the same transaction,
    /// so a crash can never finish a job and lose its event.
    #[serde(default)]
    pub webhook_url: Option<String>,
}

impl JobSpec {
    /// A transcription of `input` in `lang`.
    pub fn transcribe(input: impl Into<String>, lang: impl Into<String>) -> Self {
        Self {
            input: input.into(),
            lang: lang.into(),
            ..Self::default()
        }
    }

    /// Carries `payload` (kind-specific details).
    pub fn with_payload(mut self, payload: Option<serde_json::Value>) -> Self {
        self.payload = payload;
        self
    }

    /// Announces this job's end at `url`.
    pub fn with_webhook(mut self, url: Option<String>) -> Self {
        self.webhook_url = url;
        self
    }

    /// Whether finishing this job queues a delivery.
    // The embedded store's bookkeeping; PostgreSQL does the same in SQL.
    #[cfg(feature = "embedded")]
    pub(crate) fn announces_end(&self) -> bool {
        self.kind != JobKind::Webhook && self.webhook_url.is_some()
    }
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// The job's id (a UUID), as the API hands it out.
    pub id: String,
    /// What to do.
    pub spec: JobSpec,
    /// Where the job is in its life.
    pub status: JobStatus,
    /// 0–100.
    pub progress: u8,
    /// How many times a worker has claimed it since it was last scheduled.
    pub attempts: u32,
    /// The transcript, once `COMPLETED` (transcription jobs).
    pub words: Option<Vec<Word>>,
    /// Why it failed, once `FAILED`.
    pub error: Option<JobError>,
    /// When it was submitted, ms since the Unix epoch.
    pub created_ms: u64,
    /// When it last changed, ms since the Unix epoch.
    pub updated_ms: u64,
    /// The worker holding the job while it is `IN_PROGRESS`.
    pub worker: Option<String>,
    /// When that worker's lease runs out (ms since the Unix epoch).
    pub lease_until_ms: Option<u64>,
    /// Not claimable before this time (ms since the Unix epoch); 0 = at once.
    #[serde(default)]
    pub run_after_ms: u64,
    /// How many times the job was scheduled again after a failed try
    /// ([`JobStore::retry_later`](crate::JobStore::retry_later)).
    #[serde(default)]
    pub retries: u32,
    /// Length of the input in seconds, once a worker has read it.
    #[serde(default)]
    pub duration_s: Option<f64>,
}

impl JobRecord {
    /// A queued job `id` doing `spec`, submitted at `now_ms` (ms since the Unix epoch); the
    /// stores make these in [`JobStore::submit`](crate::JobStore::submit).
    pub fn new(id: String, spec: JobSpec, now_ms: u64) -> Self {
        Self {
            id,
            spec,
            status: JobStatus::InQueue,
            progress: 0,
            attempts: 0,
            words: None,
            error: None,
            created_ms: now_ms,
            updated_ms: now_ms,
            worker: None,
            lease_until_ms: None,
            run_after_ms: 0,
            retries: 0,
            duration_s: None,
        }
    }

    /// The public view (`GET /transcript/{id}`): words only when completed.
    pub fn result(&self) -> TranscriptResult {
        let completed = self.status == JobStatus::Completed;
        TranscriptResult {
            status: self.status,
            words: if completed { self.words.clone() } else { None },
            progress: Some(if completed { 100 } else { self.progress }),
            error: if self.status == JobStatus::Failed {
                self.error.clone()
            } else {
                None
            },
        }
    }

    #[cfg(feature = "embedded")]
    pub(crate) fn held_by(&self, worker: &str) -> bool {
        self.status == JobStatus::InProgress && self.worker.as_deref() == Some(worker)
    }

    /// The delivery that announces this (just finished) job's end, when it has a webhook.
    #[cfg(feature = "embedded")]
    pub(crate) fn delivery(&self, now_ms: u64) -> Option<JobRecord> {
        if !self.spec.announces_end() {
            return None;
        }
        let spec = JobSpec {
            input: self.id.clone(),
            kind: JobKind::Webhook,
            webhook_url: self.spec.webhook_url.clone(),
            ..JobSpec::default()
        };
        Some(JobRecord::new(
            uuid::Uuid::new_v4().to_string(),
            spec,
            now_ms,
        ))
    }
}

/// The error of a job stopped by its client.
pub fn cancelled_error() -> JobError {
    JobError {
        code: "cancelled".to_owned(),
        message: "the job was cancelled by a client".to_owned(),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
