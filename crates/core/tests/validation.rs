//! Every rule is reported with its field path, all at once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{
    CapitalizationType, Catalog, ConfigPatch, DisplayMode, parse_config_patch,
    parse_generate_request, parse_transcript_request,
};
use serde_json::{Value, json};

fn words() -> Value {
    json!([{"start": 0.0, "end": 0.4, "word": "hi", "punctuated_word": "Hi!"}])
}

fn generate(config: Value) -> Value {
    json!({"input": "uploads/x/a.mp4", "words": words(), "config": config})
}

/// (request body, expected path, a fragment of the expected rule)
fn cases() -> Vec<(Value, &'static str, &'static str)> {
    vec![
        (
            generate(json!({"colors": {"hilightColor": {"colors": [{"r": 300, "g": 0, "b": 0}]}}})),
            "config.colors.hilightColor.colors[0].r",
            "must be an integer from 0 to 255",
        ),
        (
            generate(json!({"colors": {"defaultColor": {"colors": [{"r": -1, "g": 0, "b": 0}]}}})),
            "config.colors.defaultColor.colors[0].r",
            "from 0 to 255",
        ),
        (
            generate(
                json!({"colors": {"strokeColor": {"colors": [{"r": "red", "g": 0, "b": 0}]}}}),
            ),
            "config.colors.strokeColor.colors[0].r",
            "integer",
        ),
        (
            generate(json!({"colors": {"shadowColor": {"colors": [{"r": 1, "g": 2}]}}})),
            "config.colors.shadowColor.colors[0].b",
            "is required",
        ),
        (
            generate(json!({"colors": {"spokenColor": {"colors": "white"}}})),
            "config.colors.spokenColor.colors",
            "array",
        ),
        (
            generate(json!({"colors": {"backgroundColor": {}}})),
            "config.colors.backgroundColor.colors",
            "is required",
        ),
        (
            generate(json!({"colors": []})),
            "config.colors",
            "must be an object",
        ),
        (
            generate(json!({"modes": {"displayMode": "SOMETIMES"}})),
            "config.modes.displayMode",
            "ALL, PROGRESSIVE, WORD",
        ),
        (
            generate(json!({"modes": {"displayWords": "all"}})),
            "config.modes.displayWords",
            "PUNCTUATION, COUNT, PAUSE",
        ),
        (
            generate(json!({"modes": {"spokenMode": 1}})),
            "config.modes.spokenMode",
            "NONE, WORD, LINE",
        ),
        (
            generate(json!({"modes": {"effectType": "SPIN"}})),
            "config.modes.effectType",
            "TYPEWRITER",
        ),
        (
            generate(json!({"modes": {"effectMode": "FRAME"}})),
            "config.modes.effectMode",
            "WORD, LINE, PAGE",
        ),
        (
            generate(json!({"modes": {"displayEmojis": "ALL"}})),
            "config.modes.displayEmojis",
            "NONE, WORD, LINE, PAGE",
        ),
        (
            generate(json!({"capitalizationType": "TITLE"})),
            "config.capitalizationType",
            "SENTENCE",
        ),
        (
            generate(json!({"sizes": {"fontSize": 0}})),
            "config.sizes.fontSize",
            "from 1 to 1000",
        ),
        (
            generate(json!({"sizes": {"strokeSize": -2}})),
            "config.sizes.strokeSize",
            "from 0 to 100",
        ),
        (
            generate(json!({"sizes": {"blurSize": "big"}})),
            "config.sizes.blurSize",
            "must be a number",
        ),
        (
            generate(json!({"sizes": {"emojiSize": -1}})),
            "config.sizes.emojiSize",
            "from 0",
        ),
        (
            generate(json!({"sizes": {"backgroundRadius": -5}})),
            "config.sizes.backgroundRadius",
            "from 0",
        ),
        (
            generate(json!({"linesCount": 0})),
            "config.linesCount",
            "integer from 1 to 10",
        ),
        (
            generate(json!({"linesCount": 1.5})),
            "config.linesCount",
            "integer",
        ),
        (
            generate(json!({"wordsPerLineCount": -3})),
            "config.wordsPerLineCount",
            "integer from 1 to 50",
        ),
        (
            generate(json!({"wordHasBackground": "yes"})),
            "config.wordHasBackground",
            "true or false",
        ),
        (
            generate(json!({"emojiAnimated": 1})),
            "config.emojiAnimated",
            "true or false",
        ),
        (
            generate(json!({"font": ""})),
            "config.font",
            "non-empty string",
        ),
        (
            generate(json!({"position": {"x": 2, "y": 0.5}})),
            "config.position.x",
            "from 0 to 1",
        ),
        (
            generate(json!({"maxWidth": 0})),
            "config.maxWidth",
            "from 0.1 to 1",
        ),
        (generate(json!("bold")), "config", "must be an object"),
        (json!({"words": words()}), "input", "is required"),
        (
            json!({"input": 5, "words": words()}),
            "input",
            "non-empty string",
        ),
        (json!({"input": "a"}), "words", "is required"),
        (json!({"input": "a", "words": {}}), "words", "array"),
        (
            json!({"input": "a", "words": [{"start": 2, "end": 1, "word": "x", "punctuated_word": "x"}]}),
            "words[0].end",
            "before start",
        ),
        (
            json!({"input": "a", "words": [{"start": -1, "end": 1, "word": "x", "punctuated_word": "x"}]}),
            "words[0].start",
            "from 0",
        ),
        (
            json!({"input": "a", "words": [{"start": 0, "end": 1, "word": "x"}]}),
            "words[0].punctuated_word",
            "is required",
        ),
        (
            json!({"input": "a", "words": [{"start": 0, "end": 1, "word": 3, "punctuated_word": "x"}]}),
            "words[0].word",
            "string",
        ),
        (json!([1, 2]), "body", "must be an object"),
        (
            generate(json!({"emphasis": "BOLD"})),
            "config.emphasis",
            "must be one of NONE, COLOR, SIZE, COLOR_SIZE",
        ),
        (
            generate(json!({"speakerColors": [{"r": 0, "g": 0, "b": 256}]})),
            "config.speakerColors[0].b",
            "from 0 to 255",
        ),
        (
            generate(json!({"speakerColors": vec![json!({"r": 0, "g": 0, "b": 0}); 17]})),
            "config.speakerColors",
            "at most 16 colors",
        ),
        (
            generate(json!({"speakerColors": {"r": 0, "g": 0, "b": 0}})),
            "config.speakerColors",
            "must be an array",
        ),
        (
            generate(json!({"cutPausesS": 0.05})),
            "config.cutPausesS",
            "from 0.1 to 10",
        ),
        (
            generate(json!({"cutFillers": "yes"})),
            "config.cutFillers",
            "true or false",
        ),
        (
            json!({"input": "a", "words": [{"start": 0, "end": 1, "word": "um", "punctuated_word": "um", "filler": 1}]}),
            "words[0].filler",
            "true or false",
        ),
        (
            json!({"input": "a", "words": [{"start": 0, "end": 1, "word": "x", "punctuated_word": "x", "emphasis": "yes"}]}),
            "words[0].emphasis",
            "true or false",
        ),
        (
            json!({"input": "a", "words": [{"start": 0, "end": 1, "word": "x", "punctuated_word": "x", "speaker": ""}]}),
            "words[0].speaker",
            "at most 100 characters",
        ),
        (
            json!({"input": "a", "words": [{"start": 0, "end": 1, "word": "x", "punctuated_word": "x", "confidence": 1.5}]}),
            "words[0].confidence",
            "a number from 0 to 1",
        ),
        (
            json!({"input": "a", "words": [], "output": "overlay-mov", "config": {"cutPausesS": 0.4}}),
            "config.cutPausesS",
            "cannot be used with an overlay output",
        ),
        (
            json!({"input": "a", "words": [], "output": "overlay-webm", "config": {"cutFillers": true}}),
            "config.cutFillers",
            "cannot be used with an overlay output",
        ),
        (
            json!({"input": "a", "words": [], "output": "gif"}),
            "output",
            "must be one of video, overlay-mov, overlay-webm",
        ),
    ]
}

