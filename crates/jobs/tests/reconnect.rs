//! The PostgreSQL job store across a server restart: the calls after it reconnect on their
//! own, and a job claimed before it is finished by its holder, once.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::JobStatus;
use caption_jobs::{ClaimOptions, JobKind, JobSpec, JobStore, PostgresJobStore};

#[tokio::test(flavor = "multi_thread")]
async fn calls_after_a_restart_reconnect_and_the_holder_finishes_its_job() {
    let mut server = tokio::task::spawn_blocking(caption_testkit::PostgresServer::start)
        .await
        .unwrap()
        .unwrap();
    let store = PostgresJobStore::connect(&server.database("jobs").unwrap())
        .await
        .unwrap();
    let running = store
        .submit(JobSpec::transcribe("uploads/1/a.wav", "en"))
        .await
        .unwrap();
    let waiting = store
        .submit(JobSpec::transcribe("uploads/1/b.wav", "en"))
        .await
        .unwrap();
    let claim = ClaimOptions::new("w1", JobKind::Transcribe);
    assert_eq!(
        store.claim(&claim).await.unwrap().unwrap().id,
        running.id,
        "oldest first"
    );

    let server = tokio::task::spawn_blocking(move || {
        server.restart().unwrap();
        server
    })
    .await
    .unwrap();

    // The connection the store held is gone: each call makes a new one.
    assert_eq!(
        store.get(&waiting.id).await.unwrap().unwrap().status,
        JobStatus::InQueue
    );
    assert!(store.complete(&running.id, "w1", Vec::new()).await.unwrap());
    assert!(
        !store.complete(&running.id, "w1", Vec::new()).await.unwrap(),
        "a job ends once"
    );
    let done = store.get(&running.id).await.unwrap().unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(done.attempts, 1);
    let next = store
        .claim(&ClaimOptions::new("w2", JobKind::Transcribe))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.id, waiting.id);
    drop(server);
}
