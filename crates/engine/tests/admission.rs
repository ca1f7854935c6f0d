//! Idle generate workers hold no slot: with a job store whose claims are slow (a busy
//! PostgreSQL, a slow disk under redb), synchronous generates arriving while the workers look
//! for work still run, and a generate of a missing input is `not_found`, never `busy`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use caption_core::{GenerateRequest, JobError, OutputKind, Word};
use caption_engine::{Engine, EngineOptions, Error};
use caption_jobs::{ClaimOptions, EmbeddedJobStore, JobRecord, JobSpec, JobStore};
use caption_store::Storage;
use support::{local_storage, upload};

mod support;

/// The embedded store, each claim taking `delay` longer, as over a slow link.
#[derive(Debug)]
struct SlowClaims {
    store: EmbeddedJobStore,
    delay: Duration,
}

#[async_trait]
impl JobStore for SlowClaims {
    async fn submit(&self, spec: JobSpec) -> caption_jobs::Result<JobRecord> {
        self.store.submit(spec).await
    }
    async fn get(&self, id: &str) -> caption_jobs::Result<Option<JobRecord>> {
        self.store.get(id).await
    }
    async fn claim(&self, options: &ClaimOptions) -> caption_jobs::Result<Option<JobRecord>> {
        tokio::time::sleep(self.delay).await;
        self.store.claim(options).await
    }
    async fn heartbeat(
        &self,
        id: &str,
        worker: &str,
        progress: u8,
        lease: Duration,
    ) -> caption_jobs::Result<bool> {
        self.store.heartbeat(id, worker, progress, lease).await
    }
    async fn set_duration(
        &self,
        id: &str,
        worker: &str,
        duration_s: f64,
    ) -> caption_jobs::Result<bool> {
        self.store.set_duration(id, worker, duration_s).await
    }
    async fn complete(
        &self,
        id: &str,
        worker: &str,
        words: Vec<Word>,
    ) -> caption_jobs::Result<bool> {
        self.store.complete(id, worker, words).await
    }
    async fn fail(&self, id: &str, worker: &str, error: JobError) -> caption_jobs::Result<bool> {
        self.store.fail(id, worker, error).await
    }
    async fn retry_later(
        &self,
        id: &str,
        worker: &str,
        run_after_ms: u64,
        error: JobError,
    ) -> caption_jobs::Result<bool> {
        self.store
            .retry_later(id, worker, run_after_ms, error)
            .await
    }
    async fn cancel(&self, id: &str) -> caption_jobs::Result<Option<JobRecord>> {
        self.store.cancel(id).await
    }
    async fn release_all(&self, worker_prefix: &str) -> caption_jobs::Result<usize> {
        self.store.release_all(worker_prefix).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_workers_leave_the_slots_to_requests() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    caption_testkit::media::tone_video(&clip, "color=c=gray:s=160x120:r=10", 1.0).unwrap();
    let storage: Arc<dyn Storage> = Arc::new(local_storage(dir.path()));
    let key = upload(storage.as_ref(), &clip).await;
    let jobs = SlowClaims {
        store: EmbeddedJobStore::open(dir.path().join("jobs.redb")).unwrap(),
        delay: Duration::from_millis(400),
    };
    // Two slots, so two generate workers, both looking for work most of the time.
    let options = EngineOptions::default()
        .data_dir(dir.path().to_owned())
        .model("tiny.en")
        .generate_slots(2);
    let engine = Engine::new(options, storage, Arc::new(jobs)).unwrap();
    let workers = engine.spawn_workers(false).await.unwrap();
    let request = |input: String| GenerateRequest {
        input,
        words: vec![Word::new(0.1, 0.8, "idle")],
        config: caption_core::ConfigPatch::default(),
        template_id: None,
        output: OutputKind::Video,
        reframe: None,
    };
    for n in 0..12 {
        tokio::time::sleep(Duration::from_millis(75)).await;
        let missing = engine
            .generate(request("uploads/none/missing.mp4".to_owned()))
            .await;
        assert!(
            matches!(missing, Err(Error::NotFound { .. })),
            "request {n}: {missing:?}"
        );
        if let Err(e) = engine.generate(request(key.to_string())).await {
            panic!("request {n} refused: {e}");
        }
    }
    workers.shutdown().await;
}
