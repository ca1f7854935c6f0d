//! The router in-process (tower `oneshot`): each endpoint's success and each error status, over
//! a real engine with local storage, the embedded job store and ffmpeg-made media.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use caption_core::Word;
use caption_engine::{Engine, EngineOptions};
use caption_http::{ApiKeys, AppState, KeyLimits, router};
use caption_jobs::{ClaimOptions, EmbeddedJobStore, JobStore};
use caption_store::{StorageOptions, open_storage};
use serde_json::{Value, json};
use tower::ServiceExt as _;

const KEY: &str = "test-key-0123456789";

struct Harness {
    app: Router,
    jobs: Arc<EmbeddedJobStore>,
    _dir: tempfile::TempDir,
}

fn harness_with(generate_slots: usize, max_body_bytes: usize) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions::default()
        .model("tiny.en")
        .generate_slots(generate_slots);
    let (app, jobs) = support::router_in(
        dir.path(),
        &[KEY, "second-key"],
        options,
        Some(max_body_bytes),
    );
    Harness {
        app,
        jobs,
        _dir: dir,
    }
}

fn harness() -> Harness {
    harness_with(2, 1024 * 1024)
}

/// Two keys (`KEY`, `SECOND_KEY`), `generate_slots` for the whole service and `limits` per key.
fn harness_limited(generate_slots: usize, limits: KeyLimits) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions::default()
        .model("tiny.en")
        .generate_slots(generate_slots);
    let (app, jobs) =
        support::router_limited(dir.path(), &[KEY, SECOND_KEY], options, None, limits);
    Harness {
        app,
        jobs,
        _dir: dir,
    }
}

const SECOND_KEY: &str = "second-key";

async fn post_json_as(app: &Router, key: &str, uri: &str, body: &Value) -> Reply {
    let bytes = body.to_string().into_bytes();
    send(app, request(Method::POST, uri, Some(key), Some(bytes))).await
}

fn assert_over_key_limit(reply: &Reply, limit: &str) {
    assert_eq!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        String::from_utf8_lossy(&reply.bytes)
    );
    assert_eq!(reply.error_code(), "busy");
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains(limit),
        "{}",
        reply.json()
    );
    assert!(reply.headers.contains_key(header::RETRY_AFTER));
}

fn request(method: Method, uri: &str, key: Option<&str>, body: Option<Vec<u8>>) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(key) = key {
        builder = builder.header("x-api-key", key);
    }
    match body {
        Some(bytes) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(bytes))
            .unwrap(),
        None => builder.body(Body::empty()).unwrap(),
    }
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    bytes: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.bytes)))
    }

    /// Asserts the JSON error shape and returns its code.
    /// The paths of a 422's `error.details`, in order.
    fn detail_paths(&self) -> Vec<String> {
        self.json()["error"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["path"].as_str().unwrap().to_owned())
            .collect()
    }

    fn error_code(&self) -> String {
        let body = self.json();
        let error = &body["error"];
        assert!(
            error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        error["code"].as_str().unwrap().to_owned()
    }
}

async fn send(app: &Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap()
        .to_vec();
    Reply {
        status,
        headers,
        bytes,
    }
}

async fn get(app: &Router, uri: &str) -> Reply {
    send(app, request(Method::GET, uri, Some(KEY), None)).await
}

async fn post_json(app: &Router, uri: &str, body: &Value) -> Reply {
    send(
        app,
        request(
            Method::POST,
            uri,
            Some(KEY),
            Some(body.to_string().into_bytes()),
        ),
    )
    .await
}

/// A short video with a tone: enough for generate, quick to burn.
fn make_clip(path: &Path, seconds: u32) {
    caption_testkit::media::tone_video(path, "color=c=gray:s=320x240:r=25", f64::from(seconds))
        .unwrap();
}

