use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use caption_core::{ErrorCode, Word};
use caption_jobs::{ClaimOptions, JobKind, JobRecord, now_ms};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::{Engine, Error};

/// The running workers: transcriptions, background generates and webhook deliveries.
/// [`WorkerPool::shutdown`] lets each finish or hand back its job; dropping the pool without it
/// aborts them, and their jobs return to the queue when their leases run out (or at once on
/// the next start of an embedded store).
#[derive(Debug)]
pub struct WorkerPool {
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl WorkerPool {
    /// Stops claiming new jobs and waits for the running ones to end.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        while self.tasks.join_next().await.is_some() {}
    }
}

/// How often an idle worker looks for jobs submitted through another process.
const IDLE_POLL: Duration = Duration::from_millis(500);

/// Longest gap between two heartbeats of a running job: a cancel made through another process
/// is seen (the lease is gone) within this time.
const MAX_HEARTBEAT: Duration = Duration::from_millis(500);

/// Times a job that failed on a backend (the bucket unreachable, the disk full) is queued again
/// before it fails for good: with [`passing_backoff`], about ten minutes in all.
const MAX_PASSING_RETRIES: u32 = 12;

/// Whether a job failing with `code` may work later, unchanged: its backend failed, not its
/// input.
fn is_passing(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::StorageUnavailable | ErrorCode::DiskFull)
}

