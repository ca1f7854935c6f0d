//! Faults a running `captions serve` survives: the S3 bucket stops in the middle of a
//! generate, PostgreSQL restarts while jobs run, and the data folder's disk fills up.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Client, Service};

const KEY: &str = "faults-key";

/// The service on `data` with `env`, a client of it, and a folder for the test's files.
fn start(data: &Path, env: &[(&str, String)]) -> (Service, Client, tempfile::TempDir) {
    let service = Service::start(data, env);
    let client = client(&service);
    (service, client, tempfile::tempdir().unwrap())
}

fn client(service: &Service) -> Client {
    Client {
        http: reqwest::Client::new(),
        base: service.base.clone(),
        key: KEY.to_owned(),
    }
}

/// A `seconds` long 640×360 H.264 clip with a tone, made by ffmpeg.
fn clip(dir: &Path, seconds: u32) -> PathBuf {
    let path = dir.join("clip.mp4");
    let video = format!("testsrc2=s=640x360:r=25:d={seconds}");
    let audio = format!("sine=frequency=440:duration={seconds}");
    let mut args = vec!["-f", "lavfi", "-i", &video, "-f", "lavfi", "-i", &audio];
    let fast = support::h264_fast();
    args.extend(fast.iter().copied());
    args.extend(["-c:a", "aac", "-shortest", path.to_str().unwrap()]);
    support::ffmpeg(&args);
    path
}

fn words() -> Value {
    json!([
        {"start": 0.2, "end": 0.8, "word": "good", "punctuated_word": "Good"},
        {"start": 0.8, "end": 1.5, "word": "morning", "punctuated_word": "morning."}
    ])
}