/// A browser-style multipart form: the descriptor's fields, then the file last.
fn multipart_form(fields: &serde_json::Map<String, Value>, file: &[u8]) -> (String, Vec<u8>) {
    let boundary = "caption-test-boundary-7f3a";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{}\r\n",
                value.as_str().unwrap()
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Gets a descriptor and uploads `file` through the local upload route; returns the `file` id.
async fn upload(app: &Router, file: &[u8]) -> String {
    let descriptor = get(app, "/v1/signedUrl?fileName=clip.mp4").await;
    assert_eq!(descriptor.status, StatusCode::OK);
    let descriptor = descriptor.json();
    let url = descriptor["url"].as_str().unwrap();
    let path = url.strip_prefix("http://captions.test").unwrap();
    let (content_type, body) = multipart_form(descriptor["fields"].as_object().unwrap(), file);
    let reply = send(
        app,
        Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap(),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::NO_CONTENT,
        "{}",
        String::from_utf8_lossy(&reply.bytes)
    );
    descriptor["file"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn healthz_and_openapi_need_no_key() {
    let h = harness();
    let reply = send(&h.app, request(Method::GET, "/healthz", None, None)).await;
    assert_eq!(reply.status, StatusCode::OK);
    let reply = send(&h.app, request(Method::GET, "/v1/openapi.json", None, None)).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.headers[header::CONTENT_TYPE], "application/json");
    let doc = reply.json();
    for path in [
        "/v1/transcript",
        "/v1/transcript/{jobId}",
        "/v1/generate",
        "/v1/templates",
        "/v1/templates/{templateId}",
        "/v1/signedUrl",
        "/v1/fonts",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} missing");
    }
}

#[tokio::test]
async fn every_endpoint_refuses_a_missing_or_wrong_key() {
    let h = harness();
    let endpoints = [
        (Method::POST, "/v1/transcript"),
        (Method::GET, "/v1/transcript/some-job"),
        (Method::POST, "/v1/generate"),
        (Method::GET, "/v1/templates"),
        (Method::GET, "/v1/templates/karaoke"),
        (Method::GET, "/v1/signedUrl?fileName=a.mp4"),
        (Method::GET, "/v1/fonts"),
    ];
    for (method, uri) in endpoints {
        for key in [None, Some("wrong"), Some(""), Some("test-key-012345678")] {
            let body = (method == Method::POST).then(|| b"{}".to_vec());
            let reply = send(&h.app, request(method.clone(), uri, key, body)).await;
            assert_eq!(
                reply.status,
                StatusCode::UNAUTHORIZED,
                "{method} {uri} {key:?}"
            );
            assert_eq!(reply.error_code(), "unauthorized");
        }
    }
    // Either configured key works.
    let reply = send(
        &h.app,
        request(Method::GET, "/v1/templates", Some("second-key"), None),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test]
async fn templates_list_and_one_template() {
    let h = harness();
    let list = get(&h.app, "/v1/templates").await;
    assert_eq!(list.status, StatusCode::OK);
    let list = list.json();
    let items = list.as_array().unwrap();
    assert!(items.len() >= 10);
    for item in items {
        let keys: Vec<&String> = item.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "name"], "the list gives only id and name");
    }
    let id = items[0]["id"].as_str().unwrap();
    let one = get(&h.app, &format!("/v1/templates/{id}")).await;
    assert_eq!(one.status, StatusCode::OK);
    let one = one.json();
    assert_eq!(one["id"], id);
    for field in [
        "colors",
        "modes",
        "sizes",
        "linesCount",
        "wordsPerLineCount",
        "wordHasBackground",
        "wordHasPunctuation",
        "wordHasShadow",
        "wordHasCustomShadowColor",
        "emojiAnimated",
        "capitalizationType",
    ] {
        assert!(!one["config"][field].is_null(), "config.{field} missing");
    }
    let missing = get(&h.app, "/v1/templates/no-such-template").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.error_code(), "not_found");
}

#[tokio::test]
async fn fonts_all_or_by_language() {
    let h = harness();
    let all = get(&h.app, "/v1/fonts").await;
    assert_eq!(all.status, StatusCode::OK);
    let all: Vec<String> = serde_json::from_slice(&all.bytes).unwrap();
    assert!(!all.is_empty());
    let english = get(&h.app, "/v1/fonts?lang=en").await;
    assert_eq!(english.status, StatusCode::OK);
    let english: Vec<String> = serde_json::from_slice(&english.bytes).unwrap();
    assert!(!english.is_empty() && english.len() <= all.len());
    let alias = get(&h.app, "/v1/fonts?language=en").await;
    assert_eq!(
        serde_json::from_slice::<Vec<String>>(&alias.bytes).unwrap(),
        english
    );
    let bad = get(&h.app, "/v1/fonts?lang=not-a-language").await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.error_code(), "invalid_request");
    // A tag in any case, or with '_', is the same language; what is no tag at all is refused
    // by its form, whitespace included.
    for same in ["EN", "En", "zh-cn", "zh_CN", "ZH-CN"] {
        let reply = get(&h.app, &format!("/v1/fonts?lang={same}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{same}");
    }
    for malformed in [
        "Bg%20", "%20en", "e", "english", "en-", "zh-c", "en--gb", "e1",
    ] {
        let reply = get(&h.app, &format!("/v1/fonts?lang={malformed}")).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{malformed}"
        );
        assert_eq!(reply.detail_paths(), ["lang"], "{malformed}");
    }
}

