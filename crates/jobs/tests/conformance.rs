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
use caption_jobs::{
    ClaimOptions, EmbeddedJobStore, Error, JobKind, JobSpec, JobStore, PostgresJobStore, now_ms,
};
use caption_testkit::PostgresServer;

fn spec(n: usize) -> JobSpec {
    JobSpec::transcribe(format!("uploads/{n}/clip.mp4"), "auto")
}

fn of_kind(name: &str, lease_ms: u64, kind: JobKind) -> ClaimOptions {
    worker(name, lease_ms).kind(kind)
}

fn hooked(n: usize) -> JobSpec {
    spec(n).with_webhook(Some(format!("https://hooks.example/{n}")))
}

/// The deliveries queued so far, claimed by one webhook worker: (delivery input, url).
async fn deliveries(store: &Arc<dyn JobStore>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    while let Some(d) = store
        .claim(&of_kind("hooks", 60_000, JobKind::Webhook))
        .await
        .unwrap()
    {
        assert_eq!(d.spec.kind, JobKind::Webhook);
        found.push((d.spec.input.clone(), d.spec.webhook_url.clone().unwrap()));
        assert!(store.complete(&d.id, "hooks", Vec::new()).await.unwrap());
    }
    found
}

fn worker(name: &str, lease_ms: u64) -> ClaimOptions {
    ClaimOptions::new(name, JobKind::Transcribe)
        .lease(Duration::from_millis(lease_ms))
        .max_attempts(3)
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

async fn kinds_are_claimed_by_their_own_workers(store: Arc<dyn JobStore>) {
    let generate = store
        .submit(JobSpec {
            kind: JobKind::Generate,
            payload: Some(serde_json::json!({"output": "outputs/x.mp4"})),
            ..spec(1)
        })
        .await
        .unwrap();
    let transcribe = store.submit(spec(2)).await.unwrap();
    let claimed = store.claim(&worker("t", 60_000)).await.unwrap().unwrap();
    assert_eq!(
        claimed.id, transcribe.id,
        "a transcription worker skips generate jobs"
    );
    assert!(store.claim(&worker("t2", 60_000)).await.unwrap().is_none());
    let claimed = store
        .claim(&of_kind("g", 60_000, JobKind::Generate))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, generate.id);
    assert_eq!(claimed.spec.payload, generate.spec.payload);
}

async fn cancel_stops_queued_and_running_jobs(store: Arc<dyn JobStore>) {
    let running = store.submit(hooked(1)).await.unwrap();
    let queued = store.submit(hooked(2)).await.unwrap();
    store.claim(&worker("w1", 60_000)).await.unwrap().unwrap();
    assert!(store.set_duration(&running.id, "w1", 12.5).await.unwrap());

    let cancelled = store.cancel(&queued.id).await.unwrap().unwrap();
    assert_eq!(cancelled.status, JobStatus::Failed);
    assert_eq!(cancelled.error.unwrap().code, "cancelled");
    assert!(
        store.claim(&worker("w2", 60_000)).await.unwrap().is_none(),
        "nothing left to claim"
    );

    let cancelled = store.cancel(&running.id).await.unwrap().unwrap();
    assert_eq!(cancelled.status, JobStatus::Failed);
    assert_eq!(cancelled.duration_s, Some(12.5));
    // Its worker no longer holds it.
    assert!(
        !store
            .heartbeat(&running.id, "w1", 50, Duration::from_secs(60))
            .await
            .unwrap()
    );
    assert!(!store.complete(&running.id, "w1", words()).await.unwrap());
    assert_eq!(
        store.get(&running.id).await.unwrap().unwrap().status,
        JobStatus::Failed
    );
    // Cancelling a finished job changes nothing; an unknown one is None.
    assert_eq!(store.cancel(&running.id).await.unwrap().unwrap(), cancelled);
    assert!(store.cancel("no-such-job").await.unwrap().is_none());

    let mut announced: Vec<String> = deliveries(&store)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    announced.sort();
    let mut expected = vec![running.id.clone(), queued.id.clone()];
    expected.sort();
    assert_eq!(
        announced, expected,
        "each cancelled job's end is announced once"
    );
}

