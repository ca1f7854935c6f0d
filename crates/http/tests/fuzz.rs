//! Arbitrary and mutated requests at the service's parsers, through the router in-process
//! (tower `oneshot`): generate and transcript bodies, the local upload form (multipart, its
//! POST policy), signed download links and their `Range` headers.
//!
//! Nothing panics and nothing answers 5xx. A JSON body that is refused gets a 4xx JSON error:
//! a 400 only for bytes that are not JSON, a 413 only past the body limit, a 422 whose every
//! problem names a field of the body. The storage routes refuse with S3's XML errors (a 4xx
//! with a code and a message); a range is served exactly as its `Content-Range` says.
//! `CAPTIONS_FUZZ_CASES` sets the cases per parser; `scripts/fuzz` runs 100,000 each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use caption_engine::EngineOptions;
use caption_http::{StorageRoutes, storage_router};
use caption_store::{GetOptions, LinkOptions, LocalStorage, ObjectKey, PutOptions, Storage};
use caption_testkit::fuzz::{self, Verdict, mutated_bytes, mutated_json, path_names_field};
use caption_testkit::upload;
use futures_util::StreamExt as _;
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::ServiceExt as _;

const KEY: &str = "fuzz-key-0123456789";
/// The JSON body limit of the fuzzed service: small, so that long mutated bodies meet it.
const MAX_BODY_BYTES: usize = 64 * 1024;
const MAX_UPLOAD_BYTES: u64 = 4096;

/// An answer, read whole.
struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    bytes: Vec<u8>,
}

