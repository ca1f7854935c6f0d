//! The embedded job store on a disk that fills up: the write that needs room fails with
//! `disk_full`, what is stored stays readable, and writes work again once space is freed,
//! without reopening the store by hand (redb refuses every write after an I/O error until its
//! file is reopened; the store does that itself).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{ErrorCode, JobStatus};
use caption_jobs::{ClaimOptions, EmbeddedJobStore, JobKind, JobSpec, JobStore};

fn spec() -> JobSpec {
    JobSpec::transcribe("uploads/1/talk.wav", "en")
}

#[tokio::test]
async fn a_full_disk_is_disk_full_and_writes_resume_once_space_returns() {
    let disk = match caption_testkit::Tmpfs::mount(4) {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let store = EmbeddedJobStore::open(disk.path().join("jobs.redb")).unwrap();
    let first = store.submit(spec()).await.unwrap();
    disk.fill("filler");

    // The file has some room of its own; the write that needs more fails.
    let mut accepted = vec![first.id.clone()];
    let error = loop {
        match store.submit(spec()).await {
            Ok(job) => accepted.push(job.id),
            Err(error) => break error,
        }
        assert!(accepted.len() < 10_000, "the store never ran out of room");
    };
    assert_eq!(error.code(), ErrorCode::DiskFull, "{error}");
    let again = store.submit(spec()).await.unwrap_err();
    assert_eq!(again.code(), ErrorCode::DiskFull, "{again}");
    for id in &accepted {
        let job = store.get(id).await.unwrap().unwrap();
        assert_eq!(job.status, JobStatus::InQueue);
    }

    std::fs::remove_file(disk.path().join("filler")).unwrap();
    let late = store.submit(spec()).await.unwrap();
    let claimed = store
        .claim(&ClaimOptions::new("w1", JobKind::Transcribe))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, first.id, "oldest first, none lost");
    assert!(store.complete(&first.id, "w1", Vec::new()).await.unwrap());
    assert_eq!(
        store.get(&late.id).await.unwrap().unwrap().status,
        JobStatus::InQueue
    );
}
