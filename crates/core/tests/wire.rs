//! The wire shapes of the interface: exact field names, nullability, round trips.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{
    Catalog, Color, CreateJobResponse, GenerateResponse, JobStatus, Template, TemplateSummary,
    TranscriptResult, UploadDescriptor, Word,
};
use serde_json::{Value, json};

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

#[test]
fn word_has_the_interface_field_names() {
    let w = Word {
        start: 0.5,
        end: 0.9,
        word: "hello".into(),
        punctuated_word: "Hello,".into(),
        emoji: None,
        ..Default::default()
    };
    let v = serde_json::to_value(&w).unwrap();
    assert_eq!(
        v,
        json!({"start": 0.5, "end": 0.9, "word": "hello", "punctuated_word": "Hello,"})
    );
    let back: Word = serde_json::from_value(v).unwrap();
    assert_eq!(back, w);
}

#[test]
fn single_template_has_id_name_and_a_full_config() {
    let catalog = Catalog::builtin().unwrap();
    let t: &Template = catalog.get("bold-highlight").unwrap();
    let v = serde_json::to_value(t).unwrap();
    assert_eq!(keys(&v), ["config", "id", "name"]);
    let config = &v["config"];
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
        assert!(config.get(field).is_some(), "config lacks {field}");
    }
    assert_eq!(
        keys(&config["colors"]),
        [
            "backgroundColor",
            "defaultColor",
            "hilightColor",
            "shadowColor",
            "spokenColor",
            "strokeColor"
        ]
    );
    assert_eq!(
        keys(&config["modes"]),
        [
            "displayEmojis",
            "displayMode",
            "displayWords",
            "effectMode",
            "effectType",
            "spokenMode"
        ]
    );
    assert_eq!(
        keys(&config["sizes"]),
        [
            "backgroundRadius",
            "blurSize",
            "emojiSize",
            "fontSize",
            "strokeSize"
        ]
    );
    assert_eq!(config["modes"]["displayMode"], "ALL");
    assert_eq!(config["capitalizationType"], "UPPERCASE");
    let first = &config["colors"]["hilightColor"]["colors"][0];
    assert_eq!(
        keys(first),
        ["b", "g", "r"],
        "opaque colors carry r, g, b only"
    );
    let back: Template = serde_json::from_value(v).unwrap();
    assert_eq!(&back, t);
}

#[test]
fn list_item_has_only_id_and_name() {
    let catalog = Catalog::builtin().unwrap();
    let list = serde_json::to_value(catalog.summaries()).unwrap();
    let items = list.as_array().unwrap();
    assert!(items.len() >= 12);
    for item in items {
        assert_eq!(keys(item), ["id", "name"]);
    }
    let parsed: Vec<TemplateSummary> = serde_json::from_value(list).unwrap();
    assert_eq!(parsed[0].id, "bold-highlight");
}

#[test]
fn job_result_words_are_null_until_completed() {
    let queued = TranscriptResult {
        status: JobStatus::InQueue,
        words: None,
        progress: None,
        error: None,
    };
    assert_eq!(
        serde_json::to_value(&queued).unwrap(),
        json!({"status": "IN_QUEUE", "words": null})
    );
    for status in ["IN_QUEUE", "IN_PROGRESS", "FAILED"] {
        let absent: TranscriptResult = serde_json::from_value(json!({"status": status})).unwrap();
        assert_eq!(absent.words, None);
    }
    let done: TranscriptResult =
        serde_json::from_value(json!({"status": "COMPLETED", "words": [{"start": 0, "end": 1, "word": "a", "punctuated_word": "A."}]}))
            .unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(done.words.unwrap()[0].punctuated_word, "A.");
    assert!(serde_json::from_value::<TranscriptResult>(json!({"status": "DONE"})).is_err());
}

#[test]
fn job_status_wire_names() {
    for (status, wire) in [
        (JobStatus::InQueue, "IN_QUEUE"),
        (JobStatus::InProgress, "IN_PROGRESS"),
        (JobStatus::Completed, "COMPLETED"),
        (JobStatus::Failed, "FAILED"),
    ] {
        assert_eq!(serde_json::to_value(status).unwrap(), json!(wire));
        assert_eq!(status.as_str(), wire);
    }
}

#[test]
fn creation_generate_and_upload_shapes() {
    assert_eq!(
        serde_json::to_value(CreateJobResponse {
            job_id: "j1".into()
        })
        .unwrap(),
        json!({"job_id": "j1"})
    );
    assert_eq!(
        serde_json::to_value(GenerateResponse {
            download_url: "http://x/y".into()
        })
        .unwrap(),
        json!({"download_url": "http://x/y"})
    );
    let d: UploadDescriptor = serde_json::from_value(json!({
        "file": "uploads/1/a.mp4", "url": "http://h/u",
        "fields": {"key": "uploads/1/a.mp4", "bucket": "b", "Policy": "p", "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
                   "X-Amz-Credential": "c", "X-Amz-Date": "d", "X-Amz-Signature": "s"}
    }))
    .unwrap();
    assert_eq!(d.fields["Policy"], "p");
    assert_eq!(
        keys(&serde_json::to_value(&d).unwrap()),
        ["fields", "file", "url"]
    );
}

#[test]
fn color_alpha_is_an_optional_extension() {
    let c: Color = serde_json::from_value(json!({"r": 1, "g": 2.4, "b": 2.6})).unwrap();
    assert_eq!(c, Color::rgb(1, 2, 3));
    let translucent = Color::rgba(0, 0, 0, 128);
    assert_eq!(
        serde_json::to_value(translucent).unwrap(),
        json!({"r": 0, "g": 0, "b": 0, "a": 128})
    );
    assert!(serde_json::from_value::<Color>(json!({"r": 256, "g": 0, "b": 0})).is_err());
}