#[test]
fn the_editing_fields_parse_and_merge() {
    let body = json!({
        "input": "a",
        "words": [{"start": 0, "end": 1, "word": "um", "punctuated_word": "Um,",
                   "filler": true, "emphasis": false, "speaker": "Ana", "confidence": 0.25}],
        "config": {"emphasis": "COLOR_SIZE", "speakerColors": [{"r": 255, "g": 0, "b": 0}],
                   "cutPausesS": 0.4, "cutFillers": true},
    });
    let request = parse_generate_request(&body).unwrap();
    assert_eq!(request.output, caption_core::OutputKind::Video);
    let overlay = json!({"input": "a", "words": [], "output": "overlay-webm"});
    assert_eq!(
        parse_generate_request(&overlay).unwrap().output,
        caption_core::OutputKind::OverlayWebm
    );
    let word = &request.words[0];
    assert!(word.filler);
    assert_eq!(word.emphasis, Some(false));
    assert_eq!(word.speaker.as_deref(), Some("Ana"));
    assert_eq!(word.confidence, Some(0.25));
    let catalog = Catalog::builtin().unwrap();
    let base = &catalog.templates()[0].config;
    assert_eq!(base.emphasis, caption_core::Emphasis::None);
    let config = request.config.apply(base);
    assert_eq!(config.emphasis, caption_core::Emphasis::ColorSize);
    assert_eq!(
        config.speaker_colors,
        vec![caption_core::Color::rgb(255, 0, 0)]
    );
    assert_eq!(config.cut_pauses_s, Some(0.4));
    assert!(config.cut_fillers);
    // Words and configs without the fields read as before and write nothing new.
    let plain = serde_json::to_value(caption_core::Word::new(0.0, 1.0, "hi")).unwrap();
    assert_eq!(plain.as_object().unwrap().len(), 4, "{plain}");
    let defaults = parse_generate_request(&json!({"input": "a", "words": []})).unwrap();
    assert_eq!(defaults.output, caption_core::OutputKind::Video);
}