#[tokio::test]
async fn signed_url_takes_three_parameter_names() {
    let h = harness();
    for query in ["fileName=clip.mp4", "filename=clip.mp4", "name=clip.mp4"] {
        let reply = get(&h.app, &format!("/v1/signedUrl?{query}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{query}");
        let d = reply.json();
        assert!(d["file"].as_str().unwrap().ends_with("/clip.mp4"));
        assert_eq!(d["url"], "http://captions.test/v1/storage/upload");
        for field in [
            "key",
            "bucket",
            "Policy",
            "X-Amz-Algorithm",
            "X-Amz-Credential",
            "X-Amz-Date",
            "X-Amz-Signature",
        ] {
            assert!(d["fields"][field].is_string(), "fields.{field}");
        }
        assert_eq!(d["fields"]["key"], d["file"]);
    }
    let missing = get(&h.app, "/v1/signedUrl").await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(missing.json()["error"]["details"][0]["path"], "fileName");
    let too_long = get(
        &h.app,
        &format!("/v1/signedUrl?fileName={}", "a".repeat(1025)),
    )
    .await;
    assert_eq!(too_long.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn transcript_jobs_are_created_and_read() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    make_clip(&clip, 1);
    let file = upload(&h.app, &std::fs::read(&clip).unwrap()).await;

    let created = post_json(
        &h.app,
        "/v1/transcript",
        &json!({"input": file, "lang": "en"}),
    )
    .await;
    assert_eq!(created.status, StatusCode::OK);
    let job_id = created.json()["job_id"].as_str().unwrap().to_owned();

    let queued = get(&h.app, &format!("/v1/transcript/{job_id}")).await;
    assert_eq!(queued.status, StatusCode::OK);
    let queued = queued.json();
    assert_eq!(queued["status"], "IN_QUEUE");
    assert!(queued["words"].is_null());

    // Work the job through the store as a worker would.
    let claim = ClaimOptions::new("test-worker", caption_jobs::JobKind::Transcribe)
        .lease(std::time::Duration::from_secs(60))
        .max_attempts(3);
    let job = h.jobs.claim(&claim).await.unwrap().unwrap();
    assert_eq!(job.id, job_id);
    let running = get(&h.app, &format!("/v1/transcript/{job_id}"))
        .await
        .json();
    assert_eq!(running["status"], "IN_PROGRESS");
    let words = vec![Word::new(0.1, 0.5, "hello"), Word::new(0.6, 0.9, "world")];
    assert!(
        h.jobs
            .complete(&job_id, "test-worker", words)
            .await
            .unwrap()
    );
    let done = get(&h.app, &format!("/v1/transcript/{job_id}"))
        .await
        .json();
    assert_eq!(done["status"], "COMPLETED");
    assert_eq!(done["words"][1]["punctuated_word"], "world");
    assert_eq!(done["words"][0]["start"], 0.1);

    // `lang` is optional.
    let default_lang = post_json(&h.app, "/v1/transcript", &json!({"input": file})).await;
    assert_eq!(default_lang.status, StatusCode::OK);
}

#[tokio::test]
async fn transcript_errors() {
    let h = harness_with(2, 1024);
    let malformed = send(
        &h.app,
        request(
            Method::POST,
            "/v1/transcript",
            Some(KEY),
            Some(b"{\"input\": ".to_vec()),
        ),
    )
    .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(malformed.error_code(), "malformed_json");

    let invalid = post_json(&h.app, "/v1/transcript", &json!({"lang": "english"})).await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(invalid.detail_paths(), ["input", "lang"]);
    let body = invalid.json();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("input:") && message.contains("lang:"),
        "{message}"
    );

    let not_english = post_json(
        &h.app,
        "/v1/transcript",
        &json!({"input": "uploads/x/clip.mp4", "lang": "de"}),
    )
    .await;
    assert_eq!(not_english.status, StatusCode::UNPROCESSABLE_ENTITY);

    // Translation needs a multilingual model; an unknown task lists the known ones; a speaker
    // count is "auto" or 1 to 8.
    for (field, value, rule) in [
        ("task", json!("translate"), "multilingual"),
        ("task", json!("summarize"), "transcribe, translate"),
        (
            "speakers",
            json!(0),
            "\"auto\" or a whole number from 1 to 8",
        ),
    ] {
        let mut body = json!({"input": "uploads/x/clip.mp4"});
        body[field] = value;
        let refused = post_json(&h.app, "/v1/transcript", &body).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(refused.detail_paths(), [field]);
        let body = refused.json();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(rule), "{message}");
    }

    let unknown = post_json(
        &h.app,
        "/v1/transcript",
        &json!({"input": "uploads/00000000-0000-0000-0000-000000000000/clip.mp4"}),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.error_code(), "not_found");

    let bad_key = post_json(&h.app, "/v1/transcript", &json!({"input": "../etc/passwd"})).await;
    assert_eq!(bad_key.status, StatusCode::UNPROCESSABLE_ENTITY);

    let huge = json!({"input": "x".repeat(2000)});
    let too_large = post_json(&h.app, "/v1/transcript", &huge).await;
    assert_eq!(too_large.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(too_large.error_code(), "too_large");

    let no_job = get(&h.app, "/v1/transcript/no-such-job").await;
    assert_eq!(no_job.status, StatusCode::NOT_FOUND);
    assert_eq!(no_job.error_code(), "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn generate_stores_a_captioned_video_behind_a_signed_link() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    make_clip(&clip, 1);
    let file = upload(&h.app, &std::fs::read(&clip).unwrap()).await;
    let template = get(&h.app, "/v1/templates/karaoke").await.json();
    let request = json!({
        "input": file,
        "words": [
            {"start": 0.1, "end": 0.5, "word": "hello", "punctuated_word": "Hello,"},
            {"start": 0.5, "end": 0.9, "word": "world", "punctuated_word": "world!"}
        ],
        "config": template["config"],
    });
    let reply = post_json(&h.app, "/v1/generate", &request).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&reply.bytes)
    );
    let answer = reply.json();
    assert!(answer.get("warnings").is_none(), "{answer}");
    let url = answer["download_url"].as_str().unwrap().to_owned();
    let path = url.strip_prefix("http://captions.test").unwrap();
    // An unknown field is ignored with a warning that names the field it probably meant.
    let mut typo = request.clone();
    typo["config"]["fontsize"] = json!(80);
    let warned = post_json(&h.app, "/v1/generate", &typo).await;
    assert_eq!(warned.status, StatusCode::OK);
    assert_eq!(
        warned.json()["warnings"],
        json!([{"path": "config.fontsize",
                "rule": "unknown field; did you mean config.sizes.fontSize? (ignored)"}])
    );
    let video = send(&h.app, request_without_key(path)).await;
    assert_eq!(video.status, StatusCode::OK);
    assert_eq!(video.headers[header::CONTENT_TYPE], "video/mp4");
    assert_eq!(&video.bytes[4..8], b"ftyp", "an MP4 file");

    // A tampered link is refused by the storage route.
    // (The last character changed, whatever it was: a `0` replaced by `0` would be no change.)
    let last = if path.ends_with('0') { '1' } else { '0' };
    let tampered = format!("{}{last}", &path[..path.len() - 1]);
    let refused = send(&h.app, request_without_key(&tampered)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
}

fn request_without_key(uri: &str) -> Request<Body> {
    request(Method::GET, uri, None, None)
}

#[tokio::test]
async fn generate_errors() {
    let h = harness();
    let word = json!({"start": 0.0, "end": 0.5, "word": "a", "punctuated_word": "a"});
    let invalid = post_json(
        &h.app,
        "/v1/generate",
        &json!({
            "input": "uploads/x/clip.mp4",
            "words": [{"start": 2.0, "end": 1.0, "word": "a", "punctuated_word": "a"}],
            "config": {"linesCount": 0, "colors": {"hilightColor": {"colors": [{"r": 300, "g": 0, "b": 0}]}},
                       "modes": {"effectType": "EXPLODE"}}
        }),
    )
    .await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    let body = invalid.json();
    let details = body["error"]["details"].as_array().unwrap();
    let paths: Vec<&str> = details
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    for expected in [
        "words[0].end",
        "config.linesCount",
        "config.colors.hilightColor.colors[0].r",
        "config.modes.effectType",
    ] {
        assert!(paths.contains(&expected), "{expected} not in {paths:?}");
    }
    let effect_rule = details
        .iter()
        .find(|d| d["path"] == "config.modes.effectType")
        .unwrap()["rule"]
        .as_str()
        .unwrap();
    assert!(
        effect_rule.contains("TYPEWRITER"),
        "lists the allowed values: {effect_rule}"
    );

    // Every problem in one answer: the config's rules, unknown fields in strict mode, the
    // webhook and the async flag, and a font that is not installed.
    let everything = json!({
        "input": "uploads/x/a.mp4",
        "words": [],
        "config": {"colours": {}, "linesCount": 0, "font": "Comic Nonexistent"},
        "webhook_url": 5,
        "async": "yes"
    });
    let strict = post_json(&h.app, "/v1/generate?strict=true", &everything).await;
    assert_eq!(strict.status, StatusCode::UNPROCESSABLE_ENTITY);
    let body = strict.json();
    assert_eq!(
        strict.detail_paths(),
        [
            "config.colours",
            "config.linesCount",
            "webhook_url",
            "async",
            "config.font"
        ]
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("config.colours: unknown field; did you mean config.colors?"),
        "{body}"
    );
    let fixed = json!({
        "input": "uploads/x/a.mp4",
        "words": [],
        "config": {"colours": {}, "linesCount": 2, "fontWeight": 950, "font": "Comic Nonexistent"},
    });
    let font = post_json(&h.app, "/v1/generate", &fixed).await;
    assert_eq!(font.status, StatusCode::UNPROCESSABLE_ENTITY);
    let details = font.json()["error"]["details"].clone();
    assert_eq!(details[0]["path"], "config.fontWeight");
    assert_eq!(details[0]["rule"], "must be an integer from 100 to 900");
    assert_eq!(details[1]["path"], "config.font", "{details}");
    assert!(
        details[1]["rule"]
            .as_str()
            .unwrap()
            .starts_with("\"Comic Nonexistent\" is not an installed font family (closest: "),
        "{details}"
    );

    let unknown_file = post_json(
        &h.app,
        "/v1/generate",
        &json!({"input": "uploads/00000000-0000-0000-0000-000000000000/a.mp4", "words": [word]}),
    )
    .await;
    assert_eq!(unknown_file.status, StatusCode::NOT_FOUND);

    let unknown_template = post_json(
        &h.app,
        "/v1/generate",
        &json!({"input": "uploads/x/a.mp4", "words": [], "templateId": "nope"}),
    )
    .await;
    assert_eq!(unknown_template.status, StatusCode::NOT_FOUND);

    let not_json = send(
        &h.app,
        request(
            Method::POST,
            "/v1/generate",
            Some(KEY),
            Some(b"words=1".to_vec()),
        ),
    )
    .await;
    assert_eq!(not_json.status, StatusCode::BAD_REQUEST);

    // A file that is not a video is the caller's problem, not a crash.
    let file = upload(&h.app, b"this is not a video at all").await;
    let not_video = post_json(
        &h.app,
        "/v1/generate",
        &json!({"input": file, "words": [word]}),
    )
    .await;
    assert_eq!(not_video.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(not_video.error_code(), "unreadable_input");
}

/// `reframe` takes the three shapes, and only for the burned video.
#[tokio::test]
async fn a_bad_reframe_is_422_naming_the_field_and_the_shapes() {
    let h = harness();
    for (extra, rule) in [
        (json!({"reframe": "16:9"}), "must be one of 9:16, 1:1, 4:5"),
        (json!({"reframe": 916}), "must be one of 9:16, 1:1, 4:5"),
        (
            json!({"reframe": "9:16", "output": "overlay-mov"}),
            "needs \"output\": \"video\"",
        ),
    ] {
        let mut body = json!({"input": "uploads/x/a.mp4", "words": []});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let refused = post_json(&h.app, "/v1/generate", &body).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(refused.detail_paths(), ["reframe"], "{body}");
        let message = refused.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(rule), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn generate_beyond_its_slots_is_429() {
    let h = harness_with(1, 1024 * 1024);
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    make_clip(&clip, 4);
    let file = upload(&h.app, &std::fs::read(&clip).unwrap()).await;
    let body = json!({
        "input": file,
        "words": [{"start": 0.1, "end": 3.0, "word": "long", "punctuated_word": "long"}],
    });
    // The first request holds the only slot for the whole burn; the others arrive meanwhile.
    let (a, b, c) = tokio::join!(
        post_json(&h.app, "/v1/generate", &body),
        post_json(&h.app, "/v1/generate", &body),
        post_json(&h.app, "/v1/generate", &body),
    );
    let mut statuses = [a.status, b.status, c.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    let busy = [a, b, c]
        .into_iter()
        .find(|r| r.status == StatusCode::TOO_MANY_REQUESTS)
        .unwrap();
    assert_eq!(busy.error_code(), "busy");
    let wait: u64 = busy.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=300).contains(&wait), "Retry-After {wait}");
    // The slot is free again once the burn ended: the refused request now succeeds.
    let again = post_json(&h.app, "/v1/generate", &body).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bad_generate_is_its_own_error_even_when_every_slot_is_busy() {
    let h = harness_with(1, 1024 * 1024);
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    // Long enough that its burn outlasts the other requests.
    make_clip(&clip, 30);
    let file = upload(&h.app, &std::fs::read(&clip).unwrap()).await;
    let words = json!([{"start": 0.1, "end": 3.0, "word": "long", "punctuated_word": "long"}]);
    let good = json!({"input": file, "words": words});
    let missing = json!({"input": "uploads/none.mp4", "words": words});
    let no_template = json!({"input": file, "words": words, "templateId": "nope"});
    // The first request holds the only slot for its whole burn (seconds); the others arrive
    // meanwhile.
    let (burn, others) = tokio::join!(post_json(&h.app, "/v1/generate", &good), async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        (
            post_json(&h.app, "/v1/generate", &good).await,
            post_json(&h.app, "/v1/generate", &missing).await,
            post_json(&h.app, "/v1/generate", &no_template).await,
        )
    });
    let (busy, missing, no_template) = others;
    assert_eq!(burn.status, StatusCode::OK, "{}", burn.json());
    assert_eq!(
        busy.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        busy.json()
    );
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.json());
    assert_eq!(
        no_template.status,
        StatusCode::NOT_FOUND,
        "{}",
        no_template.json()
    );
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_json() {
    let h = harness();
    let missing = get(&h.app, "/v1/nothing-here").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.error_code(), "not_found");
    let wrong_method = send(
        &h.app,
        request(Method::DELETE, "/v1/templates", Some(KEY), None),
    )
    .await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong_method.error_code(), "method_not_allowed");
}

#[tokio::test]
async fn an_unreachable_store_is_503_without_internals() {
    // A closed loopback port: every S3 request fails to connect.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let options = StorageOptions::new(
        caption_store::StorageConfig::S3 {
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket: "b".into(),
            region: "us-east-1".into(),
            access_key: "ak".into(),
            secret_key: "sk".into(),
            allow_http: true,
        },
        "http://captions.test",
    );
    let opened = open_storage(&options).unwrap();
    let jobs = Arc::new(EmbeddedJobStore::open(dir.path().join("jobs.redb")).unwrap());
    let engine = Engine::new(
        EngineOptions::default()
            .data_dir(dir.path().to_owned())
            .model("tiny.en"),
        opened.storage,
        jobs,
    )
    .unwrap();
    let app = router(AppState::new(engine, ApiKeys::new([KEY])));
    let reply = post_json(
        &app,
        "/v1/transcript",
        &json!({"input": "uploads/x/clip.mp4"}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply.error_code(), "unavailable");
    let text = String::from_utf8_lossy(&reply.bytes);
    assert!(!text.contains("127.0.0.1"), "{text}");
    // No local routes with S3: the bucket takes uploads itself.
    let upload = send(
        &app,
        request(Method::POST, "/v1/storage/upload", None, None),
    )
    .await;
    assert_eq!(upload.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn jobs_beyond_a_keys_limit_are_429_while_other_keys_go_on() {
    // No worker runs here: submitted jobs stay queued until cancelled.
    let h = harness_limited(2, KeyLimits::new(2, 1));
    let file = upload(&h.app, b"not really a video").await;
    let transcript = json!({"input": file});
    // A submission that fails takes no room.
    let missing = json!({"input": file.replace("clip.mp4", "gone.mp4")});
    for _ in 0..3 {
        let reply = post_json(&h.app, "/v1/transcript", &missing).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.json());
    }
    let mut queued = Vec::new();
    for _ in 0..2 {
        let reply = post_json(&h.app, "/v1/transcript", &transcript).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.json());
        queued.push(reply.json()["job_id"].as_str().unwrap().to_owned());
    }
    let over = post_json(&h.app, "/v1/transcript", &transcript).await;
    assert_over_key_limit(&over, "max_queued_jobs_per_key");
    // A background generate is a job too.
    let generate = json!({"input": file, "async": true, "words": []});
    let over = post_json(&h.app, "/v1/generate", &generate).await;
    assert_over_key_limit(&over, "max_queued_jobs_per_key");

    // The other key is not held back by the first one's jobs.
    let other = post_json_as(&h.app, SECOND_KEY, "/v1/transcript", &transcript).await;
    assert_eq!(other.status, StatusCode::OK, "{}", other.json());

    // Once one of the first key's jobs ends (cancelled: FAILED), it has room for one more.
    let cancelled = send(
        &h.app,
        request(
            Method::DELETE,
            &format!("/v1/transcript/{}", queued[0]),
            Some(KEY),
            None,
        ),
    )
    .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.json());
    let again = post_json(&h.app, "/v1/transcript", &transcript).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.json());
    let over = post_json(&h.app, "/v1/transcript", &transcript).await;
    assert_over_key_limit(&over, "max_queued_jobs_per_key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn generates_beyond_a_keys_limit_are_429_while_other_keys_go_on() {
    // Slots for four burns at once, but one per key.
    let h = harness_limited(4, KeyLimits::new(20, 1));
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    make_clip(&clip, 3);
    let file = upload(&h.app, &std::fs::read(&clip).unwrap()).await;
    let body = json!({
        "input": file,
        "words": [{"start": 0.1, "end": 2.0, "word": "long", "punctuated_word": "long"}],
    });
    // The first key's first request holds its one generate for the whole burn; its second
    // arrives meanwhile, and so does the other key's.
    let (a, b, other) = tokio::join!(
        post_json(&h.app, "/v1/generate", &body),
        post_json(&h.app, "/v1/generate", &body),
        post_json_as(&h.app, SECOND_KEY, "/v1/generate", &body),
    );
    assert_eq!(other.status, StatusCode::OK, "{}", other.json());
    let (done, over) = if a.status == StatusCode::OK {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(done.status, StatusCode::OK, "{}", done.json());
    assert!(done.json()["download_url"].is_string());
    assert_over_key_limit(&over, "max_generates_per_key");

    // Its generate over, the first key may generate again.
    let again = post_json(&h.app, "/v1/generate", &body).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.json());
}