/// Every file under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// Waits (up to `limit`) until `ready` holds, checking every 20 ms.
fn wait_until(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The bucket stops answering while a synchronous generate burns: the request is a 503
/// `unavailable` with Retry-After, within seconds; nothing of the output (object or multipart
/// upload) is left in the bucket; once the bucket is back the same request succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_bucket_that_stops_mid_generate_is_a_503_and_leaves_nothing() {
    let mut s3 = support::start_s3s();
    let data = tempfile::tempdir().unwrap();
    let mut env = support::s3_env(&s3);
    env.extend([
        ("CAPTIONS_API_KEYS", KEY.to_owned()),
        ("CAPTIONS_GENERATE_SLOTS", "1".to_owned()),
        ("CAPTIONS_ENCODER_THREADS", "1".to_owned()),
    ]);
    let (_service, client, work) = start(data.path(), &env);
    let input = client
        .upload(&clip(work.path(), 8), "clip.mp4", "video/mp4")
        .await;
    let before = files_under(s3.root());

    let request = json!({"input": input, "words": words()});
    let generate = {
        let (http, base) = (client.http.clone(), client.base.clone());
        let request = request.clone();
        tokio::spawn(async move {
            http.post(format!("{base}/v1/generate"))
                .header("x-api-key", KEY)
                .json(&request)
                .send()
                .await
                .unwrap()
        })
    };
    // The burn writes its output in the scratch folder (under a partial name until it is
    // whole): the bucket goes away while it does.
    let scratch = data.path().join("tmp");
    tokio::task::spawn_blocking(move || {
        wait_until(Duration::from_secs(60), "the burn started", || {
            files_under(&scratch)
                .iter()
                .any(|f| f.contains("-captioned.mp4"))
        });
    })
    .await
    .unwrap();
    s3.stop();
    let stopped = Instant::now();
    let response = generate.await.unwrap();
    let answered_s = stopped.elapsed().as_secs_f64();
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.headers()["retry-after"], "5");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
    assert!(
        !body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1"),
        "{body}"
    );
    println!("503 answered {answered_s:.1} s after the bucket stopped");

    s3.restart().unwrap();
    // Nothing was added to the bucket's folder: no output object, no upload in progress.
    assert_eq!(files_under(s3.root()), before);

    let (status, body) = client.post("/v1/generate", &request).await;
    assert_eq!(status, 200, "{body}");
    let video = reqwest::get(body["download_url"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(video.status().as_u16(), 200);
    let bytes = video.bytes().await.unwrap();
    assert_eq!(&bytes[4..8], b"ftyp", "an MP4 file");
    assert!(
        files_under(s3.root())
            .iter()
            .any(|f| f.contains("outputs/") && f.ends_with("-captioned.mp4")),
        "{:?}",
        files_under(s3.root())
    );
}

/// `text` spoken at 150 words a minute, as a WAV file in `dir`.
fn speech(dir: &Path, text: &str) -> PathBuf {
    let wav = dir.join("speech.wav");
    support::espeak_wav(&wav, 150, text);
    wav
}

/// Polls `GET {path}/{id}` until the job ends (or `limit` passes); returns its last body.
async fn wait_finished(client: &Client, path: &str, id: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let (status, body) = client.get(&format!("{path}/{id}")).await;
        assert_eq!(status, 200, "{body}");
        if body["status"] == "COMPLETED" || body["status"] == "FAILED" {
            return body;
        }
        assert!(Instant::now() < deadline, "job {id} never finished: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (db, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    db
}

/// PostgreSQL restarts (a fast shutdown and a start, as `pg_ctl restart` does) while
/// transcription jobs run and others wait: the workers reconnect, jobs submitted right after
/// the restart are accepted, and every job completes, each claimed once (it ran once) and none
/// left queued or running.
#[tokio::test(flavor = "multi_thread")]
async fn jobs_end_once_across_a_postgres_restart() {
    let mut postgres = tokio::task::spawn_blocking(caption_testkit::PostgresServer::start)
        .await
        .unwrap()
        .unwrap();
    let database_url = postgres.database("captions").unwrap();
    let data = tempfile::tempdir().unwrap();
    let env = vec![
        ("CAPTIONS_API_KEYS", KEY.to_owned()),
        ("CAPTIONS_DATABASE_URL", database_url.clone()),
        ("CAPTIONS_WORKERS", "2".to_owned()),
        ("CAPTIONS_THREADS_PER_JOB", "1".to_owned()),
        ("CAPTIONS_LEASE_S", "20".to_owned()),
    ];
    let (_service, client, work) = start(data.path(), &env);
    let input = client
        .upload(
            &speech(work.path(), "Good morning. Thank you all."),
            "speech.wav",
            "audio/wav",
        )
        .await;
    let transcript = json!({"input": input, "lang": "en"});
    let mut ids = Vec::new();
    for _ in 0..4 {
        let (status, body) = client.post("/v1/transcript", &transcript).await;
        assert_eq!(status, 200, "{body}");
        ids.push(body["job_id"].as_str().unwrap().to_owned());
    }

    // Restart while jobs run and others wait.
    let db = connect(&database_url).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let row = db
            .query_one(
                "SELECT count(*) FILTER (WHERE status = 'IN_PROGRESS'),
                        count(*) FILTER (WHERE status = 'IN_QUEUE')
                 FROM caption_jobs WHERE kind = 'transcribe'",
                &[],
            )
            .await
            .unwrap();
        if row.get::<_, i64>(0) > 0 && row.get::<_, i64>(1) > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no job ever ran while others waited"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(db);
    postgres = tokio::task::spawn_blocking(move || {
        postgres.restart().unwrap();
        postgres
    })
    .await
    .unwrap();
    let (status, body) = client.post("/v1/transcript", &transcript).await;
    assert_eq!(status, 200, "a job submitted after the restart: {body}");
    ids.push(body["job_id"].as_str().unwrap().to_owned());

    let mut words = Vec::new();
    for id in &ids {
        let done = wait_finished(&client, "/v1/transcript", id, Duration::from_secs(60)).await;
        assert_eq!(done["status"], "COMPLETED", "job {id}: {done}");
        words.push(done["words"].clone());
    }
    assert!(!words[0].as_array().unwrap().is_empty());
    assert!(words.iter().all(|w| w == &words[0]), "{words:?}");

    let db = connect(&database_url).await;
    let rows = db
        .query(
            "SELECT id, status, attempts, retries FROM caption_jobs WHERE kind = 'transcribe'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), ids.len(), "one record per submitted job");
    for row in rows {
        let (id, status) = (row.get::<_, String>(0), row.get::<_, String>(1));
        assert!(ids.contains(&id));
        assert_eq!(status, "COMPLETED", "{id}");
        assert_eq!(
            row.get::<_, i32>(2),
            1,
            "job {id} was claimed more than once"
        );
        assert_eq!(
            row.get::<_, i32>(3),
            0,
            "job {id} was put back in the queue"
        );
    }
    drop(postgres);
}

/// Each of the jobs `ids` is readable, queued or running (neither failed nor done).
async fn assert_unfinished(client: &Client, ids: &[String]) {
    for id in ids {
        let (status, body) = client.get(&format!("/v1/transcript/{id}")).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body["status"] == "IN_QUEUE" || body["status"] == "IN_PROGRESS",
            "{body}"
        );
    }
}

/// The data folder (local storage, scratch files, the embedded job database) sits on a small
/// tmpfs that fills up: a generate is a 507 `disk_full`, jobs already queued wait (queued
/// again, not failed), a new job is accepted while the job database has room and refused with
/// 507 `disk_full` once it has none, never a 500; the service restarts on the full disk and
/// reads its jobs; once space is freed, every accepted job completes.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_is_a_507_and_jobs_resume_when_space_returns() {
    let disk = match caption_testkit::Tmpfs::mount(24) {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let data = disk.path().join("data");
    let env = vec![
        ("CAPTIONS_API_KEYS", KEY.to_owned()),
        ("CAPTIONS_WORKERS", "1".to_owned()),
        ("CAPTIONS_THREADS_PER_JOB", "1".to_owned()),
        ("CAPTIONS_GENERATE_SLOTS", "1".to_owned()),
    ];
    let (service, client, work) = start(&data, &env);
    // 48 kHz stereo PCM: 3 s are 0.58 MB, more than the room left below.
    let wav = work.path().join("speech48k.wav");
    support::ffmpeg(&[
        "-i",
        speech(work.path(), "Good morning. Thank you all for coming today.")
            .to_str()
            .unwrap(),
        "-ar",
        "48000",
        "-ac",
        "2",
        "-af",
        "apad=whole_dur=3",
        wav.to_str().unwrap(),
    ]);
    let input = client.upload(&wav, "speech.wav", "audio/wav").await;
    let video = client
        .upload(&clip(work.path(), 2), "clip.mp4", "video/mp4")
        .await;

    // Space the test frees later, to give the job database room but not a scratch copy (the
    // 3 s stereo WAV is 576 KB). 256 KiB was once too little for the database to grow into.
    std::fs::write(disk.path().join("reserve"), vec![0x5a_u8; 512 * 1024]).unwrap();
    disk.fill("filler");

    // Full: a generate cannot copy its input; a new job is refused once the job database
    // needs room it cannot have (it may have some left in its file), never with a 500.
    let (status, body) = client
        .post("/v1/generate", &json!({"input": video, "words": words()}))
        .await;
    assert_eq!(status, 507, "{body}");
    assert_eq!(body["error"]["code"], "disk_full", "{body}");
    assert!(
        !body["error"]["message"].as_str().unwrap().contains("/tmp"),
        "{body}"
    );
    let transcript = json!({"input": input, "lang": "en"});
    let mut ids = Vec::new();
    let refused = loop {
        let (status, body) = client.post("/v1/transcript", &transcript).await;
        if status != 200 {
            break (status, body);
        }
        ids.push(body["job_id"].as_str().unwrap().to_owned());
        assert!(ids.len() < 200, "the job database never ran out of room");
    };
    assert_eq!(refused.0, 507, "{}", refused.1);
    assert_eq!(refused.1["error"]["code"], "disk_full", "{}", refused.1);

    // A little room: jobs are accepted again (the job database was reopened), but cannot
    // fetch their input: they wait in the queue with the reason, they do not fail.
    std::fs::remove_file(disk.path().join("reserve")).unwrap();
    for _ in 0..2 {
        let (status, body) = client.post("/v1/transcript", &transcript).await;
        assert_eq!(status, 200, "{body}");
        ids.push(body["job_id"].as_str().unwrap().to_owned());
    }
    // An idle worker looks for jobs every 0.5 s and a job that met the full disk runs again
    // after 1 s, then 2 s: in 3 s each job has met it at least once.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_unfinished(&client, &ids).await;

    // The service restarts on the full disk and reads every job it accepted.
    drop(service);
    let service = Service::start(&data, &env);
    let client = self::client(&service);
    assert_unfinished(&client, &ids).await;

    // Space returns: every accepted job completes.
    std::fs::remove_file(disk.path().join("filler")).unwrap();
    for id in &ids {
        let done = wait_finished(&client, "/v1/transcript", id, Duration::from_secs(60)).await;
        assert_eq!(done["status"], "COMPLETED", "job {id}: {done}");
    }
    let (status, body) = client
        .post("/v1/generate", &json!({"input": video, "words": words()}))
        .await;
    assert_eq!(status, 200, "{body}");
    drop(service);
}
