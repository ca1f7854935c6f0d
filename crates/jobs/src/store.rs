use std::fmt::Debug;
use std::time::Duration;

use async_trait::async_trait;
use caption_core::{JobError, Word};

use crate::{JobKind, JobRecord, JobSpec, Result};

/// How a worker claims jobs: `ClaimOptions::new(worker, kind)`, then setters for the rest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClaimOptions {
    /// Identifies the worker (process and thread); only the holder may finish the job.
    pub worker: String,
    /// How long the claim holds without a heartbeat.
    pub lease: Duration,
    /// Claims a job may have had (since it was last scheduled) before it fails with
    /// `retries_exhausted` instead of running.
    pub max_attempts: u32,
    /// The kind of job this worker runs; it never claims another kind.
    pub kind: JobKind,
}

impl ClaimOptions {
    /// Claims of `kind` by `worker`, with a lease of a minute and three attempts per job.
    pub fn new(worker: impl Into<String>, kind: JobKind) -> Self {
        Self {
            worker: worker.into(),
            lease: Duration::from_secs(60),
            max_attempts: 3,
            kind,
        }
    }

    /// How long the claim holds without a heartbeat.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Claims a job may have had before it fails with `retries_exhausted`.
    #[must_use]
    pub fn max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// The kind of job claimed.
    #[must_use]
    pub fn kind(mut self, kind: JobKind) -> Self {
        self.kind = kind;
        self
    }
}

/// Where jobs live. The contract every backend keeps (checked by the conformance suite):
///
/// - `submit` stores a new `IN_QUEUE` job durably before it returns.
/// - `claim` hands each queued job of the asked kind, once its `run_after_ms` has passed, to
///   exactly one caller, oldest first, moving it to `IN_PROGRESS` with a lease; a job whose
///   lease has expired is queued again (and claimable) until it has had `max_attempts` claims,
///   then it is `FAILED` with code `retries_exhausted`.
/// - `heartbeat`, `set_duration`, `complete`, `fail` and `retry_later` succeed (return `true`)
///   only for the worker that holds the job's live lease; otherwise they change nothing and
///   return `false`.
/// - `cancel` fails a queued or running job at once with code `cancelled`; its worker then no
///   longer holds it.
/// - Finished jobs (`COMPLETED`, `FAILED`) never change again.
/// - When a job whose spec has a `webhook_url` (other than a delivery) finishes, however it
///   finishes, a [`JobKind::Webhook`] job whose `input` is its id is queued in the same
///   transaction.
#[async_trait]
pub trait JobStore: Send + Sync + Debug {
    /// Queues a new job and returns its record (with a fresh unique id).
    async fn submit(&self, spec: JobSpec) -> Result<JobRecord>;

    /// The job, or `None` for an unknown id.
    async fn get(&self, id: &str) -> Result<Option<JobRecord>>;

    /// The oldest claimable job of `options.kind`, now `IN_PROGRESS` and held by
    /// `options.worker`.
    async fn claim(&self, options: &ClaimOptions) -> Result<Option<JobRecord>>;

    /// Renews the lease and records progress (0–100).
    async fn heartbeat(
        &self,
        id: &str,
        worker: &str,
        progress: u8,
        lease: Duration,
    ) -> Result<bool>;

    /// Records the length of the job's input, in seconds.
    async fn set_duration(&self, id: &str, worker: &str, duration_s: f64) -> Result<bool>;

    /// Stores the words and marks the job `COMPLETED`.
    async fn complete(&self, id: &str, worker: &str, words: Vec<Word>) -> Result<bool>;

    /// Marks the job `FAILED` with an error code and message.
    async fn fail(&self, id: &str, worker: &str, error: JobError) -> Result<bool>;

    /// Puts the job back in the queue, claimable from `run_after_ms` on, counting one more
    /// retry and keeping `error` as the reason of the last failed try.
    async fn retry_later(
        &self,
        id: &str,
        worker: &str,
        run_after_ms: u64,
        error: JobError,
    ) -> Result<bool>;

    /// Fails a queued or running job with code `cancelled`. Returns the job as it is after
    /// the call (a finished job unchanged), or `None` for an unknown id.
    async fn cancel(&self, id: &str) -> Result<Option<JobRecord>>;

    /// Puts every `IN_PROGRESS` job held by a worker whose name starts with `worker_prefix`
    /// back in the queue at once (used at start-up by a single-process store, whose previous
    /// process is known to be gone). Returns how many were requeued.
    async fn release_all(&self, worker_prefix: &str) -> Result<usize>;

    /// Releases what the store holds outside this process once the calls in flight end: the
    /// embedded store unlocks its file, so the next process (or a restart in this one) can
    /// open it even while clones of this store are still being dropped, and refuses every
    /// later call with [`Error::Unavailable`](crate::Error::Unavailable). The default does
    /// nothing: a shared store's connections hold no lock another process waits for.
    async fn close(&self) {}
}