/// Sends `request` on a runtime of this thread: a panic in a handler reaches the harness.
fn send(runtime: &tokio::runtime::Runtime, app: &Router, request: Request<Body>) -> Reply {
    runtime.block_on(async {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        Reply {
            status,
            headers,
            bytes: bytes.to_vec(),
        }
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Field names of the requests, from the service's OpenAPI document.
fn keys() -> Vec<String> {
    let mut keys =
        fuzz::schema_field_names(&serde_json::to_value(caption_http::openapi()).unwrap());
    keys.extend(["async", "webhook_url", "strict"].map(str::to_owned));
    keys
}

/// A JSON endpoint's answer to `body`: what the module doc says, and an accepted body (one
/// that names an input nobody uploaded) answers 404 `not_found` or, queued, 200.
fn check_json_reply(body: &[u8], reply: &Reply) -> Result<Verdict, String> {
    let text = String::from_utf8_lossy(&reply.bytes);
    let answer: Value = serde_json::from_slice(&reply.bytes).map_err(|e| {
        format!(
            "{} with a body that is not JSON ({e}): {text}",
            reply.status
        )
    })?;
    if reply.status == StatusCode::OK {
        return Ok(Verdict::Accepted);
    }
    let error = &answer["error"];
    let code = error["code"].as_str().unwrap_or_default();
    let message = error["message"].as_str().unwrap_or_default();
    if code.is_empty() || message.is_empty() {
        return Err(format!(
            "{} without an error code and message: {text}",
            reply.status
        ));
    }
    let sent: Option<Value> = serde_json::from_slice(body).ok();
    match (reply.status.as_u16(), &sent) {
        (400, None) if code == "malformed_json" => Ok(Verdict::Rejected),
        (413, _) if body.len() > MAX_BODY_BYTES => Ok(Verdict::Rejected),
        (404, Some(_)) if code == "not_found" => Ok(Verdict::Accepted),
        (422, Some(document)) => {
            let details = error["details"].as_array().cloned().unwrap_or_default();
            if details.is_empty() {
                return Err(format!("422 naming no field: {text}"));
            }
            for detail in &details {
                let path = detail["path"].as_str().unwrap_or_default();
                if !path_names_field(document, path) || !message.contains(path) {
                    return Err(format!(
                        "422 path {path:?} names no field of the body: {text}"
                    ));
                }
            }
            Ok(Verdict::Rejected)
        }
        _ => Err(format!(
            "{} to a body of {} bytes: {text}",
            reply.status,
            body.len()
        )),
    }
}

/// A JSON endpoint on mutated bodies (structural edits of `seeds`, or byte edits).
fn fuzz_json_endpoint(name: &str, uri: &'static str, seeds: Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions::default().model("tiny.en");
    let (app, _jobs) = support::router_in(dir.path(), &[KEY], options, Some(MAX_BODY_BYTES));
    let runtime = runtime();
    let bytes: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| serde_json::to_vec(s).unwrap())
        .collect();
    let strategy = prop_oneof![
        mutated_json(seeds, keys()).prop_map(|v| serde_json::to_vec(&v).unwrap()),
        mutated_bytes(bytes, &[b"\"input\":", b"\"words\":", b"\"config\":"]),
    ];
    fuzz::run(name, file!(), strategy, |body| {
        let request = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header("x-api-key", KEY)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap();
        check_json_reply(&body, &send(&runtime, &app, request))
    });
}

#[test]
fn generate_bodies() {
    let words = json!([
        {"start": 0.0, "end": 0.4, "word": "hello", "punctuated_word": "Hello"},
        {"start": 0.5, "end": 0.9, "word": "world", "punctuated_word": "world.", "emoji": "🌍"},
    ]);
    let seeds = vec![
        json!({"input": "uploads/5f0c/talk.mp4", "words": words, "config": {
            "linesCount": 1,
            "sizes": {"fontSize": 90},
            "colors": {"hilightColor": {"colors": [{"r": 0, "g": 255, "b": 0}]}},
            "modes": {"displayMode": "WORD", "effectType": "POP"},
        }}),
        json!({"input": "uploads/5f0c/talk.mp4", "words": [], "templateId": "bold-highlight"}),
        json!({"input": "uploads/5f0c/talk.mp4", "words": words, "config": {}, "async": false}),
    ];
    fuzz_json_endpoint("HTTP generate", "/v1/generate", seeds);
}

#[test]
fn transcript_bodies() {
    let seeds = vec![
        json!({"input": "uploads/5f0c/talk.mp4", "lang": "en"}),
        json!({"input": "uploads/5f0c/talk.mp4"}),
    ];
    fuzz_json_endpoint("HTTP transcript", "/v1/transcript", seeds);
}

/// The storage routes alone over local storage in `dir`, as the service mounts them.
fn storage_service(dir: &std::path::Path) -> (Router, LocalStorage) {
    let links = LinkOptions::default()
        .max_upload_bytes(MAX_UPLOAD_BYTES)
        .upload_ttl(Duration::from_secs(24 * 3600))
        .download_ttl(Duration::from_secs(24 * 3600));
    let storage = LocalStorage::open(dir, "http://captions.test", links).unwrap();
    let router = storage_router(StorageRoutes {
        storage: Arc::new(storage.clone()),
        authority: storage.authority().clone(),
    });
    (router, storage)
}

/// A storage route's refusal: a 4xx with S3's XML error body (code and message).
fn check_s3_refusal(reply: &Reply) -> Result<Verdict, String> {
    let text = String::from_utf8_lossy(&reply.bytes);
    let between = |open: &str, close: &str| {
        text.split_once(open)
            .and_then(|(_, rest)| rest.split_once(close))
            .map(|(inside, _)| !inside.trim().is_empty())
            .unwrap_or(false)
    };
    if reply.status.is_client_error()
        && between("<Code>", "</Code>")
        && between("<Message>", "</Message>")
    {
        Ok(Verdict::Rejected)
    } else {
        Err(format!("{}: {text}", reply.status))
    }
}

const BOUNDARY: &str = "----fuzzboundary7MA4YWxkTrZu0gW";

/// A browser's multipart body for `fields` then a file part.
fn multipart(fields: &[(String, String)], file_name: &str, content: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: video/mp4\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

const FORM_TOKENS: &[&[u8]] = &[
    b"\r\n--",
    b"----fuzzboundary7MA4YWxkTrZu0gW",
    b"--\r\n",
    b"\r\n\r\n",
    b"Content-Disposition: form-data; name=\"",
    b"; filename=\"../../x\"",
    b"name=\"file\"",
    b"name=\"key\"",
    b"name=\"Policy\"",
    b"Content-Type: text/html\r\n",
];

#[test]
fn upload_forms() {
    let dir = tempfile::tempdir().unwrap();
    let (app, storage) = storage_service(dir.path());
    let runtime = runtime();
    let now = time::OffsetDateTime::now_utc();
    // A descriptor per content; an accepted upload is checked and then removed, so that the
    // next one finds its key free (uploads are create-only).
    let mut seeds = Vec::new();
    let mut keys = Vec::new();
    for (name, content) in [("a.mp4", &b"0123456789"[..]), ("b.mov", &[7_u8; 4096][..])] {
        let key = ObjectKey::new_upload(name);
        let descriptor = storage.authority().upload_descriptor(&key, now);
        let fields = upload::form_fields(&descriptor.fields);
        seeds.push(multipart(&fields, name, content));
        let mut reversed = fields.clone();
        reversed.reverse();
        reversed.push(("x-ignore-note".to_owned(), "hi".to_owned()));
        seeds.push(multipart(&reversed, name, content));
        keys.push(key);
    }
    let strategy = (mutated_bytes(seeds, FORM_TOKENS), prop::bool::weighted(0.9));
    fuzz::run(
        "HTTP upload form",
        file!(),
        strategy,
        |(body, keep_type)| {
            let content_type = if keep_type {
                format!("multipart/form-data; boundary={BOUNDARY}")
            } else {
                "multipart/form-data".to_owned()
            };
            let request = Request::builder()
                .method(Method::POST)
                .uri(caption_store::UPLOAD_ROUTE)
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .unwrap();
            let reply = send(&runtime, &app, request);
            if reply.status != StatusCode::NO_CONTENT {
                return check_s3_refusal(&reply);
            }
            // Accepted: the file is stored under a key of a descriptor, within its size cap.
            let stored = keys
                .iter()
                .find_map(|key| Some((key, runtime.block_on(storage.head(key)).ok()?)));
            let Some((key, info)) = stored else {
                return Err("204 but no file stored".to_owned());
            };
            runtime.block_on(storage.delete(key)).unwrap();
            if info.size_bytes > MAX_UPLOAD_BYTES {
                return Err(format!("stored {} bytes past the cap", info.size_bytes));
            }
            Ok(Verdict::Accepted)
        },
    );
}

/// The stored file the download fuzzers read: 1000 bytes, each its index mod 251.
fn stored_file(runtime: &tokio::runtime::Runtime, storage: &LocalStorage) -> (ObjectKey, Vec<u8>) {
    let key = ObjectKey::new_under("outputs", "clip.mp4");
    let content: Vec<u8> = (0..1000_u32).map(|i| (i % 251) as u8).collect();
    let body = futures_util::stream::iter([Ok(bytes::Bytes::from(content.clone()))]).boxed();
    runtime
        .block_on(storage.put(&key, body, PutOptions::default()))
        .unwrap();
    let whole = runtime
        .block_on(storage.get(&key, GetOptions::default()))
        .unwrap();
    assert_eq!(whole.info.size_bytes, 1000);
    (key, content)
}

#[test]
fn range_headers() {
    let dir = tempfile::tempdir().unwrap();
    let (app, storage) = storage_service(dir.path());
    let runtime = runtime();
    let (key, content) = stored_file(&runtime, &storage);
    let url = storage
        .authority()
        .download_url(&key, time::OffsetDateTime::now_utc());
    let path = url.strip_prefix("http://captions.test").unwrap().to_owned();
    let seeds = [
        "bytes=0-9",
        "bytes=990-",
        "bytes=-5",
        "bytes=0-0",
        "bytes=999-1000",
    ]
    .map(|s| s.as_bytes().to_vec())
    .to_vec();
    let tokens: &[&[u8]] = &[
        b"bytes=",
        b"-",
        b",",
        b" ",
        b"999",
        b"1000",
        b"18446744073709551615",
    ];
    // Well-formed ranges at and past the file's edges, and mutated ones.
    let edge = || prop_oneof![0_u64..1100, Just(u64::MAX), any::<u64>()];
    let well_formed = (prop::option::of(edge()), prop::option::of(edge())).prop_map(|(a, b)| {
        let show = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        format!("bytes={}-{}", show(a), show(b)).into_bytes()
    });
    let strategy = prop_oneof![well_formed, mutated_bytes(seeds, tokens)];
    fuzz::run("HTTP range header", file!(), strategy, |range| {
        // Bytes a header cannot carry never reach the service.
        let range: Vec<u8> = range
            .into_iter()
            .filter(|&b| b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80)
            .collect();
        let request = Request::builder()
            .uri(&path)
            .header(header::RANGE, HeaderValue::from_bytes(&range).unwrap())
            .body(Body::empty())
            .unwrap();
        let reply = send(&runtime, &app, request);
        let content_range = reply
            .headers
            .get(header::CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        match reply.status {
            // A range the service does not take is ignored: the whole file.
            StatusCode::OK if reply.bytes == content && content_range.is_empty() => {
                Ok(Verdict::Rejected)
            }
            StatusCode::PARTIAL_CONTENT => {
                let span = content_range
                    .strip_prefix("bytes ")
                    .and_then(|r| r.strip_suffix("/1000"))
                    .and_then(|r| r.split_once('-'))
                    .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)));
                match span {
                    Some((first, last))
                        if first <= last && last < 1000 && reply.bytes == content[first..=last] =>
                    {
                        Ok(Verdict::Accepted)
                    }
                    _ => Err(format!(
                        "206 with Content-Range {content_range:?} and {} bytes",
                        reply.bytes.len()
                    )),
                }
            }
            StatusCode::RANGE_NOT_SATISFIABLE if content_range == "bytes */1000" => {
                check_s3_refusal(&reply)
            }
            status => Err(format!(
                "{status} to Range {:?} (Content-Range {content_range:?}, {} bytes)",
                String::from_utf8_lossy(&range),
                reply.bytes.len()
            )),
        }
    });
}

#[test]
fn download_links() {
    // The whole service: a mutated path may leave the storage routes for any other.
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions::default().model("tiny.en");
    let (app, _jobs) = support::router_in(dir.path(), &[KEY], options, Some(MAX_BODY_BYTES));
    let storage = LocalStorage::open(
        &dir.path().join("storage"),
        "http://captions.test",
        LinkOptions::default(),
    )
    .unwrap();
    let runtime = runtime();
    let (key, content) = stored_file(&runtime, &storage);
    let now = time::OffsetDateTime::now_utc();
    let missing = ObjectKey::new_under("outputs", "later.mp4");
    let seeds: Vec<Vec<u8>> = [&key, &missing]
        .map(|k| {
            let url = storage.authority().download_url(k, now);
            url.strip_prefix("http://captions.test")
                .unwrap()
                .as_bytes()
                .to_vec()
        })
        .to_vec();
    let tokens: &[&[u8]] = &[
        b"/",
        b"..",
        b"%2e%2e/",
        b"%00",
        b"%ff",
        b"?",
        b"&",
        b"expires=",
        b"sig=",
        b"%",
    ];
    fuzz::run(
        "HTTP download link",
        file!(),
        mutated_bytes(seeds, tokens),
        |uri| {
            // A target that is not a URI never reaches the service.
            let Ok(uri) = axum::http::Uri::try_from(uri) else {
                return Ok(Verdict::Rejected);
            };
            let is_download = uri.path().starts_with(caption_store::FILES_ROUTE);
            let request = Request::builder().uri(uri).body(Body::empty()).unwrap();
            let reply = send(&runtime, &app, request);
            if !is_download {
                // Another route's answer (a page, a 401, a 404): only a 5xx would be wrong.
                return if reply.status.is_server_error() {
                    Err(format!("{} off the storage routes", reply.status))
                } else {
                    Ok(Verdict::Rejected)
                };
            }
            match reply.status {
                StatusCode::OK if reply.bytes == content => Ok(Verdict::Accepted),
                // A correctly signed link to a file that is not there yet.
                StatusCode::NOT_FOUND
                    if serde_json::from_slice::<Value>(&reply.bytes)
                        .is_ok_and(|v| v["error"]["code"] == "not_found") =>
                {
                    Ok(Verdict::Rejected)
                }
                _ => check_s3_refusal(&reply),
            }
        },
    );
}

/// What the download fuzzer found: a link with `sig` twice (or a path that is not UTF-8 once
/// decoded) was refused with axum's plain-text 400; it is an S3 error like every bad link.
#[test]
fn a_malformed_link_is_an_s3_error() {
    let dir = tempfile::tempdir().unwrap();
    let (app, storage) = storage_service(dir.path());
    let runtime = runtime();
    let (key, _) = stored_file(&runtime, &storage);
    let url = storage
        .authority()
        .download_url(&key, time::OffsetDateTime::now_utc());
    let path = url.strip_prefix("http://captions.test").unwrap();
    for uri in [
        format!("{path}&sig=00"),
        format!("{}%ff?expires=1&sig=00", caption_store::FILES_ROUTE),
    ] {
        let request = Request::builder().uri(&uri).body(Body::empty()).unwrap();
        let reply = send(&runtime, &app, request);
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{uri}");
        assert_eq!(
            check_s3_refusal(&reply),
            Ok(Verdict::Rejected),
            "{uri}: {}",
            String::from_utf8_lossy(&reply.bytes)
        );
        let text = String::from_utf8_lossy(&reply.bytes);
        assert!(text.contains("<Code>InvalidArgument</Code>"), "{text}");
    }
}
