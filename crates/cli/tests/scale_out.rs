//! Scaling out: three `captions serve` processes over one PostgreSQL job store and one
//! S3-compatible bucket. Thirty transcription jobs are spread across them, one process is
//! SIGKILLed while it holds a job, and every job still completes exactly once, readable from
//! every surviving process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use caption_testkit::PostgresServer;
use serde_json::{Value, json};
use support::{Client, S3_ACCESS_KEY, S3_BUCKET, S3_SECRET_KEY, S3sServer, Service, espeak_wav};

const JOBS: usize = 30;
const KEY: &str = "scale-out-key";

fn speech_wav(dir: &Path) -> std::path::PathBuf {
    let wav = dir.join("speech.wav");
    espeak_wav(&wav, 150, "Good morning. Thank you all.");
    wav
}

#[tokio::test(flavor = "multi_thread")]
async fn three_processes_share_jobs_and_survive_a_sigkill() {
    let postgres = tokio::task::spawn_blocking(|| PostgresServer::start().unwrap())
        .await
        .unwrap();
    let database_url = postgres.database("captions").unwrap();
    let s3 = S3sServer::start();
    let work = tempfile::tempdir().unwrap();
    let env = vec![
        ("CAPTIONS_API_KEYS", KEY.to_owned()),
        ("CAPTIONS_DATABASE_URL", database_url.clone()),
        ("CAPTIONS_STORAGE", "s3".to_owned()),
        ("CAPTIONS_S3_ENDPOINT", s3.endpoint.clone()),
        ("CAPTIONS_S3_BUCKET", S3_BUCKET.to_owned()),
        ("CAPTIONS_S3_REGION", "us-east-1".to_owned()),
        ("CAPTIONS_S3_ACCESS_KEY", S3_ACCESS_KEY.to_owned()),
        ("CAPTIONS_S3_SECRET_KEY", S3_SECRET_KEY.to_owned()),
        ("CAPTIONS_WORKERS", "1".to_owned()),
        ("CAPTIONS_THREADS_PER_JOB", "1".to_owned()),
        ("CAPTIONS_LEASE_S", "3".to_owned()),
    ];
    // Each process has its own data folder: nothing is shared but the database and the bucket.
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut services: Vec<Option<Service>> = dirs
        .iter()
        .map(|d| Some(Service::start(d.path(), &env)))
        .collect();
    let clients: Vec<Client> = services
        .iter()
        .map(|s| Client {
            http: reqwest::Client::new(),
            base: s.as_ref().unwrap().base.clone(),
            key: KEY.to_owned(),
        })
        .collect();

    let input = clients[0]
        .upload(&speech_wav(work.path()), "speech.wav", "audio/wav")
        .await;
    let mut ids = Vec::new();
    for n in 0..JOBS {
        let (status, body) = clients[n % 3]
            .post("/v1/transcript", &json!({"input": input, "lang": "en"}))
            .await;
        assert_eq!(status, 200, "{body}");
        ids.push(body["job_id"].as_str().unwrap().to_owned());
    }

    // Kill the third process while it holds a job (its worker names start with its pid).
    let (db, connection) = tokio_postgres::connect(&database_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let victim = services[2].as_mut().unwrap();
    let prefix = format!("{}-", victim.child.id());
    let deadline = Instant::now() + Duration::from_secs(120);
    let held = loop {
        let rows = db
            .query("SELECT id FROM caption_jobs WHERE status = 'IN_PROGRESS' AND starts_with(worker, $1)", &[&prefix])
            .await
            .unwrap();
        if let Some(row) = rows.first() {
            break row.get::<_, String>(0);
        }
        assert!(
            Instant::now() < deadline,
            "the third process never took a job"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    victim.child.kill().unwrap(); // SIGKILL
    victim.child.wait().unwrap();
    services[2] = None;

    let deadline = Instant::now() + Duration::from_secs(600);
    let mut results: Vec<Value> = Vec::new();
    for id in &ids {
        let result = loop {
            let (status, body) = clients[0].get(&format!("/v1/transcript/{id}")).await;
            assert_eq!(status, 200, "{body}");
            if body["status"] == "COMPLETED" || body["status"] == "FAILED" {
                break body;
            }
            assert!(Instant::now() < deadline, "job {id} never finished: {body}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(result["status"], "COMPLETED", "job {id}: {result}");
        let (_, from_second) = clients[1].get(&format!("/v1/transcript/{id}")).await;
        assert_eq!(
            from_second, result,
            "the same job read from another process"
        );
        results.push(result);
    }
    let words = &results[0]["words"];
    assert!(!words.as_array().unwrap().is_empty());
    for result in &results {
        assert_eq!(
            &result["words"], words,
            "every job transcribed the same input to the same words"
        );
    }

    // Exactly once: only the interrupted job(s) were claimed twice, and each completion was
    // recorded by the lease holder alone (the store refuses any other).
    let rows = db
        .query("SELECT id, attempts, status FROM caption_jobs", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), JOBS);
    let retried: Vec<String> = rows
        .iter()
        .filter(|r| r.get::<_, i32>(1) > 1)
        .map(|r| r.get(0))
        .collect();
    assert!(
        retried.contains(&held),
        "the job held by the killed process ran again"
    );
    assert!(
        rows.iter()
            .all(|r| r.get::<_, i32>(1) <= 2 && r.get::<_, String>(2) == "COMPLETED")
    );

    for service in services.into_iter().flatten() {
        service.terminate();
    }
    drop(postgres);
}
