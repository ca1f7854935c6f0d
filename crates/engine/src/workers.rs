use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use caption_jobs::{ClaimOptions, JobRecord};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::{Engine, Error};

/// The running transcription workers. [`WorkerPool::shutdown`] lets each finish or hand back
/// its job; dropping the pool without it aborts them, and their jobs return to the queue when
/// their leases run out (or at once on the next start of an embedded store).
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

impl Engine {
    /// Starts `options.workers` workers. With `release_previous`, jobs that a previous run of
    /// this machine left `IN_PROGRESS` go back to the queue first (single-process stores).
    pub async fn spawn_workers(&self, release_previous: bool) -> crate::Result<WorkerPool> {
        if release_previous {
            let released = self.inner.jobs.release_all("").await?;
            if released > 0 {
                tracing::warn!(
                    released,
                    "jobs interrupted by the previous run are queued again"
                );
            }
        }
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = JoinSet::new();
        for n in 0..self.inner.options.workers.max(1) {
            let engine = self.clone();
            let worker = format!("{}/{n}", self.inner.instance);
            let stop_rx = stop_rx.clone();
            tasks.spawn(async move { engine.work(worker, stop_rx).await });
        }
        Ok(WorkerPool { stop, tasks })
    }

    async fn work(&self, worker: String, mut stop: watch::Receiver<bool>) {
        let claim = ClaimOptions {
            worker: worker.clone(),
            lease: self.inner.options.lease,
            max_attempts: self.inner.options.max_attempts,
        };
        while !*stop.borrow() {
            match self.inner.jobs.claim(&claim).await {
                Ok(Some(job)) => self.run_job(job, &worker).await,
                Ok(None) => {
                    tokio::select! {
                        () = self.inner.job_submitted.notified() => {}
                        () = tokio::time::sleep(IDLE_POLL) => {}
                        _ = stop.changed() => {}
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "claiming a job failed");
                    tokio::time::sleep(IDLE_POLL).await;
                }
            }
        }
    }

    async fn run_job(&self, job: JobRecord, worker: &str) {
        tracing::info!(job_id = %job.id, attempt = job.attempts, input = %job.spec.input, "transcription started");
        let progress = Arc::new(AtomicU8::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let heartbeat = {
            let jobs = Arc::clone(&self.inner.jobs);
            let (id, worker) = (job.id.clone(), worker.to_owned());
            let (progress, cancel) = (Arc::clone(&progress), Arc::clone(&cancel));
            let lease = self.inner.options.lease;
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(lease / 4).await;
                    match jobs
                        .heartbeat(&id, &worker, progress.load(Ordering::Relaxed), lease)
                        .await
                    {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!(job_id = %id, "lease lost; abandoning the job to its new holder");
                            cancel.store(true, Ordering::Relaxed);
                            return;
                        }
                        Err(e) => tracing::warn!(job_id = %id, error = %e, "heartbeat failed"),
                    }
                }
            })
        };
        let outcome = self
            .transcribe_stored(&job.spec, progress, Arc::clone(&cancel))
            .await;
        heartbeat.abort();
        let jobs = &self.inner.jobs;
        let recorded = match &outcome {
            Ok(words) => jobs.complete(&job.id, worker, words.clone()).await,
            Err(e) if cancel.load(Ordering::Relaxed) => {
                tracing::info!(job_id = %job.id, error = %e, "job abandoned after losing its lease");
                return;
            }
            Err(e) => {
                if e.code() == "internal" {
                    tracing::error!(job_id = %job.id, error = %e, "transcription failed");
                } else {
                    tracing::info!(job_id = %job.id, error = %e, "transcription failed on its input");
                }
                jobs.fail(&job.id, worker, e.to_job_error()).await
            }
        };
        match recorded {
            Ok(true) => tracing::info!(job_id = %job.id, ok = outcome.is_ok(), "job finished"),
            Ok(false) => {
                tracing::warn!(job_id = %job.id, "job was taken over before it finished; result dropped");
            }
            Err(e) => {
                tracing::error!(job_id = %job.id, error = %Error::from(e), "recording the job's end failed");
            }
        }
    }
}
