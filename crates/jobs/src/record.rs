use std::time::{SystemTime, UNIX_EPOCH};

use caption_core::{JobError, JobStatus, TranscriptResult, Word};
use serde::{Deserialize, Serialize};

/// What to transcribe: everything a worker on any machine needs (no local paths).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Storage key of the input file.
    pub input: String,
    /// `auto` or an ISO 639-1 code.
    pub lang: String,
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: String,
    pub spec: JobSpec,
    pub status: JobStatus,
    /// 0–100.
    pub progress: u8,
    /// How many times a worker has claimed it.
    pub attempts: u32,
    pub words: Option<Vec<Word>>,
    pub error: Option<JobError>,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// The worker holding the job while it is `IN_PROGRESS`.
    pub worker: Option<String>,
    /// When that worker's lease runs out (ms since the Unix epoch).
    pub lease_until_ms: Option<u64>,
}

impl JobRecord {
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

    pub(crate) fn held_by(&self, worker: &str) -> bool {
        self.status == JobStatus::InProgress && self.worker.as_deref() == Some(worker)
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
