//! The JobStore contract, run against every backend.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use caption_core::{JobError, JobStatus, Word};
use caption_jobs::{ClaimOptions, EmbeddedJobStore, JobSpec, JobStore, PostgresJobStore};
use caption_testkit::PostgresServer;

fn spec(n: usize) -> JobSpec {
    JobSpec {
        input: format!("uploads/{n}/clip.mp4"),
        lang: "auto".into(),
    }
}

fn worker(name: &str, lease_ms: u64) -> ClaimOptions {
    ClaimOptions {
        worker: name.into(),
        lease: Duration::from_millis(lease_ms),
        max_attempts: 3,
    }
}

fn words() -> Vec<Word> {
    vec![Word::new(0.1, 0.4, "hello"), Word::new(0.5, 0.9, "world")]
}

async fn submit_get_and_claim_in_order(store: Arc<dyn JobStore>) {
    let a = store.submit(spec(1)).await.unwrap();
    let b = store.submit(spec(2)).await.unwrap();
    assert_ne!(a.id, b.id);
    let got = store.get(&a.id).await.unwrap().unwrap();
    assert_eq!(got.status, JobStatus::InQueue);
    assert_eq!(got.result().words, None);
    assert_eq!(got.spec, spec(1));
    assert!(store.get("no-such-job").await.unwrap().is_none());

    let first = store.claim(&worker("w1", 60_000)).await.unwrap().unwrap();
    assert_eq!(first.id, a.id, "oldest first");
    assert_eq!(first.status, JobStatus::InProgress);
    assert_eq!(first.attempts, 1);
    let second = store.claim(&worker("w2", 60_000)).await.unwrap().unwrap();
    assert_eq!(second.id, b.id);
    assert!(store.claim(&worker("w3", 60_000)).await.unwrap().is_none());
}

async fn only_the_holder_finishes_and_finished_jobs_stay(store: Arc<dyn JobStore>) {
    let job = store.submit(spec(1)).await.unwrap();
    store.claim(&worker("w1", 60_000)).await.unwrap().unwrap();
    assert!(!store.complete(&job.id, "intruder", words()).await.unwrap());
    assert!(
        store
            .heartbeat(&job.id, "w1", 42, Duration::from_secs(60))
            .await
            .unwrap()
    );
    assert_eq!(store.get(&job.id).await.unwrap().unwrap().progress, 42);
    assert!(store.complete(&job.id, "w1", words()).await.unwrap());
    let done = store.get(&job.id).await.unwrap().unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(done.result().words.unwrap(), words());
    assert_eq!(done.result().progress, Some(100));
    // Finished is final: neither the holder nor anyone else changes it again.
    assert!(
        !store
            .fail(
                &job.id,
                "w1",
                JobError {
                    code: "x".into(),
                    message: "y".into()
                }
            )
            .await
            .unwrap()
    );
    assert!(!store.complete(&job.id, "w1", vec![]).await.unwrap());
    assert_eq!(
        store.get(&job.id).await.unwrap().unwrap().words.unwrap(),
        words()
    );
}

async fn failures_carry_code_and_message(store: Arc<dyn JobStore>) {
    let job = store.submit(spec(1)).await.unwrap();
    store.claim(&worker("w1", 60_000)).await.unwrap().unwrap();
    let error = JobError {
        code: "no_audio".into(),
        message: "the input has no audio stream".into(),
    };
    assert!(store.fail(&job.id, "w1", error.clone()).await.unwrap());
    let failed = store.get(&job.id).await.unwrap().unwrap().result();
    assert_eq!(failed.status, JobStatus::Failed);
    assert_eq!(failed.words, None);
    assert_eq!(failed.error, Some(error));
}

async fn expired_leases_requeue_then_exhaust(store: Arc<dyn JobStore>) {
    let job = store.submit(spec(1)).await.unwrap();
    for attempt in 1..=3 {
        let claimed = store
            .claim(&worker(&format!("w{attempt}"), 1))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.id, job.id);
        assert_eq!(claimed.attempts, attempt);
        tokio::time::sleep(Duration::from_millis(20)).await;
        // The stalled holder lost its lease: it can no longer finish the job.
        assert!(
            !store
                .complete(&job.id, &format!("w{attempt}"), words())
                .await
                .unwrap()
        );
    }
    assert!(store.claim(&worker("w4", 60_000)).await.unwrap().is_none());
    let exhausted = store.get(&job.id).await.unwrap().unwrap();
    assert_eq!(exhausted.status, JobStatus::Failed);
    assert_eq!(exhausted.error.unwrap().code, "retries_exhausted");
}

