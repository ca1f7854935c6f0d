use std::fmt::Debug;
use std::time::Duration;

use async_trait::async_trait;
use caption_core::{JobError, Word};

use crate::{JobRecord, JobSpec, Result};

/// How a worker claims jobs.
#[derive(Debug, Clone)]
pub struct ClaimOptions {
    /// Identifies the worker (process and thread); only the holder may finish the job.
    pub worker: String,
    /// How long the claim holds without a heartbeat.
    pub lease: Duration,
    /// Claims a job may have had before it fails with `retries_exhausted` instead of running.
    pub max_attempts: u32,
}

/// Where jobs live. The contract every backend keeps (checked by the conformance suite):
///
/// - `submit` stores a new `IN_QUEUE` job durably before it returns.
/// - `claim` hands each queued job to exactly one caller, oldest first, moving it to
///   `IN_PROGRESS` with a lease; a job whose lease has expired is queued again (and claimable)
///   until it has had `max_attempts` claims, then it is `FAILED` with code `retries_exhausted`.
/// - `heartbeat`, `complete` and `fail` succeed (return `true`) only for the worker that holds
///   the job's live lease; otherwise they change nothing and return `false`.
/// - Finished jobs (`COMPLETED`, `FAILED`) never change again.
#[async_trait]
pub trait JobStore: Send + Sync + Debug {
    /// Queues a new job and returns its record (with a fresh unique id).
    async fn submit(&self, spec: JobSpec) -> Result<JobRecord>;

    /// The job, or `None` for an unknown id.
    async fn get(&self, id: &str) -> Result<Option<JobRecord>>;

    /// The oldest claimable job, now `IN_PROGRESS` and held by `options.worker`.
    async fn claim(&self, options: &ClaimOptions) -> Result<Option<JobRecord>>;

    /// Renews the lease and records progress (0–100).
    async fn heartbeat(
        &self,
        id: &str,
        worker: &str,
        progress: u8,
        lease: Duration,
    ) -> Result<bool>;

    /// Stores the words and marks the job `COMPLETED`.
    async fn complete(&self, id: &str, worker: &str, words: Vec<Word>) -> Result<bool>;

    /// Marks the job `FAILED` with an error code and message.
    async fn fail(&self, id: &str, worker: &str, error: JobError) -> Result<bool>;

    /// Puts every `IN_PROGRESS` job held by a worker whose name starts with `worker_prefix`
    /// back in the queue at once (used at start-up by a single-process store, whose previous
    /// process is known to be gone). Returns how many were requeued.
    async fn release_all(&self, worker_prefix: &str) -> Result<usize>;
}
