//! The OpenAPI document against the real wire types: every built-in template, a completed and a
//! failed job, a descriptor and an error body, serialised by `caption-core`, must validate
//! against the schemas, with no field the schema does not name and every required field there.
//! So a mirror type in `openapi.rs` cannot drift from the type it describes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::BTreeMap;

use caption_core::{
    Catalog, CreateJobResponse, GenerateRequest, GenerateResponse, JobError, JobStatus,
    TranscriptRequest, TranscriptResult, UploadDescriptor, Word, parse_config_patch,
};
use serde_json::{Value, json};

struct Doc(Value);

impl Doc {
    fn load() -> Self {
        Self(serde_json::to_value(caption_http::openapi()).unwrap())
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.strip_prefix("#/components/schemas/").unwrap();
                let target = &self.0["components"]["schemas"][name];
                assert!(target.is_object(), "dangling {reference}");
                self.resolve(target)
            }
            None => schema,
        }
    }

    fn schema(&self, name: &str) -> &Value {
        self.resolve(&self.0["components"]["schemas"][name])
    }

    /// Every mismatch between `value` and `schema`, with its JSON path.
    fn check(&self, schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
        let schema = self.resolve(schema);
        for combinator in ["oneOf", "anyOf"] {
            if let Some(options) = schema.get(combinator).and_then(Value::as_array) {
                let fits = options.iter().any(|option| {
                    let mut inner = Vec::new();
                    self.check(option, value, path, &mut inner);
                    inner.is_empty()
                });
                if !fits {
                    problems.push(format!("{path}: fits no {combinator} option"));
                }
                return;
            }
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for part in all {
                self.check(part, value, path, problems);
            }
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fits_type = |t: &str| match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        };
        if !types.is_empty() && !types.iter().any(|t| fits_type(t)) {
            problems.push(format!("{path}: {value} is not {types:?}"));
            return;
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            problems.push(format!("{path}: {value} not in {allowed:?}"));
        }
        if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), value.as_f64())
            && n < min
        {
            problems.push(format!("{path}: {n} below {min}"));
        }
        if let (Some(max), Some(n)) = (schema["maximum"].as_f64(), value.as_f64())
            && n > max
        {
            problems.push(format!("{path}: {n} above {max}"));
        }
        match value {
            Value::Object(map) => {
                let properties = schema["properties"].as_object();
                for required in schema["required"].as_array().into_iter().flatten() {
                    let name = required.as_str().unwrap();
                    if !map.contains_key(name) {
                        problems.push(format!("{path}.{name}: required by the schema, absent"));
                    }
                }
                for (name, field) in map {
                    let field_path = format!("{path}.{name}");
                    match properties.and_then(|p| p.get(name)) {
                        Some(field_schema) => {
                            self.check(field_schema, field, &field_path, problems);
                        }
                        None => match schema.get("additionalProperties") {
                            Some(extra) if extra.is_object() => {
                                self.check(extra, field, &field_path, problems);
                            }
                            _ => problems.push(format!("{field_path}: not in the schema")),
                        },
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.check(item_schema, item, &format!("{path}[{i}]"), problems);
                    }
                }
            }
            _ => {}
        }
    }

    fn assert_fits(&self, name: &str, value: &Value) {
        let mut problems = Vec::new();
        self.check(self.schema(name), value, name, &mut problems);
        assert!(problems.is_empty(), "{name}: {problems:#?}\n{value}");
    }
}

#[test]
fn every_builtin_template_fits_the_template_schemas() {
    let doc = Doc::load();
    let catalog = Catalog::builtin().unwrap();
    assert!(catalog.templates().len() >= 10);
    for template in catalog.templates() {
        doc.assert_fits("Template", &serde_json::to_value(template).unwrap());
    }
    for summary in catalog.summaries() {
        doc.assert_fits("TemplateSummary", &serde_json::to_value(summary).unwrap());
    }
}

