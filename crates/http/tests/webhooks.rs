//! Webhooks, background generates and cancellation through a real service on a loopback port:
//! a small receiver in the test gets the signed events; the verification snippet of
//! docs/http.md checks a real delivery.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use bytes::Bytes;
use caption_http::{Server, ServiceConfig};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

const KEY: &str = "webhook-test-key";
const SECRET: &str = "whsec-test-0123456789";

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Hit {
    signature: String,
    event_id: String,
    body: Bytes,
    answered: u16,
    at: Instant,
}

impl Hit {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Clone, Default)]
struct ReceiverState {
    hits: Arc<Mutex<Vec<Hit>>>,
    /// Statuses to answer, in order; 200 once empty.
    script: Arc<Mutex<VecDeque<u16>>>,
}

/// A small HTTP server on 127.0.0.1 that records every event.
struct Receiver {
    url: String,
    state: ReceiverState,
}

impl Receiver {
    async fn start(script: &[u16]) -> Self {
        let state = ReceiverState::default();
        state.script.lock().unwrap().extend(script);
        let app = Router::new()
            .route("/hook", post(receive))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, state }
    }

    fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    /// Waits (bounded) until `done` holds for the hits so far.
    async fn wait_for(&self, what: &str, done: impl Fn(&[Hit]) -> bool) -> Vec<Hit> {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let hits = self.hits();
            if done(&hits) {
                return hits;
            }
            assert!(Instant::now() < deadline, "{what}: got {hits:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn receive(
    State(state): State<ReceiverState>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let answered = state.script.lock().unwrap().pop_front().unwrap_or(200);
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    state.hits.lock().unwrap().push(Hit {
        signature: header("x-captions-signature"),
        event_id: header("x-captions-event-id"),
        body,
        answered,
        at: Instant::now(),
    });
    StatusCode::from_u16(answered).unwrap()
}

/// The receiver's side of the signature check, written from the documentation alone.
fn verify(secret: &str, header: &str, body: &[u8]) -> bool {
    let mut t = None;
    let mut v1 = None;
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => t = Some(value.to_owned()),
            Some(("v1", value)) => v1 = hex::decode(value).ok(),
            _ => {}
        }
    }
    let (Some(t), Some(v1)) = (t, v1) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&v1).is_ok()
}

/// A file in `dir` named like a sound file that holds none: its transcription fails in the
/// worker.
fn not_media(dir: &Path) -> PathBuf {
    let path = dir.join("notes.wav");
    std::fs::write(&path, "not a sound file at all").unwrap();
    path
}

/// A `captions serve` in this process, on a loopback port.
struct Service {
    base: String,
    http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<caption_http::Result<()>>>,
}

fn config(data_dir: &Path) -> ServiceConfig {
    let mut config = ServiceConfig::default();
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.data_dir = data_dir.to_owned();
    config.api_keys = vec![KEY.to_owned()];
    config.model = "tiny.en".to_owned();
    config.workers = 1;
    config.threads_per_job = 2;
    config.webhook_secret = Some(SECRET.to_owned());
    config.webhook_allow_private = true;
    config.webhook_retry_base_ms = 200;
    config
}

impl Service {
    async fn start(config: ServiceConfig) -> Self {
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter("info")
            .try_init();
        let server = Server::bind(config).await.unwrap();
        let base = format!("http://{}", server.local_addr());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Self {
            base,
            http: reqwest::Client::new(),
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// A graceful stop, as on SIGTERM.
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap().unwrap();
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("x-api-key", KEY);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::DELETE, path, None).await
    }