#[test]
fn each_invalid_input_names_its_path_and_rule() {
    let cases = cases();
    assert!(cases.len() >= 20);
    for (body, path, rule) in cases {
        let errors = parse_generate_request(&body).expect_err(&format!("accepted {body}"));
        let hit = errors.iter().find(|e| e.path == path);
        let Some(hit) = hit else {
            panic!("no error at {path} for {body}; got: {errors}")
        };
        assert!(
            hit.rule.contains(rule),
            "rule at {path} is {:?}, wanted {rule:?}",
            hit.rule
        );
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let body = json!({
        "input": "",
        "words": [{"start": "0", "end": 1, "word": "a", "punctuated_word": "a"}],
        "config": {"linesCount": 0, "sizes": {"fontSize": -1}, "modes": {"effectType": "NOPE"},
                   "colors": {"hilightColor": {"colors": [{"r": 0, "g": 999, "b": 0}]}}}
    });
    let errors = parse_generate_request(&body).unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    for want in [
        "input",
        "words[0].start",
        "config.linesCount",
        "config.sizes.fontSize",
        "config.modes.effectType",
        "config.colors.hilightColor.colors[0].g",
    ] {
        assert!(paths.contains(&want), "missing {want} in {paths:?}");
    }
    assert_eq!(errors.to_string().matches("; ").count(), errors.len() - 1);
}

#[test]
fn a_valid_request_parses_sorts_words_and_ignores_unknown_fields() {
    let body = json!({
        "input": "uploads/x/a.mp4",
        "words": [
            {"start": 1.0, "end": 1.5, "word": "world", "punctuated_word": "world.", "emoji": "🌍"},
            {"start": 0.2, "end": 0.9, "word": "hello", "punctuated_word": "Hello,"}
        ],
        "config": {"modes": {}, "linesCount": 2, "colors": {"hilightColor": {"colors": [{"r": 10.4, "g": 0, "b": 255}]}},
                   "somethingElse": true},
        "templateId": "karaoke"
    });
    let req = parse_generate_request(&body).unwrap();
    assert_eq!(req.words[0].word, "hello");
    assert_eq!(req.words[1].emoji.as_deref(), Some("🌍"));
    assert_eq!(req.config.lines_count, Some(2));
    assert_eq!(req.template_id.as_deref(), Some("karaoke"));
    let hilight = req.config.colors.unwrap().hilight_color.unwrap();
    assert_eq!(hilight.colors[0].r, 10);
}

#[test]
fn empty_word_list_and_empty_config_are_valid() {
    let req = parse_generate_request(&json!({"input": "k", "words": [], "config": {"modes": {}}}))
        .unwrap();
    assert!(req.words.is_empty());
    assert_eq!(req.config.modes, Some(Default::default()));
}

#[test]
fn merging_a_partial_config_replaces_only_given_fields() {
    let catalog = Catalog::builtin().unwrap();
    let base = catalog.get("karaoke").unwrap().config.clone();
    let patch = parse_config_patch(
        &json!({"modes": {"displayMode": "WORD"}, "capitalizationType": "LOWERCASE", "sizes": {"fontSize": 99}}),
        "config",
    )
    .unwrap();
    let merged = patch.apply(&base);
    assert_eq!(merged.modes.display_mode, DisplayMode::Word);
    assert_eq!(merged.modes.spoken_mode, base.modes.spoken_mode);
    assert_eq!(merged.capitalization_type, CapitalizationType::Lowercase);
    assert_eq!(merged.sizes.font_px, 99.0);
    assert_eq!(merged.sizes.stroke_px, base.sizes.stroke_px);
    assert_eq!(merged.colors, base.colors);
    assert_eq!(ConfigPatch::default().apply(&base), base);
}

#[test]
fn incomplete_templates_list_every_missing_field() {
    let patch = parse_config_patch(&json!({"linesCount": 2}), "config").unwrap();
    let errors = patch.into_complete("config").unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"config.colors.hilightColor"));
    assert!(paths.contains(&"config.modes.effectMode"));
    assert!(paths.contains(&"config.sizes.backgroundRadius"));
    assert!(paths.contains(&"config.font"));
    assert!(!paths.contains(&"config.linesCount"));
}