/// Broken uploads are the caller's to fix: 422 with the code and the problem named, as the
/// command line says it (cut-off file, a picture too large to burn, a 0-second video).
#[tokio::test(flavor = "multi_thread")]
async fn broken_uploads_are_422_naming_the_problem() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    let word = json!({"start": 0.0, "end": 0.5, "word": "a", "punctuated_word": "a"});
    let clip = dir.path().join("clip.mp4");
    make_clip(&clip, 2);
    let whole = std::fs::read(&clip).unwrap();
    let huge =
        caption_testkit::media::claimed_size_video(&dir.path().join("huge.mov"), 16_384).unwrap();
    let zero = dir.path().join("zero.mp4");
    caption_testkit::media::ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "color=c=gray:s=320x240:r=25",
        "-t",
        "0",
        "-movflags",
        "frag_keyframe+empty_moov",
        zero.to_str().unwrap(),
    ])
    .unwrap();
    for (bytes, code, says) in [
        (
            whole[..whole.len() / 2].to_vec(),
            "unreadable_input",
            "(moov atom) is missing",
        ),
        (
            std::fs::read(&huge).unwrap(),
            "input_too_large",
            "the input's picture is 16384x16384, over the limit",
        ),
        (
            std::fs::read(&zero).unwrap(),
            "no_video",
            "the input's video stream is empty",
        ),
    ] {
        let file = upload(&h.app, &bytes).await;
        let reply = post_json(
            &h.app,
            "/v1/generate",
            &json!({"input": file, "words": [word]}),
        )
        .await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{code}");
        assert_eq!(reply.error_code(), code);
        let message = reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(says), "{message}");
        assert!(!message.contains(dir.path().to_str().unwrap()), "{message}");
    }
}
