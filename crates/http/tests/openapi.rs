//! The served OpenAPI document against the schemas derived from the types: its components are
//! the derived schemas (every core type served with each of its fields, types, ranges and enums
//! as derived), every `$ref` resolves, and real responses of the router and serialised core
//! values validate (with `jsonschema`) against the served components, no field unnamed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::collections::BTreeMap;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode};
use caption_core::{
    Catalog, CreateJobResponse, GenerateRequest, JobError, JobStatus, OutputKind,
    TranscriptRequest, TranscriptResult, TranscriptTask, UploadDescriptor, Word,
    parse_config_patch, rules, wire_schemas,
};
use caption_engine::EngineOptions;
use serde_json::{Map, Value, json};
use tower::ServiceExt as _;

const KEY: &str = "test-key-0123456789";

/// The router over a real engine, and the folder it lives in.
fn app() -> (Router, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (app, _) = support::router_in(dir.path(), &[KEY], EngineOptions::default(), None);
    (app, dir)
}

async fn call(app: &Router, method: Method, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
    let builder = Request::builder()
        .method(method)
        .uri(uri)
        .header("x-api-key", KEY)
        .header("content-type", "application/json");
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    let response = app
        .clone()
        .oneshot(builder.body(body).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// The document as `GET /v1/openapi.json` serves it.
async fn served(app: &Router) -> Value {
    let (status, document) = call(app, Method::GET, "/v1/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    document
}

/// Validates values against the served components, with every object closed
/// (`additionalProperties: false` where the schema leaves it open), so a renamed field fails.
struct Checker {
    schemas: Value,
}

fn close_objects(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

impl Checker {
    fn new(document: &Value) -> Self {
        let mut schemas = document["components"]["schemas"].clone();
        close_objects(&mut schemas);
        Self { schemas }
    }

    /// Every problem of `value` against the component `name`, as `path: message`.
    fn problems(&self, name: &str, value: &Value) -> Vec<String> {
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": format!("#/components/schemas/{name}"),
            "components": {"schemas": self.schemas},
        });
        let validator = jsonschema::validator_for(&root).unwrap();
        validator
            .iter_errors(value)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    fn assert_fits(&self, name: &str, value: &Value) {
        let problems = self.problems(name, value);
        assert!(problems.is_empty(), "{name}: {problems:#?}\n{value}");
    }
}

/// `value` without its prose: what is left is fields, types, ranges, lengths, patterns, enums.
fn without_descriptions(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "description")
                .map(|(key, v)| (key.clone(), without_descriptions(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

/// Every `$ref` under `value`.
fn refs<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                out.push(r);
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_served_document_is_the_derived_schema() {
    let (app, _dir) = app();
    let document = served(&app).await;
    let served: &Map<String, Value> = document["components"]["schemas"].as_object().unwrap();
    assert_eq!(served, &caption_http::schemas());

    // Every core type is served with each of its fields as derived: type, range, length,
    // pattern and enum equal. The service's bodies may add fields (`webhook_url`, `async`,
    // `duration_s`, `job_id`, `warnings`), never change one.
    let core = wire_schemas();
    assert!(core.len() >= 20, "{:?}", core.keys());
    for (name, derived) in &core {
        let Some(schema) = served.get(name) else {
            panic!("{name} is not served");
        };
        match derived["properties"].as_object() {
            None => assert_eq!(schema, derived, "{name}"),
            Some(fields) => {
                for (field, field_schema) in fields {
                    assert_eq!(
                        without_descriptions(&schema["properties"][field]),
                        without_descriptions(field_schema),
                        "{name}.{field} is served otherwise than derived"
                    );
                }
                for required in derived["required"].as_array().into_iter().flatten() {
                    let served_required = schema["required"].as_array().unwrap();
                    assert!(served_required.contains(required), "{name}.{required}");
                }
                assert_eq!(schema["type"], derived["type"], "{name}");
            }
        }
    }

    // The drift that started this: the document's fontWeight is the validator's.
    for name in ["Config", "ConfigPatch"] {
        let weight = &served[name]["properties"]["fontWeight"];
        assert_eq!(weight["minimum"], rules::FONT_WEIGHT.min, "{name}");
        assert_eq!(weight["maximum"], rules::FONT_WEIGHT.max, "{name}");
    }

    assert_eq!(
        document["components"]["securitySchemes"]["api_key"],
        json!({"type": "apiKey", "in": "header", "name": "x-api-key"})
    );

    // Every reference, in the paths and the components, names a served schema.
    let mut all = Vec::new();
    refs(&document, &mut all);
    assert!(all.len() > 30);
    for reference in all {
        let name = reference.strip_prefix("#/components/schemas/").unwrap();
        assert!(served.contains_key(name), "dangling {reference}");
    }
    // Each route names its bodies.
    let generate = &document["paths"]["/v1/generate"]["post"];
    assert_eq!(
        generate["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/GenerateRequest"
    );
    assert_eq!(
        generate["responses"]["422"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
    assert_eq!(
        document["paths"]["/v1/templates"]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["items"]["$ref"],
        "#/components/schemas/TemplateSummary"
    );
}

#[tokio::test]
async fn real_responses_fit_the_served_schemas() {
    let (app, _dir) = app();
    let checker = Checker::new(&served(&app).await);

    let (status, list) = call(&app, Method::GET, "/v1/templates", None).await;
    assert_eq!(status, StatusCode::OK);
    let list = list.as_array().unwrap();
    assert!(list.len() >= 10);
    for summary in list {
        checker.assert_fits("TemplateSummary", summary);
        let id = summary["id"].as_str().unwrap();
        let (status, template) =
            call(&app, Method::GET, &format!("/v1/templates/{id}"), None).await;
        assert_eq!(status, StatusCode::OK);
        checker.assert_fits("Template", &template);
    }

    let (status, descriptor) =
        call(&app, Method::GET, "/v1/signedUrl?fileName=clip.mp4", None).await;
    assert_eq!(status, StatusCode::OK);
    checker.assert_fits("UploadDescriptor", &descriptor);

    for (method, uri, body, expected) in [
        (
            Method::GET,
            "/v1/templates/nope",
            None,
            StatusCode::NOT_FOUND,
        ),
        (
            Method::GET,
            "/v1/transcript/nope",
            None,
            StatusCode::NOT_FOUND,
        ),
        (
            Method::POST,
            "/v1/generate",
            Some(json!({"words": [{"start": -1}], "config": {"fontWeight": 1000}})),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            Method::POST,
            "/v1/transcript",
            Some(json!({"input": "", "lang": "english"})),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ] {
        let (status, error) = call(&app, method, uri, body).await;
        assert_eq!(status, expected, "{uri}: {error}");
        checker.assert_fits("ErrorBody", &error);
    }
}

#[tokio::test]
async fn core_values_and_the_service_extensions_fit() {
    let (app, _dir) = app();
    let checker = Checker::new(&served(&app).await);
    let mut word = Word::new(0.5, 0.9, "hello");
    word.punctuated_word = "Hello,".into();
    word.emoji = Some("👋".into());
    for result in [
        TranscriptResult {
            status: JobStatus::Completed,
            words: Some(vec![word.clone()]),
            progress: Some(100),
            error: None,
        },
        TranscriptResult {
            status: JobStatus::Failed,
            words: None,
            progress: None,
            error: Some(JobError {
                code: "no_audio".into(),
                message: "the input has no audio stream".into(),
            }),
        },
    ] {
        checker.assert_fits("TranscriptResult", &serde_json::to_value(result).unwrap());
    }
    checker.assert_fits(
        "TranscriptResult",
        &json!({"status": "FAILED", "words": null, "progress": 40, "duration_s": 132.0,
                "error": {"code": "cancelled", "message": "the job was cancelled by a client"}}),
    );
    checker.assert_fits(
        "CreateJobResponse",
        &serde_json::to_value(CreateJobResponse { job_id: "j".into() }).unwrap(),
    );
    checker.assert_fits(
        "GenerateResponse",
        &json!({"download_url": "http://x/v1/storage/files/outputs/a.mp4", "job_id": "j",
                "warnings": [{"path": "config.colour", "rule": "unknown field"}]}),
    );
    for job in [
        json!({"job_id": "j", "status": "IN_PROGRESS", "progress": 42, "download_url": "http://x"}),
        json!({"job_id": "j", "status": "FAILED", "progress": 0, "download_url": "http://x",
               "error": {"code": "no_video", "message": "the input has no video stream"}}),
    ] {
        checker.assert_fits("GenerateJob", &job);
    }
    let fields: BTreeMap<String, String> = ["key", "bucket", "Policy", "X-Amz-Signature"]
        .into_iter()
        .map(|k| (k.to_owned(), "v".to_owned()))
        .collect();
    checker.assert_fits(
        "UploadDescriptor",
        &serde_json::to_value(UploadDescriptor {
            file: "uploads/x/a.mp4".into(),
            url: "http://x/v1/storage/upload".into(),
            fields,
        })
        .unwrap(),
    );

    // Requests: a full generate with every config field, with and without the extensions.
    let catalog = Catalog::builtin().unwrap();
    let config = serde_json::to_value(&catalog.templates()[0].config).unwrap();
    let request = GenerateRequest {
        input: "uploads/x/a.mp4".into(),
        words: vec![Word::new(0.0, 0.4, "hi")],
        config: parse_config_patch(&config, "config").unwrap(),
        template_id: Some("karaoke".into()),
        output: OutputKind::OverlayWebm,
        reframe: None,
    };
    let mut request = serde_json::to_value(request).unwrap();
    checker.assert_fits("GenerateRequest", &request);
    request["async"] = json!(true);
    request["webhook_url"] = json!("https://hooks.example.com/captions");
    checker.assert_fits("GenerateRequest", &request);
    request["output"] = json!("video");
    request["config"]["cutPausesS"] = json!(0.4);
    request["config"]["cutFillers"] = json!(true);
    checker.assert_fits("GenerateRequest", &request);
    request["reframe"] = json!("9:16");
    checker.assert_fits("GenerateRequest", &request);
    checker.assert_fits(
        "TranscriptRequest",
        &serde_json::to_value(TranscriptRequest {
            input: "uploads/x/a.mp4".into(),
            lang: "en".into(),
            task: TranscriptTask::Translate,
            keep_fillers: false,
            speakers: Some(caption_core::SpeakerCount::Auto),
        })
        .unwrap(),
    );
    checker.assert_fits(
        "TranscriptRequest",
        &json!({"input": "uploads/x/a.mp4", "lang": "en", "keepFillers": true}),
    );
    checker.assert_fits(
        "TranscriptRequest",
        &json!({"input": "uploads/x/a.mp4", "speakers": 2}),
    );
    checker.assert_fits(
        "PreviewRequest",
        &json!({"words": [], "templateId": "karaoke", "at": 1.5, "width": 1080, "height": 1920}),
    );
}

#[tokio::test]
async fn the_schemas_refuse_what_the_validator_refuses() {
    let (app, _dir) = app();
    let checker = Checker::new(&served(&app).await);
    // A renamed field and a missing one.
    let problems = checker.problems(
        "Word",
        &json!({"start": 0.0, "end": 1.0, "word": "a", "punctuatedWord": "a"}),
    );
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems.iter().any(|p| p.contains("punctuated_word")));
    assert!(problems.iter().any(|p| p.contains("punctuatedWord")));
    // Out of range and out of the enum, as the validator says.
    for (config, field) in [
        (json!({"fontWeight": 1000}), "fontWeight"),
        (json!({"sizes": {"fontSize": 0}}), "fontSize"),
        (json!({"modes": {"effectType": "WOBBLE"}}), "effectType"),
        (
            json!({"colors": {"spokenColor": {"colors": [{"r": 256, "g": 0, "b": 0}]}}}),
            "/colors",
        ),
    ] {
        assert!(parse_config_patch(&config, "config").is_err(), "{config}");
        let problems = checker.problems("ConfigPatch", &config);
        assert!(
            problems.iter().any(|p| p.contains(field)),
            "{config}: {problems:#?}"
        );
    }
    for speakers in [json!(0), json!(9), json!("two")] {
        let body = json!({"input": "uploads/x/a.mp4", "speakers": speakers});
        assert!(
            caption_core::parse_transcript_request(&body).is_err(),
            "{body}"
        );
        let problems = checker.problems("TranscriptRequest", &body);
        assert!(!problems.is_empty(), "{body}");
    }
    let schemas = caption_http::schemas();
    let speakers = &schemas["TranscriptRequest"]["properties"]["speakers"];
    assert!(speakers.to_string().contains("SpeakerCount"), "{speakers}");
    assert!(speakers.to_string().contains("S1"), "described: {speakers}");
    assert_eq!(schemas["SpeakerCount"]["oneOf"][1]["maximum"], json!(8));
    let effect = &caption_http::schemas()["EffectType"]["enum"];
    assert_eq!(
        effect,
        &json!([
            "DISABLED",
            "POP",
            "BOUNCE",
            "ZOOM",
            "FADE",
            "SLIDE",
            "SHAKE",
            "TYPEWRITER"
        ])
    );
}

/// The studio offers the enum values of the schema, no more and no fewer: its choice lists
/// (`CHOICES` in `studio/style.js`) are compared with the served enums.
#[tokio::test]
async fn the_studio_offers_the_schema_s_values() {
    let (app, _dir) = app();
    let document = served(&app).await;
    let style =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/studio/style.js")).unwrap();
    for (choice, schema) in [
        ("effect", "EffectType"),
        ("\"display-mode\"", "DisplayMode"),
        ("\"emoji-mode\"", "DisplayEmojis"),
        ("caps", "CapitalizationType"),
    ] {
        let line = style
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{choice}: [")))
            .unwrap_or_else(|| panic!("no {choice} list in style.js"));
        let inside = &line[line.find('[').unwrap() + 1..line.rfind(']').unwrap()];
        let offered: Vec<&str> = inside
            .split(',')
            .map(|v| v.trim().trim_matches('"'))
            .collect();
        let values: Vec<&str> = document["components"]["schemas"][schema]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(offered, values, "studio {choice} against {schema}");
    }
}