/// The wait before try `retries + 2` of a job whose backend failed: one second, doubled each
/// time, at most a minute.
fn passing_backoff(retries: u32) -> Duration {
    Duration::from_secs(1)
        .saturating_mul(2_u32.saturating_pow(retries.min(6)))
        .min(Duration::from_secs(60))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Records a job's end with `record`, trying again while the job store fails (its database
/// restarting, its disk full) for as long as the lease could hold: a finished job is neither
/// run twice (its lease expiring, another worker taking it) nor lost because one write failed.
/// A write whose answer was lost but which took effect is seen on the next try as `Ok(false)`.
async fn record_end<F, Fut>(id: &str, lease: Duration, mut record: F) -> caption_jobs::Result<bool>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = caption_jobs::Result<bool>>,
{
    let deadline = Instant::now() + lease;
    let mut wait = Duration::from_millis(100);
    loop {
        match record().await {
            Err(e) if Instant::now() + wait < deadline => {
                tracing::warn!(job_id = %id, error = %e, retry_in_ms = millis(wait), "recording the job's end failed; trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// What a job's run reports as it goes.
struct Running {
    progress: Arc<AtomicU8>,
    cancel: Arc<AtomicBool>,
    /// The input's length in seconds as `f64` bits; 0 while unknown.
    duration_bits: Arc<AtomicU64>,
}

impl Engine {
    /// Starts the workers: `options.workers` for transcriptions, `options.generate_slots` for
    /// background generates (they share the slots with synchronous ones) and
    /// `options.webhook_workers` for deliveries. With `release_previous`, jobs that a previous
    /// run of this machine left `IN_PROGRESS` go back to the queue first (single-process
    /// stores).
    pub async fn spawn_workers(&self, release_previous: bool) -> crate::Result<WorkerPool> {
        if release_previous {
            // A job store that cannot be written now (its disk full) still serves what it
            // holds: the service starts, and the interrupted jobs come back when their leases
            // run out.
            match self.inner.jobs.release_all("").await {
                Ok(0) => {}
                Ok(released) => tracing::warn!(
                    released,
                    "jobs interrupted by the previous run are queued again"
                ),
                Err(e) => tracing::error!(
                    error = %Error::from(e),
                    "jobs interrupted by the previous run could not be queued again; they return when their leases run out"
                ),
            }
        }
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let options = &self.inner.options;
        let pools = [
            (JobKind::Transcribe, options.workers.max(1), "t"),
            (JobKind::Generate, options.generate_slots.max(1), "g"),
            (JobKind::Webhook, options.webhook_workers.max(1), "w"),
        ];
        for (kind, count, tag) in pools {
            for n in 0..count {
                let engine = self.clone();
                let worker = format!("{}/{tag}{n}", self.inner.instance);
                let stop_rx = stop_rx.clone();
                tasks.spawn(async move { engine.work(kind, worker, stop_rx).await });
            }
        }
        Ok(WorkerPool { stop, tasks })
    }

    async fn work(&self, kind: JobKind, worker: String, mut stop: watch::Receiver<bool>) {
        let claim = ClaimOptions::new(worker.clone(), kind)
            .lease(self.inner.options.lease)
            .max_attempts(self.inner.options.max_attempts);
        let submitted = match kind {
            JobKind::Transcribe => &self.inner.job_submitted,
            JobKind::Generate => &self.inner.generate_submitted,
            JobKind::Webhook => &self.inner.webhook_submitted,
        };
        while !*stop.borrow() {
            // A background generate burns in one of the generate slots, like a synchronous
            // one. An idle worker holds none: it waits until one is free, looks for a job, and
            // takes a slot only for a job it found (`run_generate`), so a synchronous request
            // meets `busy` only when burns truly fill the slots.
            if kind == JobKind::Generate {
                tokio::select! {
                    free = self.inner.generate_slots.free() => if !free { return },
                    _ = stop.changed() => continue,
                }
            }
            match self.inner.jobs.claim(&claim).await {
                Ok(Some(job)) => match kind {
                    JobKind::Transcribe => self.run_transcription(job, &worker).await,
                    JobKind::Generate => self.run_generate(job, &worker).await,
                    JobKind::Webhook => self.run_delivery(job, &worker).await,
                },
                Ok(None) => {
                    tokio::select! {
                        () = submitted.notified() => {}
                        () = tokio::time::sleep(IDLE_POLL) => {}
                        _ = stop.changed() => {}
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, ?kind, "claiming a job failed");
                    tokio::time::sleep(IDLE_POLL).await;
                }
            }
        }
    }

    async fn run_transcription(&self, job: JobRecord, worker: &str) {
        tracing::info!(job_id = %job.id, attempt = job.attempts, input = %job.spec.input, "transcription started");
        let spec = job.spec.clone();
        self.run_held(job, worker, |running| async move {
            let words = self
                .transcribe_stored(
                    &spec,
                    running.progress,
                    running.cancel,
                    running.duration_bits,
                )
                .await;
            // The audio and whisper's buffers are freed by now (a burn gives back as its
            // slot goes).
            super::memory::give_back();
            words
        })
        .await;
    }

    async fn run_generate(&self, job: JobRecord, worker: &str) {
        tracing::info!(job_id = %job.id, attempt = job.attempts, input = %job.spec.input, "generate started");
        let held = job.clone();
        self.run_held(job, worker, |running| async move {
            // Under the job's heartbeat: a wait for a slot a synchronous burn took meanwhile
            // keeps the claim.
            let Some(slot) = self.inner.generate_slots.take().await else {
                return Err(Error::Internal("the generate slots are closed".to_owned()));
            };
            self.generate_stored(&held, &slot, running.progress, running.cancel)
                .await
                .map(|()| Vec::new())
        })
        .await;
    }

    /// Runs `body` on a claimed job under heartbeats, then records its end: words on
    /// success, the error otherwise, nothing when the job was cancelled or taken over.
    async fn run_held<F, Fut>(&self, job: JobRecord, worker: &str, body: F)
    where
        F: FnOnce(Running) -> Fut,
        Fut: Future<Output = crate::Result<Vec<Word>>>,
    {
        let progress = Arc::new(AtomicU8::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let duration_bits = Arc::new(AtomicU64::new(0));
        self.inner
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(job.id.clone(), Arc::clone(&cancel));
        let heartbeat = {
            let jobs = Arc::clone(&self.inner.jobs);
            let (id, worker) = (job.id.clone(), worker.to_owned());
            let (progress, cancel, duration_bits) = (
                Arc::clone(&progress),
                Arc::clone(&cancel),
                Arc::clone(&duration_bits),
            );
            let lease = self.inner.options.lease;
            tokio::spawn(async move {
                let mut duration_sent = false;
                loop {
                    tokio::time::sleep((lease / 4).min(MAX_HEARTBEAT)).await;
                    let bits = duration_bits.load(Ordering::Relaxed);
                    if bits != 0 && !duration_sent {
                        duration_sent = jobs
                            .set_duration(&id, &worker, f64::from_bits(bits))
                            .await
                            .unwrap_or(false);
                    }
                    match jobs
                        .heartbeat(&id, &worker, progress.load(Ordering::Relaxed), lease)
                        .await
                    {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!(job_id = %id, "job cancelled or its lease lost; stopping");
                            cancel.store(true, Ordering::Relaxed);
                            return;
                        }
                        Err(e) => tracing::warn!(job_id = %id, error = %e, "heartbeat failed"),
                    }
                }
            })
        };
        let outcome = body(Running {
            progress,
            cancel: Arc::clone(&cancel),
            duration_bits: Arc::clone(&duration_bits),
        })
        .await;
        heartbeat.abort();
        self.inner
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&job.id);
        let jobs = &self.inner.jobs;
        let bits = duration_bits.load(Ordering::Relaxed);
        if bits != 0 {
            let _ = jobs
                .set_duration(&job.id, worker, f64::from_bits(bits))
                .await;
        }
        let lease = self.inner.options.lease;
        let recorded = match &outcome {
            _ if cancel.load(Ordering::Relaxed) => {
                tracing::info!(job_id = %job.id, "job stopped: cancelled, or taken over after losing its lease");
                return;
            }
            Ok(words) => {
                record_end(&job.id, lease, || {
                    jobs.complete(&job.id, worker, words.clone())
                })
                .await
            }
            Err(e) if is_passing(e.code()) && job.retries < MAX_PASSING_RETRIES => {
                let wait = passing_backoff(job.retries);
                tracing::warn!(job_id = %job.id, error = %e, wait_s = wait.as_secs(), "job interrupted by a failing backend; queued again");
                let run_after_ms = now_ms().saturating_add(millis(wait));
                let recorded = record_end(&job.id, lease, || {
                    jobs.retry_later(&job.id, worker, run_after_ms, e.to_job_error())
                })
                .await;
                if let Err(e) = recorded {
                    tracing::error!(job_id = %job.id, error = %Error::from(e), "queueing the job again failed");
                }
                return;
            }
            Err(e) => {
                if e.code() == ErrorCode::Internal {
                    tracing::error!(job_id = %job.id, error = %e, "job failed");
                } else {
                    tracing::info!(job_id = %job.id, error = %e, "job failed on its input");
                }
                record_end(&job.id, lease, || {
                    jobs.fail(&job.id, worker, e.to_job_error())
                })
                .await
            }
        };
        match recorded {
            Ok(true) => {
                tracing::info!(job_id = %job.id, ok = outcome.is_ok(), "job finished");
                // Its delivery, if it has a webhook, is queued now.
                self.inner.webhook_submitted.notify_one();
            }
            Ok(false) => {
                tracing::warn!(job_id = %job.id, "job was taken over or cancelled before it finished; result dropped");
            }
            Err(e) => {
                tracing::error!(job_id = %job.id, error = %Error::from(e), "recording the job's end failed");
            }
        }
    }
}