async fn release_all_requeues_in_progress(store: Arc<dyn JobStore>) {
    let job = store.submit(spec(1)).await.unwrap();
    store
        .claim(&worker("proc-1/0", 60_000))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.release_all("other-").await.unwrap(), 0);
    assert_eq!(store.release_all("proc-1/").await.unwrap(), 1);
    assert_eq!(
        store.get(&job.id).await.unwrap().unwrap().status,
        JobStatus::InQueue
    );
    assert!(!store.complete(&job.id, "proc-1/0", words()).await.unwrap());
    let again = store
        .claim(&worker("proc-2/0", 60_000))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.id.as_str(), again.attempts), (job.id.as_str(), 2));
}

async fn concurrent_claims_never_share_a_job(store: Arc<dyn JobStore>) {
    for n in 0..40 {
        store.submit(spec(n)).await.unwrap();
    }
    let mut tasks = Vec::new();
    for w in 0..8 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(job) = store
                .claim(&worker(&format!("w{w}"), 60_000))
                .await
                .unwrap()
            {
                assert!(
                    store
                        .complete(&job.id, &format!("w{w}"), words())
                        .await
                        .unwrap()
                );
                mine.push(job.id);
            }
            mine
        }));
    }
    let mut seen = HashSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(seen.insert(id), "a job was claimed twice");
        }
    }
    assert_eq!(seen.len(), 40);
}

macro_rules! conformance {
    ($backend:ident, $make:expr) => {
        mod $backend {
            use super::*;

            conformance!(@each $make;
                submit_get_and_claim_in_order,
                only_the_holder_finishes_and_finished_jobs_stay,
                failures_carry_code_and_message,
                expired_leases_requeue_then_exhaust,
                release_all_requeues_in_progress,
                concurrent_claims_never_share_a_job,
            );
        }
    };
    (@each $make:expr; $($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let (store, _guard) = $make.await;
                super::$case(store).await;
            }
        )+
    };
}

async fn embedded() -> (Arc<dyn JobStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedJobStore::open(dir.path().join("jobs.redb")).unwrap();
    (Arc::new(store), dir)
}

/// A fresh PostgreSQL server per test (about a second to start), killed when the test ends.
async fn postgres() -> (Arc<dyn JobStore>, PostgresServer) {
    let server = tokio::task::spawn_blocking(|| PostgresServer::start().unwrap())
        .await
        .unwrap();
    let url = server.database("jobs").unwrap();
    let store = PostgresJobStore::connect(&url).await.unwrap();
    (Arc::new(store), server)
}

conformance!(embedded, embedded());
conformance!(postgres, postgres());

#[tokio::test(flavor = "multi_thread")]
async fn postgres_migrations_are_idempotent_and_concurrent() {
    let server = tokio::task::spawn_blocking(|| PostgresServer::start().unwrap())
        .await
        .unwrap();
    let url = server.database("jobs").unwrap();
    let connects: Vec<_> = (0..4)
        .map(|_| {
            tokio::spawn({
                let url = url.clone();
                async move { PostgresJobStore::connect(&url).await.unwrap() }
            })
        })
        .collect();
    let mut stores = Vec::new();
    for c in connects {
        stores.push(c.await.unwrap());
    }
    let job = stores[0].submit(spec(1)).await.unwrap();
    assert_eq!(stores[3].get(&job.id).await.unwrap().unwrap().spec, spec(1));
}

#[tokio::test]
async fn embedded_jobs_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/jobs.redb");
    let id = {
        let store = EmbeddedJobStore::open(&path).unwrap();
        let job = store.submit(spec(7)).await.unwrap();
        store
            .claim(&worker("proc-a/0", 60_000))
            .await
            .unwrap()
            .unwrap();
        job.id
    };
    let store = EmbeddedJobStore::open(&path).unwrap();
    let job = store.get(&id).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::InProgress);
    assert_eq!(store.release_all("").await.unwrap(), 1);
    assert_eq!(
        store
            .claim(&worker("proc-b/0", 60_000))
            .await
            .unwrap()
            .unwrap()
            .id,
        id
    );
}
