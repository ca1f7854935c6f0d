//! Scaling out: three `captions serve` processes over one PostgreSQL job store and one
//! S3-compatible bucket. Thirty transcription jobs and six background generates, each with a
//! webhook, are spread across them; one process is SIGKILLed while it holds a generate job, and
//! every job still completes exactly once, readable from every surviving process, with its
//! event delivered to a receiver in the test (at least once, one delivery job per job, no
//! more requests than tries).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use caption_testkit::PostgresServer;
use caption_testkit::webhook::Receiver;
use serde_json::{Value, json};
use support::{Client, Service, espeak_wav};

const JOBS: usize = 30;
const GENERATES: usize = 6;
const KEY: &str = "scale-out-key";

/// A 20 s video of `wav`'s speech over a gray frame.
fn speech_clip(dir: &Path, wav: &Path) -> std::path::PathBuf {
    let clip = dir.join("clip.mp4");
    support::run(
        "ffmpeg",
        &[
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "color=c=gray:s=640x360:r=25:d=20",
            "-i",
            wav.to_str().unwrap(),
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-af",
            "apad",
            "-t",
            "20",
            clip.to_str().unwrap(),
        ],
    );
    clip
}

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
    let s3 = support::start_s3s();
    let work = tempfile::tempdir().unwrap();
    let mut env = support::s3_env(&s3);
    env.extend([
        ("CAPTIONS_API_KEYS", KEY.to_owned()),
        ("CAPTIONS_DATABASE_URL", database_url.clone()),
        ("CAPTIONS_WORKERS", "1".to_owned()),
        ("CAPTIONS_THREADS_PER_JOB", "1".to_owned()),
        ("CAPTIONS_LEASE_S", "3".to_owned()),
        ("CAPTIONS_GENERATE_SLOTS", "1".to_owned()),
        ("CAPTIONS_ENCODER_THREADS", "1".to_owned()),
        ("CAPTIONS_WEBHOOK_SECRET", "scale-out-secret".to_owned()),
        ("CAPTIONS_WEBHOOK_ALLOW_PRIVATE", "true".to_owned()),
        ("CAPTIONS_WEBHOOK_RETRY_BASE_MS", "200".to_owned()),
    ]);
    let receiver = Receiver::start().await.unwrap();
    let hook = receiver.url().to_owned();
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

    let wav = speech_wav(work.path());
    let input = clients[0].upload(&wav, "speech.wav", "audio/wav").await;
    let clip = clients[0]
        .upload(&speech_clip(work.path(), &wav), "clip.mp4", "video/mp4")
        .await;
    // Background generates first, through the process to be killed, so that its generate
    // worker is among the first to take one.
    let words = serde_json::json!([
        {"start": 0.2, "end": 0.8, "word": "good", "punctuated_word": "Good"},
        {"start": 0.8, "end": 1.5, "word": "morning", "punctuated_word": "morning."}
    ]);
    let mut generates = Vec::new();
    for _ in 0..GENERATES {
        let (status, body) = clients[2]
            .post(
                "/v1/generate",
                &json!({"input": clip, "words": words, "async": true, "webhook_url": hook}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        generates.push((
            body["job_id"].as_str().unwrap().to_owned(),
            body["download_url"].as_str().unwrap().to_owned(),
        ));
    }
    let mut ids = Vec::new();
    for n in 0..JOBS {
        let (status, body) = clients[n % 3]
            .post(
                "/v1/transcript",
                &json!({"input": input, "lang": "en", "webhook_url": hook}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        ids.push(body["job_id"].as_str().unwrap().to_owned());
    }

    // Kill the third process while it holds a generate job (its worker names start with its
    // pid).
    let (db, connection) = tokio_postgres::connect(&database_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let victim = services[2].as_mut().unwrap();
    let prefix = format!("{}-", victim.pid());
    let deadline = Instant::now() + Duration::from_secs(120);
    let held = loop {
        let rows = db
            .query("SELECT id FROM caption_jobs WHERE status = 'IN_PROGRESS' AND kind = 'generate' AND starts_with(worker, $1)", &[&prefix])
            .await
            .unwrap();
        if let Some(row) = rows.first() {
            break row.get::<_, String>(0);
        }
        assert!(
            Instant::now() < deadline,
            "the third process never took a generate job"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    victim.kill();
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

    // Every background generate completed, the one taken over included, and its link gives
    // the video.
    for (id, link) in &generates {
        let deadline = Instant::now() + Duration::from_secs(600);
        let result = loop {
            let (status, body) = clients[1].get(&format!("/v1/generate/{id}")).await;
            assert_eq!(status, 200, "{body}");
            if body["status"] == "COMPLETED" || body["status"] == "FAILED" {
                break body;
            }
            assert!(
                Instant::now() < deadline,
                "generate {id} never finished: {body}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(result["status"], "COMPLETED", "generate {id}: {result}");
        assert_eq!(result["progress"], 100);
        let video = reqwest::get(link).await.unwrap();
        assert_eq!(video.status(), 200, "{link}");
        assert_eq!(&video.bytes().await.unwrap()[4..8], b"ftyp");
    }

    // Every job's end reaches the receiver: one delivery job per job, each delivered, and the
    // receiver got each event no more often than it was tried.
    let announced: Vec<&String> = ids
        .iter()
        .chain(generates.iter().map(|(id, _)| id))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got: Vec<String> = receiver
            .events()
            .iter()
            .filter_map(|e| e["job_id"].as_str().map(str::to_owned))
            .collect();
        if announced.iter().all(|id| got.contains(id)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "events missing: got {} of {}",
            got.len(),
            announced.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let deliveries = db
        .query(
            "SELECT id, input, status, attempts, retries FROM caption_jobs WHERE kind = 'webhook'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(deliveries.len(), announced.len(), "one delivery per job");
    let mut received: HashMap<String, Vec<Value>> = HashMap::new();
    for event in &receiver.events() {
        received
            .entry(event["id"].as_str().unwrap().to_owned())
            .or_default()
            .push(event.clone());
    }
    for row in &deliveries {
        let (id, job): (String, String) = (row.get(0), row.get(1));
        assert_eq!(
            row.get::<_, String>(2),
            "COMPLETED",
            "delivery {id} of job {job}"
        );
        let tries = row.get::<_, i32>(3) + row.get::<_, i32>(4);
        let got = received.get(&id).map_or(0, Vec::len);
        assert!(
            got >= 1 && i32::try_from(got).unwrap() <= tries,
            "event {id} of job {job}: received {got} times for {tries} tries"
        );
        let event = &received[&id][0];
        assert_eq!(event["job_id"], job.as_str());
        assert_eq!(event["status"], "COMPLETED");
        let kind = if generates.iter().any(|(g, _)| *g == job) {
            "generate.completed"
        } else {
            "transcript.completed"
        };
        assert_eq!(event["type"], kind, "{event}");
    }

    // Exactly once: only the interrupted job(s) were claimed twice, and each completion was
    // recorded by the lease holder alone (the store refuses any other).
    let rows = db
        .query(
            "SELECT id, attempts, status FROM caption_jobs WHERE kind <> 'webhook'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), JOBS + GENERATES);
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