#[test]
fn user_template_folder_adds_and_overrides() {
    let dir = std::env::temp_dir().join(format!("caption-core-templates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = Catalog::builtin().unwrap();
    let mut karaoke = serde_json::to_value(catalog.get("karaoke").unwrap()).unwrap();
    karaoke["name"] = json!("My Karaoke");
    std::fs::write(dir.join("karaoke.json"), karaoke.to_string()).unwrap();
    karaoke["id"] = json!("house-style");
    std::fs::write(dir.join("house.json"), karaoke.to_string()).unwrap();
    let merged = Catalog::builtin().unwrap().with_folder(&dir).unwrap();
    assert_eq!(merged.templates().len(), catalog.templates().len() + 1);
    assert_eq!(merged.get("karaoke").unwrap().name, "My Karaoke");
    assert!(merged.get("house-style").is_some());

    karaoke["id"] = json!("Bad Id");
    karaoke["config"]["linesCount"] = json!(0);
    std::fs::write(dir.join("zz-bad.json"), karaoke.to_string()).unwrap();
    let err = Catalog::builtin()
        .unwrap()
        .with_folder(&dir)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("zz-bad.json")
            && err.contains("id: must be kebab-case")
            && err.contains("config.linesCount"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn transcript_requests() {
    let ok = parse_transcript_request(&json!({"input": "uploads/a/b.mp4"})).unwrap();
    assert_eq!(ok.lang, "auto");
    assert_eq!(
        parse_transcript_request(&json!({"input": "k", "lang": "es"}))
            .unwrap()
            .lang,
        "es"
    );
    let bad = parse_transcript_request(&json!({"lang": "spanish"})).unwrap_err();
    let paths: Vec<&str> = bad.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["input", "lang"]);
    assert_eq!(ok.task, caption_core::TranscriptTask::Transcribe);
    let translate = parse_transcript_request(&json!({"input": "k", "task": "translate"})).unwrap();
    assert_eq!(translate.task, caption_core::TranscriptTask::Translate);
    let bad = parse_transcript_request(&json!({"input": "k", "task": "summarize"})).unwrap_err();
    let bad = bad.iter().next().unwrap();
    assert_eq!(bad.path, "task");
    assert!(bad.rule.contains("transcribe, translate"), "{}", bad.rule);
    assert!(!ok.keep_fillers);
    let keep = parse_transcript_request(&json!({"input": "k", "keepFillers": true})).unwrap();
    assert!(keep.keep_fillers);
    for (body, rule) in [
        (json!({"input": "k", "keepFillers": "yes"}), "true or false"),
        (
            json!({"input": "k", "keepFillers": true, "task": "translate"}),
            "cannot be used with",
        ),
    ] {
        let bad = parse_transcript_request(&body).unwrap_err();
        let bad = bad.iter().next().unwrap();
        assert_eq!(bad.path, "keepFillers");
        assert!(bad.rule.contains(rule), "{}", bad.rule);
    }
}

#[test]
fn transcript_requests_take_a_speaker_count() {
    use caption_core::SpeakerCount;
    let count = |body: Value| parse_transcript_request(&body).map(|r| r.speakers);
    assert_eq!(count(json!({"input": "k"})).unwrap(), None);
    assert_eq!(
        count(json!({"input": "k", "speakers": null})).unwrap(),
        None
    );
    assert_eq!(
        count(json!({"input": "k", "speakers": "auto"})).unwrap(),
        Some(SpeakerCount::Auto)
    );
    assert_eq!(
        count(json!({"input": "k", "speakers": 3})).unwrap(),
        Some(SpeakerCount::Exactly(3))
    );
    for bad in [
        json!(0),
        json!(9),
        json!(2.5),
        json!("two"),
        json!("AUTO"),
        json!(true),
    ] {
        let problems = count(json!({"input": "k", "speakers": bad})).unwrap_err();
        let problem = problems.iter().next().unwrap();
        assert_eq!(problem.path, "speakers", "{bad}");
        assert!(
            problem
                .rule
                .contains("\"auto\" or a whole number from 1 to 8"),
            "{}",
            problem.rule
        );
    }
}

#[test]
fn unknown_fields_are_warnings_with_a_suggestion_or_errors_when_strict() {
    use caption_core::{UnknownFields, parse_config_patch_with, parse_generate_request_with};
    let body = generate(json!({
        "colours": {},
        "fontsize": 80,
        "modes": {"efectType": "POP"},
        "sizes": {"fontSize": 70, "strokeWidth": 3},
        "linesCount": 2
    }));
    let checked = parse_generate_request_with(&body, UnknownFields::Warn).unwrap();
    let warnings: Vec<String> = checked.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "config.colours: unknown field; did you mean config.colors? (ignored)",
            "config.fontsize: unknown field; did you mean config.sizes.fontSize? (ignored)",
            "config.modes.efectType: unknown field; did you mean config.modes.effectType? (ignored)",
            "config.sizes.strokeWidth: unknown field; did you mean config.sizes.strokeSize? (ignored)",
        ]
    );
    assert_eq!(checked.value.config.lines_count, Some(2));

    // Strict: the same fields are errors, listed with every other problem.
    let mut bad = body.clone();
    bad["config"]["linesCount"] = json!(0);
    bad["extra"] = json!(true);
    let errors = parse_generate_request_with(&bad, UnknownFields::Deny).unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "extra",
            "config.colours",
            "config.fontsize",
            "config.modes.efectType",
            "config.sizes.strokeWidth",
            "config.linesCount"
        ]
    );
    // Ignored by default, as the interface says.
    assert!(parse_generate_request(&body).is_ok());
    let plain = parse_config_patch_with(&body["config"], "config", UnknownFields::Ignore).unwrap();
    assert!(plain.warnings.is_empty());
}

#[test]
fn font_weight_is_100_to_900() {
    for (weight, ok) in [
        (100, true),
        (900, true),
        (950, false),
        (1000, false),
        (50, false),
    ] {
        let result = parse_config_patch(&json!({"fontWeight": weight}), "config");
        assert_eq!(result.is_ok(), ok, "{weight}");
        if let Err(e) = result {
            assert_eq!(
                e.to_string(),
                "config.fontWeight: must be an integer from 100 to 900"
            );
        }
    }
}