    /// Submits a transcription of `input` that tells `webhook_url` when it ends; returns its
    /// job id.
    async fn transcribe_hooked(&self, input: &str, webhook_url: &str) -> String {
        let (status, body) = self
            .post(
                "/v1/transcript",
                &json!({"input": input, "webhook_url": webhook_url}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body["job_id"].as_str().unwrap().to_owned()
    }

    /// Uploads `path` through a signed descriptor; returns its file identifier.
    async fn upload(&self, path: &Path, file_name: &str) -> String {
        let (status, descriptor) = self
            .get(&format!("/v1/signedUrl?fileName={file_name}"))
            .await;
        assert_eq!(status, 200, "{descriptor}");
        let mut form = reqwest::multipart::Form::new();
        for (name, value) in descriptor["fields"].as_object().unwrap() {
            form = form.text(name.clone(), value.as_str().unwrap().to_owned());
        }
        let part = reqwest::multipart::Part::bytes(std::fs::read(path).unwrap())
            .file_name(file_name.to_owned());
        let upload = self
            .http
            .post(descriptor["url"].as_str().unwrap())
            .multipart(form.part("file", part))
            .send()
            .await
            .unwrap();
        assert!(upload.status().is_success(), "upload: {}", upload.status());
        descriptor["file"].as_str().unwrap().to_owned()
    }

    /// Polls a job until it ends; every answer seen on the way is returned.
    async fn until_done(&self, path: &str) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(600);
        let mut seen = Vec::new();
        loop {
            let (status, body) = self.get(path).await;
            assert_eq!(status, 200, "{body}");
            let done = body["status"] == "COMPLETED" || body["status"] == "FAILED";
            seen.push(body);
            if done {
                return seen;
            }
            assert!(Instant::now() < deadline, "{path} never ended: {seen:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn ffmpeg(args: &[&str]) {
    caption_testkit::media::ffmpeg(args).unwrap();
}

/// A gray video with a tone, `seconds` long, small enough to burn quickly.
fn make_clip(path: &Path, seconds: u32) {
    caption_testkit::media::tone_video(path, "color=c=gray:s=320x240:r=15", f64::from(seconds))
        .unwrap();
}

fn jfk_wav() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/audio/jfk.wav")
}

fn words() -> Value {
    json!([
        {"start": 0.5, "end": 1.0, "word": "hello", "punctuated_word": "Hello"},
        {"start": 1.2, "end": 2.0, "word": "world", "punctuated_word": "world."}
    ])
}

/// The signature-verification snippet of docs/http.md (the fenced block after the marker).
fn documented_snippet() -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/http.md"))
            .unwrap();
    let start = page
        .find("<!-- webhook-verify -->")
        .expect("docs/http.md shows how to verify a webhook signature");
    let rest = &page[start..];
    let code = &rest[rest.find("```python\n").unwrap() + "```python\n".len()..];
    code[..code.find("```").unwrap()].to_owned()
}

/// Runs the documented snippet on a delivery as docs/http.md says to; whether it accepted it.
fn documented_snippet_accepts(dir: &Path, header: &str, body: &[u8]) -> bool {
    let script = dir.join("verify_webhook.py");
    std::fs::write(&script, documented_snippet()).unwrap();
    let body_file = dir.join("body.json");
    std::fs::write(&body_file, body).unwrap();
    let status = Command::new("python3")
        .arg(&script)
        .arg(header)
        .arg(&body_file)
        .env("CAPTIONS_WEBHOOK_SECRET", SECRET)
        .status()
        .expect("python3 must be installed");
    status.success()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_event_type_arrives_signed_and_the_documented_snippet_verifies_it() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(&[]).await;
    let service = Service::start(config(&dir.path().join("data"))).await;
    let hook = receiver.url.clone();

    let speech = service.upload(&jfk_wav(), "jfk.wav").await;
    let clip_path = dir.path().join("clip.mp4");
    make_clip(&clip_path, 2);
    let clip = service.upload(&clip_path, "clip.mp4").await;
    let not_media = service.upload(&not_media(dir.path()), "notes.wav").await;

    let mut expected = Vec::new();
    for (input, kind) in [(&speech, "completed"), (&not_media, "failed")] {
        let (status, body) = service
            .post(
                "/v1/transcript",
                &json!({"input": input, "lang": "en", "webhook_url": hook}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        expected.push((
            format!("transcript.{kind}"),
            body["job_id"].as_str().unwrap().to_owned(),
        ));
    }
    // A wav has no video: that generate fails in its worker.
    for (input, kind) in [(&clip, "completed"), (&speech, "failed")] {
        let (status, body) = service
            .post(
                "/v1/generate",
                &json!({"input": input, "words": words(), "async": true, "webhook_url": hook}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        expected.push((
            format!("generate.{kind}"),
            body["job_id"].as_str().unwrap().to_owned(),
        ));
    }

    let hits = receiver.wait_for("four events", |h| h.len() >= 4).await;
    let mut events: Vec<(String, String)> = Vec::new();
    for hit in &hits {
        assert_eq!(hit.answered, 200);
        assert!(verify(SECRET, &hit.signature, &hit.body), "{hit:?}");
        assert!(!verify("another-secret", &hit.signature, &hit.body));
        // A tampered body fails verification.
        let mut tampered = hit.body.to_vec();
        let last = tampered.len() - 2;
        tampered[last] ^= 0x01;
        assert!(!verify(SECRET, &hit.signature, &tampered));

        let event = hit.json();
        assert_eq!(event["id"], hit.event_id.as_str(), "{event}");
        assert!(
            event["created_at"].as_str().unwrap().contains('T'),
            "{event}"
        );
        let kind = event["type"].as_str().unwrap().to_owned();
        let job_id = event["job_id"].as_str().unwrap().to_owned();
        if kind.ends_with(".completed") {
            assert_eq!(event["status"], "COMPLETED");
            assert!(event.get("error").is_none(), "{event}");
        } else {
            assert_eq!(event["status"], "FAILED");
            assert!(event["error"]["code"].is_string(), "{event}");
        }
        if kind == "generate.completed" {
            let link = event["download_url"].as_str().unwrap();
            let video = reqwest::get(link).await.unwrap();
            assert_eq!(video.status(), 200);
            assert_eq!(&video.bytes().await.unwrap()[4..8], b"ftyp");
        }
        if kind == "generate.failed" {
            assert_eq!(event["error"]["code"], "no_video", "{event}");
        }
        events.push((kind, job_id));
    }
    events.sort();
    expected.sort();
    assert_eq!(events, expected, "one event per job, of the right type");

    // The documented snippet accepts a real delivery and refuses it tampered.
    let delivered = &hits[0];
    assert!(documented_snippet_accepts(
        dir.path(),
        &delivered.signature,
        &delivered.body
    ));
    let tampered = String::from_utf8(delivered.body.to_vec())
        .unwrap()
        .replace("COMPLETED", "FAILED!!!")
        .replace("FAILED\"", "PASSED\"");
    assert_ne!(tampered.as_bytes(), &delivered.body[..]);
    assert!(!documented_snippet_accepts(
        dir.path(),
        &delivered.signature,
        tampered.as_bytes()
    ));

    // Each job's read-back agrees with its event.
    for (kind, job_id) in &expected {
        let path = if kind.starts_with("transcript") {
            format!("/v1/transcript/{job_id}")
        } else {
            format!("/v1/generate/{job_id}")
        };
        let (_, body) = service.get(&path).await;
        let want = if kind.ends_with("completed") {
            "COMPLETED"
        } else {
            "FAILED"
        };
        assert_eq!(body["status"], want, "{kind}: {body}");
    }
    let (_, transcribed) = service
        .get(&format!(
            "/v1/transcript/{}",
            expected
                .iter()
                .find(|(k, _)| k == "transcript.completed")
                .unwrap()
                .1
        ))
        .await;
    let duration = transcribed["duration_s"].as_f64().unwrap();
    assert!(
        (duration - 11.0).abs() < 0.5,
        "jfk.wav lasts 11 s: {transcribed}"
    );
    service.stop().await;
}

/// A stop releases the data folder before it returns: a service started right after it on the
/// same folder opens the job store, however often in a row, even when the stop comes while a
/// webhook is being delivered (a connection's last handle on the engine may still be dropping
/// then).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stopped_service_releases_its_data_folder_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let receiver = Receiver::start(&[500; 64]).await;
    let text_path = not_media(dir.path());
    for round in 1..=30 {
        let service = Service::start(config(&data)).await;
        let input = service.upload(&text_path, "notes.wav").await;
        service.transcribe_hooked(&input, &receiver.url).await;
        receiver
            .wait_for("a try in this round", |h| h.len() >= round)
            .await;
        service.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_event_is_retried_with_backoff_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let receiver = Receiver::start(&[500, 500, 500]).await;
    let first = Service::start(config(&data)).await;
    let input = first.upload(&not_media(dir.path()), "notes.wav").await;
    let job_id = first.transcribe_hooked(&input, &receiver.url).await;

    // The first try is refused; the service stops before the retry.
    receiver.wait_for("the first try", |h| !h.is_empty()).await;
    first.stop().await;
    let second = Service::start(config(&data)).await;

    let hits = receiver
        .wait_for("three refusals then an acceptance", |h| {
            h.iter().any(|hit| hit.answered == 200)
        })
        .await;
    // Well past the next backoff step (200 ms doubled four times): no extra delivery follows
    // the acceptance.
    tokio::time::sleep(Duration::from_millis(3200)).await;
    let after = receiver.hits();
    assert_eq!(after.len(), hits.len(), "nothing after the 200: {after:#?}");
    let answers: Vec<u16> = after.iter().map(|h| h.answered).collect();
    assert_eq!(
        answers,
        [500, 500, 500, 200],
        "exactly once more after the 200"
    );
    let event_id = &after[0].event_id;
    for hit in &after {
        assert_eq!(&hit.event_id, event_id, "every try is the same event");
        assert!(verify(SECRET, &hit.signature, &hit.body));
        let event = hit.json();
        assert_eq!(event["type"], "transcript.failed");
        assert_eq!(event["job_id"], job_id.as_str());
    }
    // The waits grow (200, 400, 800 ms after each refusal, plus the restart's pause).
    let gaps: Vec<Duration> = after.windows(2).map(|w| w[1].at - w[0].at).collect();
    eprintln!("retry gaps: {gaps:?}");
    assert!(
        gaps[1] >= Duration::from_millis(400) && gaps[2] >= Duration::from_millis(800),
        "{gaps:?}"
    );
    second.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn internal_webhook_targets_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let mut strict = config(&dir.path().join("strict"));
    strict.webhook_allow_private = false;
    let strict = Service::start(strict).await;
    let clip_path = dir.path().join("clip.mp4");
    make_clip(&clip_path, 1);
    let clip = strict.upload(&clip_path, "clip.mp4").await;
    let targets = [
        "http://127.0.0.1:8080/hook",
        "http://10.1.2.3/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9000/hook",
        "http://localhost:9000/hook",
    ];
    for target in targets {
        let bodies = [
            (
                "/v1/transcript",
                json!({"input": clip, "webhook_url": target}),
            ),
            (
                "/v1/generate",
                json!({"input": clip, "words": [], "async": true, "webhook_url": target}),
            ),
            (
                "/v1/generate",
                json!({"input": clip, "words": [], "webhook_url": target}),
            ),
        ];
        for (path, body) in bodies {
            let (status, answer) = strict.post(path, &body).await;
            assert_eq!(status, 422, "{path} {target}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("webhook_url: "), "{message}");
        }
    }
    let (status, answer) = strict
        .post(
            "/v1/transcript",
            &json!({"input": clip, "webhook_url": "ftp://example.com/x"}),
        )
        .await;
    assert_eq!(status, 422, "{answer}");
    let (status, answer) = strict
        .post(
            "/v1/generate",
            &json!({"input": clip, "words": [], "async": "yes"}),
        )
        .await;
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("async: ")
    );
    strict.stop().await;

    let open = Service::start(config(&dir.path().join("open"))).await;
    let clip = open.upload(&clip_path, "clip.mp4").await;
    for target in targets {
        let (status, answer) = open
            .post(
                "/v1/generate",
                &json!({"input": clip, "words": [], "async": true, "webhook_url": target}),
            )
            .await;
        assert_eq!(status, 200, "{target}: {answer}");
    }
    open.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_two_minute_video_generates_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::start(config(&dir.path().join("data"))).await;
    let clip_path = dir.path().join("long.mp4");
    make_clip(&clip_path, 120);
    let clip = service.upload(&clip_path, "long.mp4").await;

    let asked = Instant::now();
    let (status, answer) = service
        .post(
            "/v1/generate",
            &json!({"input": clip, "words": words(), "async": true}),
        )
        .await;
    let answered_in = asked.elapsed();
    assert_eq!(status, 200, "{answer}");
    let job_id = answer["job_id"].as_str().unwrap();
    let link = answer["download_url"].as_str().unwrap().to_owned();
    // The answer came before the burn ended: the link has no file yet.
    let early = reqwest::get(&link).await.unwrap();
    assert_eq!(early.status(), 404);
    let error: Value = early.json().await.unwrap();
    assert_eq!(error["error"]["code"], "not_found", "{error}");
    eprintln!("async generate answered in {answered_in:?}");

    let seen = service.until_done(&format!("/v1/generate/{job_id}")).await;
    let first = &seen[0];
    assert_ne!(first["status"], "COMPLETED", "{first}");
    let progress: Vec<u64> = seen
        .iter()
        .map(|s| s["progress"].as_u64().unwrap())
        .collect();
    assert!(
        progress.windows(2).all(|w| w[0] <= w[1]),
        "progress only rises: {progress:?}"
    );
    assert!(
        progress.iter().any(|p| (1..100).contains(p)),
        "progress seen between 0 and 100: {progress:?}"
    );
    let last = seen.last().unwrap();
    assert_eq!(last["status"], "COMPLETED", "{last}");
    assert_eq!(last["progress"], 100);
    assert_eq!(last["job_id"], job_id);

    let video = reqwest::get(&link).await.unwrap();
    assert_eq!(video.status(), 200);
    let bytes = video.bytes().await.unwrap();
    let out = dir.path().join("out.mp4");
    std::fs::write(&out, &bytes).unwrap();
    let seconds = caption_testkit::media::duration_s(&out).unwrap();
    assert!((seconds - 120.0).abs() < 1.0, "the video lasts {seconds} s");

    let (status, _) = service.get("/v1/generate/no-such-job").await;
    assert_eq!(status, 404);
    service.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_stops_queued_and_running_jobs_and_frees_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(&[]).await;
    let service = Service::start(config(&dir.path().join("data"))).await;
    // Twelve times JFK: a transcription of minutes on this machine's one worker.
    let long_path = dir.path().join("long.wav");
    ffmpeg(&[
        "-stream_loop",
        "11",
        "-i",
        jfk_wav().to_str().unwrap(),
        "-c",
        "copy",
        long_path.to_str().unwrap(),
    ]);
    let long = service.upload(&long_path, "long.wav").await;
    let short = service.upload(&jfk_wav(), "jfk.wav").await;
    let submit = |input: String| {
        let service = &service;
        let hook = receiver.url.clone();
        async move {
            let (status, body) = service
                .post(
                    "/v1/transcript",
                    &json!({"input": input, "lang": "en", "webhook_url": hook}),
                )
                .await;
            assert_eq!(status, 200, "{body}");
            body["job_id"].as_str().unwrap().to_owned()
        }
    };
    let running = submit(long.clone()).await;
    let queued = submit(long).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, body) = service.get(&format!("/v1/transcript/{running}")).await;
        if body["status"] == "IN_PROGRESS" {
            break;
        }
        assert!(Instant::now() < deadline, "never started: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    for id in [&queued, &running] {
        let (status, body) = service.delete(&format!("/v1/transcript/{id}")).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["status"], "FAILED");
        assert_eq!(body["error"]["code"], "cancelled");
        assert!(body["words"].is_null());
    }
    // The worker is free: a new job starts while the cancelled one would still be running
    // (its input takes minutes), and completes.
    let next = submit(short).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = service.get(&format!("/v1/transcript/{next}")).await;
        if body["status"] != "IN_QUEUE" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the worker is still busy: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen = service.until_done(&format!("/v1/transcript/{next}")).await;
    let done = seen.last().unwrap();
    assert_eq!(done["status"], "COMPLETED", "{done}");
    for id in [&queued, &running] {
        let (_, body) = service.get(&format!("/v1/transcript/{id}")).await;
        assert_eq!(
            body["status"], "FAILED",
            "a cancelled job stays cancelled: {body}"
        );
        assert_eq!(body["error"]["code"], "cancelled");
    }
    let (status, body) = service.delete(&format!("/v1/transcript/{next}")).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "already_finished");
    let (status, _) = service.delete("/v1/transcript/no-such-job").await;
    assert_eq!(status, 404);

    // Each cancelled job's end was announced.
    let hits = receiver.wait_for("three events", |h| h.len() >= 3).await;
    let mut cancelled = 0;
    for hit in &hits {
        let event = hit.json();
        if event["error"]["code"] == "cancelled" {
            assert_eq!(event["type"], "transcript.failed");
            cancelled += 1;
        }
    }
    assert_eq!(cancelled, 2, "{hits:#?}");
    service.stop().await;
}
