//! `POST /v1/preview` and the studio's files, in-process: the PNG's size and pixels, the key,
//! the same 422 field paths as `POST /v1/generate`, and every file the page names is served.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use caption_engine::EngineOptions;
use serde_json::{Value, json};
use tower::ServiceExt as _;

const KEY: &str = "preview-test-key-0123456789";

fn app(dir: &std::path::Path) -> Router {
    support::router_in(dir, &[KEY], EngineOptions::default(), None).0
}

async fn send(
    app: &Router,
    method: Method,
    uri: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> (StatusCode, Option<String>, Vec<u8>) {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(key) = key {
        builder = builder.header("x-api-key", key);
    }
    let request = match body {
        Some(body) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
        None => builder.body(Body::empty()).unwrap(),
    };
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let media_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, media_type, bytes.to_vec())
}

fn words() -> Value {
    json!([
        {"start": 0.2, "end": 0.6, "word": "Hello", "punctuated_word": "Hello,"},
        {"start": 0.7, "end": 1.1, "word": "world", "punctuated_word": "world."},
    ])
}

/// (width, height, alpha channel) of a PNG, decoded by tiny-skia's PNG reader.
fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let pixmap = tiny_skia::Pixmap::decode_png(png).unwrap();
    let alpha = pixmap.data().chunks_exact(4).map(|p| p[3]).collect();
    (pixmap.width(), pixmap.height(), alpha)
}

#[tokio::test]
async fn draws_the_caption_alone_at_the_frames_size() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let body =
        json!({"words": words(), "templateId": "karaoke", "at": 0.4, "width": 320, "height": 568});
    let (status, media_type, png) =
        send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&body)).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&png));
    assert_eq!(media_type.as_deref(), Some("image/png"));
    let (width, height, alpha) = decode(&png);
    assert_eq!((width, height), (320, 568));
    let drawn = alpha.iter().filter(|&&a| a > 0).count();
    assert!(drawn > 200, "{drawn} caption pixels");
    assert!(
        alpha[0] == 0 && drawn < alpha.len() / 4,
        "the frame around the caption is transparent"
    );

    // Past the words, nothing is drawn.
    let late = json!({"words": words(), "at": 5.0, "width": 320, "height": 568});
    let (status, _, png) = send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&late)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(decode(&png).2.iter().all(|&a| a == 0));

    // Another style gives other pixels.
    let other = json!({"words": words(), "templateId": "subtitle-bar", "at": 0.4, "width": 320, "height": 568});
    let (_, _, other_png) = send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&other)).await;
    assert_ne!(decode(&other_png).2, alpha);
}

#[tokio::test]
async fn needs_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let body = json!({"words": words()});
    let (status, _, _) = send(&app, Method::POST, "/v1/preview", None, Some(&body)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = send(
        &app,
        Method::POST,
        "/v1/preview",
        Some("wrong"),
        Some(&body),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

fn problems(bytes: &[u8]) -> Vec<(String, String)> {
    let body: Value = serde_json::from_slice(bytes).unwrap();
    assert_eq!(body["error"]["code"], "invalid_request", "{body}");
    body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_owned(),
                d["rule"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn rejects_bad_styles_with_the_paths_generate_gives() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let style = json!({
        "words": [{"start": 2.0, "end": 1.0, "word": "x", "punctuated_word": "x"}],
        "config": {
            "colors": {"hilightColor": {"colors": [{"r": 300, "g": 0, "b": 0}]}},
            "modes": {"effectType": "EXPLODE"},
            "linesCount": 0,
        },
    });
    let mut generate = style.clone();
    generate["input"] = json!("uploads/none/clip.mp4");
    let (status, _, generate_body) = send(
        &app,
        Method::POST,
        "/v1/generate",
        Some(KEY),
        Some(&generate),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _, preview_body) =
        send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&style)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let expected = problems(&generate_body);
    assert!(expected.len() >= 4, "{expected:?}");
    assert!(
        expected
            .iter()
            .any(|(p, _)| p == "config.colors.hilightColor.colors[0].r"),
        "{expected:?}"
    );
    assert_eq!(problems(&preview_body), expected);

    // The frame's own fields, each named.
    let frame = json!({"words": words(), "width": 8, "height": "tall", "at": -1});
    let (status, _, body) = send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&frame)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let paths: Vec<String> = problems(&body).into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["width", "height", "at"]);
    let huge = json!({"words": words(), "width": 3840, "height": 3840});
    let (status, _, body) = send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&huge)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problems(&body)[0].0, "width");

    let unknown = json!({"words": words(), "templateId": "no-such-style"});
    let (status, _, _) = send(&app, Method::POST, "/v1/preview", Some(KEY), Some(&unknown)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(
        &app,
        Method::POST,
        "/v1/preview",
        Some(KEY),
        Some(&json!([1])),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[test]
fn is_in_the_openapi_document_behind_the_key() {
    let doc = serde_json::to_value(caption_http::openapi()).unwrap();
    let operation = &doc["paths"]["/v1/preview"]["post"];
    assert_eq!(
        operation["security"],
        json!([{"api_key": []}]),
        "{operation}"
    );
    assert!(
        operation["responses"]["200"]["content"]["image/png"].is_object(),
        "{operation}"
    );
    assert!(operation["responses"]["422"].is_object());
    let schema = &doc["components"]["schemas"]["PreviewRequest"]["properties"];
    for field in ["words", "config", "templateId", "at", "width", "height"] {
        assert!(
            schema[field].is_object(),
            "PreviewRequest.{field} missing: {schema}"
        );
    }
}

#[tokio::test]
async fn serves_the_studio_and_every_file_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let (status, media_type, page) = send(&app, Method::GET, "/", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(media_type.as_deref(), Some("text/html; charset=utf-8"));
    let page = String::from_utf8(page).unwrap();
    // Every /studio/ file named by the page or imported by its modules answers 200.
    let mut pending: Vec<String> = vec![page];
    let mut seen = Vec::new();
    while let Some(text) = pending.pop() {
        for part in text
            .split(['"', '\''])
            .filter(|p| p.starts_with("/studio/") || p.starts_with("./"))
        {
            let path = format!(
                "/studio/{}",
                part.trim_start_matches("/studio/").trim_start_matches("./")
            );
            if seen.contains(&path) {
                continue;
            }
            let (status, media_type, body) = send(&app, Method::GET, &path, None, None).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            assert!(media_type.is_some(), "{path}");
            seen.push(path);
            pending.push(String::from_utf8(body).unwrap());
        }
    }
    for file in [
        "app.js",
        "api.js",
        "editor.js",
        "style.js",
        "studio.css",
        "icon.svg",
    ] {
        assert!(
            seen.contains(&format!("/studio/{file}")),
            "{file} not reached from the page: {seen:?}"
        );
    }
    let (status, media_type, _) = send(&app, Method::GET, "/studio/missing.js", None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(media_type.as_deref(), Some("application/json"));
}