async fn finishing_a_hooked_job_queues_one_delivery(store: Arc<dyn JobStore>) {
    let done = store.submit(hooked(1)).await.unwrap();
    let failed = store.submit(hooked(2)).await.unwrap();
    let silent = store.submit(spec(3)).await.unwrap();
    for (job, name) in [(&done, "a"), (&failed, "b"), (&silent, "c")] {
        let claimed = store.claim(&worker(name, 60_000)).await.unwrap().unwrap();
        assert_eq!(&claimed.id, &job.id);
    }
    assert!(deliveries(&store).await.is_empty(), "nothing finished yet");
    assert!(store.complete(&done.id, "a", words()).await.unwrap());
    let error = JobError {
        code: "no_audio".into(),
        message: "x".into(),
    };
    assert!(store.fail(&failed.id, "b", error).await.unwrap());
    assert!(store.complete(&silent.id, "c", words()).await.unwrap());
    // Deliveries come in no particular order: compare as sorted lists (ids are random).
    let mut found = deliveries(&store).await;
    found.sort();
    let mut expected = vec![
        (done.id.clone(), "https://hooks.example/1".to_owned()),
        (failed.id.clone(), "https://hooks.example/2".to_owned()),
    ];
    expected.sort();
    assert_eq!(found, expected);
    // A delivery announces nothing itself.
    assert!(deliveries(&store).await.is_empty());

    // A job that exhausts its retries is announced too.
    let stalled = store.submit(hooked(4)).await.unwrap();
    for n in 0..3 {
        store
            .claim(&worker(&format!("s{n}"), 1))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(store.claim(&worker("s4", 60_000)).await.unwrap().is_none());
    assert_eq!(
        deliveries(&store).await,
        vec![(stalled.id.clone(), "https://hooks.example/4".to_owned())]
    );
}

async fn retry_later_waits_then_runs_again(store: Arc<dyn JobStore>) {
    let job = store
        .submit(JobSpec {
            kind: JobKind::Webhook,
            webhook_url: Some("https://hooks.example/x".into()),
            ..spec(1)
        })
        .await
        .unwrap();
    let hooks = |name: &str| of_kind(name, 60_000, JobKind::Webhook);
    store.claim(&hooks("d1")).await.unwrap().unwrap();
    let error = JobError {
        code: "http_500".into(),
        message: "the receiver answered 500".into(),
    };
    assert!(
        !store
            .retry_later(&job.id, "intruder", 0, error.clone())
            .await
            .unwrap()
    );
    let after = now_ms() + 400;
    assert!(
        store
            .retry_later(&job.id, "d1", after, error.clone())
            .await
            .unwrap()
    );
    let waiting = store.get(&job.id).await.unwrap().unwrap();
    assert_eq!(waiting.status, JobStatus::InQueue);
    assert_eq!((waiting.retries, waiting.attempts), (1, 0));
    assert_eq!(waiting.error, Some(error));
    assert!(
        store.claim(&hooks("d2")).await.unwrap().is_none(),
        "not before its time"
    );
    while now_ms() <= after + 50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = store.claim(&hooks("d2")).await.unwrap().unwrap();
    assert_eq!(again.id, job.id);
    assert_eq!(again.attempts, 1);
    assert!(store.complete(&job.id, "d2", Vec::new()).await.unwrap());
    assert_eq!(
        store.get(&job.id).await.unwrap().unwrap().status,
        JobStatus::Completed
    );
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
                kinds_are_claimed_by_their_own_workers,
                cancel_stops_queued_and_running_jobs,
                finishing_a_hooked_job_queues_one_delivery,
                retry_later_waits_then_runs_again,
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

#[tokio::test]
async fn a_closed_embedded_store_lets_the_next_open_in_while_its_clones_live() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.redb");
    let first = EmbeddedJobStore::open(&path).unwrap();
    let job = first.submit(spec(3)).await.unwrap();
    let lingering = first.clone();
    match EmbeddedJobStore::open(&path) {
        Err(Error::Database { message, .. }) => {
            assert!(message.contains("already open"), "{message}");
        }
        other => panic!("a second open of a live store must be refused: {other:?}"),
    }

    first.close().await;
    drop(first);
    let second = EmbeddedJobStore::open(&path).unwrap();
    assert_eq!(second.get(&job.id).await.unwrap().unwrap().spec, spec(3));
    match lingering.get(&job.id).await {
        Err(Error::Unavailable { message, .. }) => assert!(message.contains("closed")),
        other => panic!("a closed store must refuse calls: {other:?}"),
    }
    assert!(matches!(
        lingering.submit(spec(4)).await,
        Err(Error::Unavailable { .. })
    ));
    // Closing twice is harmless, and the store opened after it keeps working.
    lingering.close().await;
    second.submit(spec(5)).await.unwrap();
}
