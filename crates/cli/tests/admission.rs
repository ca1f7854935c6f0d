//! Admission as a lone client meets it: `captions serve` with its default settings, one
//! request at a time, 200 requests of every kind (uploads, transcripts, synchronous and
//! background generates, previews, polls, bad inputs), and not one `429 busy`: an idle worker
//! holds no generate slot, and a bad request gets its own error before any limit is looked at.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;

use caption_testkit::media;
use support::{Client, Service};

const KEY: &str = "admission-test-key-0123456789";

/// What one request got.
struct Answer {
    status: u16,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// The client, counting every answer by endpoint and status.
struct Counted {
    client: Client,
    seen: BTreeMap<(String, u16), usize>,
    total: usize,
}

impl Counted {
    async fn send(&mut self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Answer {
        let mut request = self
            .client
            .http
            .request(method.clone(), format!("{}{path}", self.client.base))
            .header("x-api-key", &self.client.key);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = response.bytes().await.unwrap().to_vec();
        let route = path.split('?').next().unwrap();
        // One line per route: job ids folded.
        let route = match route.rsplit_once('/') {
            Some((head, tail)) if tail.len() > 20 => format!("{head}/{{id}}"),
            _ => route.to_owned(),
        };
        *self
            .seen
            .entry((format!("{method} {route}"), status))
            .or_default() += 1;
        self.total += 1;
        assert_ne!(
            status,
            429,
            "request {} ({method} {path}) was refused as busy (retry-after {retry_after:?}): {}",
            self.total,
            String::from_utf8_lossy(&body)
        );
        Answer { status, body }
    }

    async fn get(&mut self, path: &str) -> Answer {
        self.send(reqwest::Method::GET, path, None).await
    }

    async fn post(&mut self, path: &str, body: &Value) -> Answer {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// Polls `path` until its job ended; the final status.
    async fn poll(&mut self, path: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let answer = self.get(path).await;
            assert_eq!(
                answer.status,
                200,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
            let status = answer.json()["status"].as_str().unwrap().to_owned();
            if status == "COMPLETED" || status == "FAILED" {
                return status;
            }
            assert!(Instant::now() < deadline, "{path} still {status}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A descriptor, then the file posted to it as a browser form; the file's id.
    async fn upload(&mut self, path: &Path) -> String {
        self.total += 2;
        self.client.upload(path, "clip.mp4", "video/mp4").await
    }
}

fn words() -> Value {
    json!([
        {"start": 0.1, "end": 0.6, "word": "one", "punctuated_word": "One"},
        {"start": 0.7, "end": 1.3, "word": "request", "punctuated_word": "request"},
        {"start": 1.4, "end": 1.9, "word": "again", "punctuated_word": "again."},
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lone_sequential_client_is_never_refused() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Default settings: only the key (and the quick model) are given.
    let service = Service::start(data.path(), &[("CAPTIONS_API_KEYS", KEY.to_owned())]);
    let mut client = Counted {
        client: Client {
            http: reqwest::Client::new(),
            base: service.base.clone(),
            key: KEY.to_owned(),
        },
        seen: BTreeMap::new(),
        total: 0,
    };
    let clip = work.path().join("tone.mp4");
    media::tone_video(&clip, "color=c=gray:s=240x160:r=10", 2.0).unwrap();
    let speech = media::speech_video(
        &work.path().join("speech.mp4"),
        "color=c=gray:s=240x160:r=10",
        "Nothing here is busy.",
    )
    .unwrap();

    let mut round = 0;
    while client.total < 200 {
        round += 1;
        let file = client.upload(&clip).await;
        // The first request of the round is a synchronous generate: the one a fresh service
        // refused when its idle workers held every slot.
        let sync = json!({"input": file, "words": words()});
        let answer = client.post("/v1/generate", &sync).await;
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        // A background generate, and a synchronous one while it burns.
        let queued = client
            .post(
                "/v1/generate",
                &json!({"input": file, "words": words(), "async": true}),
            )
            .await;
        assert_eq!(
            queued.status,
            200,
            "{}",
            String::from_utf8_lossy(&queued.body)
        );
        let job = queued.json()["job_id"].as_str().unwrap().to_owned();
        let answer = client.post("/v1/generate", &sync).await;
        assert_eq!(answer.status, 200);
        assert_eq!(
            client.poll(&format!("/v1/generate/{job}")).await,
            "COMPLETED"
        );

        // Bad requests get their own errors, never `busy`.
        let missing = client
            .post(
                "/v1/generate",
                &json!({"input": "uploads/no-such-file.mp4", "words": words()}),
            )
            .await;
        assert_eq!(
            missing.status,
            404,
            "{}",
            String::from_utf8_lossy(&missing.body)
        );
        let missing_async = client
            .post(
                "/v1/generate",
                &json!({"input": "uploads/no-such-file.mp4", "words": words(), "async": true}),
            )
            .await;
        assert_eq!(missing_async.status, 404);
        let bad_config = client
            .post(
                "/v1/generate",
                &json!({"input": file, "words": words(), "config": {"linesCount": 0}}),
            )
            .await;
        assert_eq!(bad_config.status, 422);
        let bad_template = client
            .post(
                "/v1/generate",
                &json!({"input": file, "words": words(), "templateId": "no-such-template"}),
            )
            .await;
        assert_eq!(bad_template.status, 404);
        let no_transcript = client
            .post(
                "/v1/transcript",
                &json!({"input": "uploads/no-such-file.mp4", "lang": "en"}),
            )
            .await;
        assert_eq!(no_transcript.status, 404);

        // Reading: templates, fonts, a preview, a descriptor.
        assert_eq!(client.get("/v1/templates").await.status, 200);
        assert_eq!(client.get("/v1/templates/karaoke").await.status, 200);
        assert_eq!(client.get("/v1/fonts?lang=en").await.status, 200);
        let preview = client
            .post(
                "/v1/preview",
                &json!({"words": words(), "templateId": "karaoke", "width": 320, "height": 568}),
            )
            .await;
        assert_eq!(preview.status, 200);
        assert_eq!(client.get("/v1/signedUrl?fileName=a.mp4").await.status, 200);

        // Every other round, a transcription of real speech.
        if round % 2 == 1 {
            let speech_file = client.upload(&speech).await;
            let created = client
                .post(
                    "/v1/transcript",
                    &json!({"input": speech_file, "lang": "en"}),
                )
                .await;
            assert_eq!(created.status, 200);
            let job = created.json()["job_id"].as_str().unwrap().to_owned();
            assert_eq!(
                client.poll(&format!("/v1/transcript/{job}")).await,
                "COMPLETED"
            );
        }
    }
    for ((route, status), count) in &client.seen {
        eprintln!("{route:<32} {status} × {count}");
    }
    assert!(client.total >= 200);
    assert!(
        client.seen.keys().all(|(_, status)| *status != 429),
        "{:?}",
        client.seen
    );
    service.terminate();
}