#[test]
fn job_upload_and_error_shapes_fit() {
    let doc = Doc::load();
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
        TranscriptResult {
            status: JobStatus::InQueue,
            words: None,
            progress: None,
            error: None,
        },
    ] {
        doc.assert_fits("TranscriptResult", &serde_json::to_value(result).unwrap());
    }
    doc.assert_fits(
        "CreateJobResponse",
        &serde_json::to_value(CreateJobResponse { job_id: "j".into() }).unwrap(),
    );
    doc.assert_fits(
        "GenerateResponse",
        &serde_json::to_value(GenerateResponse {
            download_url: "http://x".into(),
        })
        .unwrap(),
    );
    // The extensions of this service: what the routes serialise around the core types.
    doc.assert_fits(
        "TranscriptResult",
        &json!({"status": "COMPLETED", "words": [], "progress": 100, "duration_s": 11.0}),
    );
    doc.assert_fits(
        "TranscriptResult",
        &json!({"status": "FAILED", "words": null, "progress": 40, "duration_s": 132.0,
                "error": {"code": "cancelled", "message": "the job was cancelled by a client"}}),
    );
    doc.assert_fits(
        "GenerateResponse",
        &json!({"download_url": "http://x/v1/storage/files/outputs/a.mp4", "job_id": "j"}),
    );
    for job in [
        json!({"job_id": "j", "status": "IN_PROGRESS", "progress": 42, "download_url": "http://x"}),
        json!({"job_id": "j", "status": "FAILED", "progress": 0, "download_url": "http://x",
               "error": {"code": "no_video", "message": "the input has no video stream"}}),
    ] {
        doc.assert_fits("GenerateJob", &job);
    }
    let fields: BTreeMap<String, String> = [
        "key",
        "bucket",
        "Policy",
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Signature",
    ]
    .into_iter()
    .map(|k| (k.to_owned(), "v".to_owned()))
    .collect();
    doc.assert_fits(
        "UploadDescriptor",
        &serde_json::to_value(UploadDescriptor {
            file: "uploads/x/a.mp4".into(),
            url: "http://x/v1/storage/upload".into(),
            fields,
        })
        .unwrap(),
    );
    doc.assert_fits(
        "ErrorBody",
        &json!({"error": {"code": "invalid_request", "message": "m",
                          "details": [{"path": "input", "rule": "is required"}]}}),
    );
}

#[test]
fn full_requests_fit_the_request_schemas() {
    let doc = Doc::load();
    let catalog = Catalog::builtin().unwrap();
    let config = serde_json::to_value(&catalog.templates()[0].config).unwrap();
    let patch = parse_config_patch(&config, "config").unwrap();
    let request = GenerateRequest {
        input: "uploads/x/a.mp4".into(),
        words: vec![Word::new(0.0, 0.4, "hi")],
        config: patch,
        template_id: Some("karaoke".into()),
    };
    let mut request = serde_json::to_value(request).unwrap();
    doc.assert_fits("GenerateRequest", &request);
    request["async"] = json!(true);
    request["webhook_url"] = json!("https://hooks.example.com/captions");
    doc.assert_fits("GenerateRequest", &request);
    doc.assert_fits(
        "TranscriptRequest",
        &json!({"input": "uploads/x/a.mp4", "lang": "en",
                "webhook_url": "https://hooks.example.com/captions"}),
    );
    doc.assert_fits(
        "TranscriptRequest",
        &serde_json::to_value(TranscriptRequest {
            input: "uploads/x/a.mp4".into(),
            lang: "en".into(),
        })
        .unwrap(),
    );
}

#[test]
fn mode_enums_list_every_value() {
    let doc = Doc::load();
    let effect = &doc.schema("EffectType")["enum"];
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
    assert_eq!(
        doc.0["components"]["securitySchemes"]["api_key"],
        json!({"type": "apiKey", "in": "header", "name": "x-api-key"})
    );
}

#[test]
fn the_checker_catches_a_renamed_or_missing_field() {
    let doc = Doc::load();
    let mut problems = Vec::new();
    doc.check(
        doc.schema("Word"),
        &json!({"start": 0.0, "end": 1.0, "word": "a", "punctuatedWord": "a"}),
        "Word",
        &mut problems,
    );
    assert_eq!(
        problems,
        [
            "Word.punctuated_word: required by the schema, absent",
            "Word.punctuatedWord: not in the schema"
        ]
    );
}
