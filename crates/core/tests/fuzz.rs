//! Arbitrary and mutated input at every parser of the wire format: config and words JSON,
//! generate and transcript requests, and the SRT, WebVTT and ASS readers.
//!
//! Each parser never panics; every rejection names the offending field by a path that exists in
//! the input (or a required field missing from an object there), or for subtitles the line; and
//! whatever is accepted keeps to the rules of `caption_core::rules` and comes back unchanged
//! when written out and parsed again. `CAPTIONS_FUZZ_CASES` sets the cases per parser;
//! `scripts/fuzz` runs 100,000 each.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::rules::{
    MAX_INPUT_CHARS, MAX_TEMPLATE_ID_CHARS, MAX_WORD_BYTES, MAX_WORDS, WORD_TIME_S,
};
use caption_core::{
    Catalog, ExportOptions, SubtitleError, SubtitleFormat, ValidationErrors, Word, export_words,
    import_words, parse_config_patch, parse_cues, parse_generate_request, parse_transcript_request,
    parse_words,
};
use caption_testkit::fuzz::{self, Verdict, mutated_bytes, mutated_json, path_names_field};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Field names of the wire format, from its JSON Schema, for edits that add fields the parsers
/// know.
fn keys() -> Vec<String> {
    fuzz::schema_field_names(&Value::Object(caption_core::wire_schemas()))
}

/// The same names as tokens for byte edits.
const KEY_TOKENS: &[&[u8]] = &[
    b"\"config\":",
    b"\"words\":",
    b"\"start\":",
    b"\"end\":",
    b"\"colors\":",
    b"\"r\":",
    b"\"sizes\":",
    b"\"fontSize\":",
    b"\"linesCount\":",
    b"\"modes\":",
    b"\"displayMode\":",
];

fn sample_words() -> Vec<Value> {
    vec![
        json!([]),
        json!([{"start": 0.0, "end": 0.4, "word": "hi", "punctuated_word": "Hi!"}]),
        json!([
            {"start": 0.5, "end": 0.9, "word": "world", "punctuated_word": "world.", "emoji": "🌍"},
            {"start": 0.0, "end": 0.4, "word": "hello", "punctuated_word": "Hello"},
            {"start": 1.0, "end": 1.5, "word": "今天", "punctuated_word": "今天"},
        ]),
    ]
}

fn sample_configs() -> Vec<Value> {
    let catalog = Catalog::builtin().unwrap();
    let mut configs: Vec<Value> = catalog
        .templates()
        .iter()
        .map(|t| serde_json::to_value(&t.config).unwrap())
        .collect();
    configs.push(json!({}));
    configs.push(json!({
        "linesCount": 1,
        "sizes": {"fontSize": 90},
        "colors": {"hilightColor": {"colors": [{"r": 0, "g": 255, "b": 0}, {"r": 255, "g": 255, "b": 0, "a": 128}]}},
        "modes": {"displayMode": "WORD", "effectType": "POP"},
        "font": "Inter",
        "fontWeight": 800,
        "position": {"x": 0.5, "y": 0.75},
        "maxWidth": 0.9,
    }));
    configs
}

fn sample_generate_requests() -> Vec<Value> {
    let mut requests = Vec::new();
    for (i, config) in sample_configs().into_iter().enumerate() {
        let words = sample_words()[i % 3].clone();
        requests.push(json!({"input": "uploads/5f0c/talk.mp4", "words": words, "config": config}));
    }
    requests.push(json!({"input": "uploads/x/a.mp4", "words": [], "templateId": "bold-highlight"}));
    requests
}

fn sample_transcript_requests() -> Vec<Value> {
    vec![
        json!({"input": "uploads/5f0c/talk.mp4", "lang": "en"}),
        json!({"input": "uploads/5f0c/talk.mp4"}),
        json!({"input": "uploads/5f0c/talk.mp4", "lang": "auto"}),
    ]
}

/// JSON bytes: a seed with structural edits (half the cases) or byte edits (the other half),
/// as a client would send them.
fn json_input(seeds: Vec<Value>) -> impl Strategy<Value = Vec<u8>> {
    let bytes: Vec<Vec<u8>> = seeds
        .iter()
        .map(|s| serde_json::to_vec(s).unwrap())
        .collect();
    prop_oneof![
        mutated_json(seeds, keys()).prop_map(|v| serde_json::to_vec(&v).unwrap()),
        mutated_bytes(bytes, KEY_TOKENS),
    ]
}

/// A rejection is well-formed when it has problems, each naming a field of `document` (under
/// `prefix`) and a rule.
fn check_problems(document: &Value, errors: &ValidationErrors) -> Result<Verdict, String> {
    if errors.is_empty() {
        return Err("rejected with no problem listed".to_owned());
    }
    for problem in errors {
        if problem.rule.trim().is_empty() {
            return Err(format!("problem at {:?} has no rule", problem.path));
        }
        if !path_names_field(document, &problem.path) {
            return Err(format!(
                "problem path {:?} names no field of the input ({problem})",
                problem.path
            ));
        }
    }
    Ok(Verdict::Rejected)
}

/// Words within the rules: times finite, in range and in order, texts not too long.
fn check_words(words: &[Word]) -> Result<(), String> {
    if words.len() > MAX_WORDS {
        return Err(format!("{} words accepted", words.len()));
    }
    for (i, w) in words.iter().enumerate() {
        let in_range = |t: f64| t.is_finite() && (WORD_TIME_S.min..=WORD_TIME_S.max).contains(&t);
        if !in_range(w.start) || !in_range(w.end) || w.start > w.end {
            return Err(format!(
                "words[{i}] accepted with times {}..{}",
                w.start, w.end
            ));
        }
        if w.word.len() > MAX_WORD_BYTES || w.punctuated_word.len() > MAX_WORD_BYTES {
            return Err(format!("words[{i}] accepted with a text too long"));
        }
        if i > 0 && words[i - 1].start > w.start {
            return Err(format!("words[{i}] accepted out of order"));
        }
    }
    Ok(())
}

/// One JSON parser on one input: bytes that are not JSON are refused with a position; a
/// rejection lists problems that name fields of the input (`at` wraps the parsed value in the
/// document the paths start from); an accepted value keeps to `rules` and parses back to itself.
fn check_json_parser<T: serde::Serialize + PartialEq + std::fmt::Debug>(
    bytes: &[u8],
    at: impl Fn(Value) -> Value,
    parse: impl Fn(&Value) -> Result<T, ValidationErrors>,
    rules: impl Fn(&T) -> Result<(), String>,
) -> Result<Verdict, String> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) if e.line() == 0 => return Err(format!("JSON error without a position: {e}")),
        Err(_) => return Ok(Verdict::Rejected),
    };
    match parse(&value) {
        Err(errors) => check_problems(&at(value), &errors),
        Ok(parsed) => {
            rules(&parsed)?;
            let again = parse(&serde_json::to_value(&parsed).unwrap())
                .map_err(|e| format!("accepted {parsed:?} does not parse back: {e}"))?;
            if again != parsed {
                return Err(format!(
                    "changed on a round trip: {parsed:?} became {again:?}"
                ));
            }
            Ok(Verdict::Accepted)
        }
    }
}

#[test]
fn config_json() {
    let default = Catalog::builtin().unwrap().default_config().clone();
    fuzz::run(
        "config JSON",
        file!(),
        json_input(sample_configs()),
        |bytes| {
            check_json_parser(
                &bytes,
                |config| json!({ "config": config }),
                |v| parse_config_patch(v, "config"),
                |patch| {
                    patch
                        .apply(&default)
                        .validate()
                        .map_err(|e| format!("accepted config breaks a rule once applied: {e}"))
                },
            )
        },
    );
}

#[test]
fn words_json() {
    fuzz::run("words JSON", file!(), json_input(sample_words()), |bytes| {
        check_json_parser(
            &bytes,
            |words| json!({ "words": words }),
            |v| parse_words(v, "words"),
            |words| check_words(words),
        )
    });
}

#[test]
fn generate_request() {
    let strategy = json_input(sample_generate_requests());
    fuzz::run("generate request", file!(), strategy, |bytes| {
        check_json_parser(
            &bytes,
            |body| body,
            parse_generate_request,
            |request| {
                check_words(&request.words)?;
                let chars = request.input.chars().count();
                if request.input.trim().is_empty() || chars > MAX_INPUT_CHARS {
                    return Err(format!("input of {chars} characters accepted"));
                }
                if request
                    .template_id
                    .as_ref()
                    .is_some_and(|t| t.chars().count() > MAX_TEMPLATE_ID_CHARS)
                {
                    return Err("an over-long templateId accepted".to_owned());
                }
                Ok(())
            },
        )
    });
}

#[test]
fn transcript_request() {
    let strategy = json_input(sample_transcript_requests());
    fuzz::run("transcript request", file!(), strategy, |bytes| {
        check_json_parser(
            &bytes,
            |body| body,
            parse_transcript_request,
            |request| {
                let lang_ok = request.lang == "auto"
                    || (request.lang.len() == 2
                        && request.lang.bytes().all(|b| b.is_ascii_lowercase()));
                if !lang_ok || request.input.trim().is_empty() {
                    return Err(format!("accepted {request:?}"));
                }
                Ok(())
            },
        )
    });
}

/// Real files of each format: what the exporter writes, and hand-written ones with the
/// variations real files have (BOM, CRLF, styling, karaoke, comments, missing numbers).
fn subtitle_seeds(format: SubtitleFormat) -> Vec<Vec<u8>> {
    let words = vec![
        Word::new(0.5, 0.9, "Fish"),
        Word::new(1.0, 1.4, "&"),
        Word::new(1.5, 2.0, "chips."),
        Word::new(3661.0, 3662.5, "今天"),
    ];
    let options = ExportOptions::default().with_frame_size(1920, 1080);
    let mut seeds = vec![export_words(&words, format, &options).unwrap().into_bytes()];
    let written: &[&str] = match format {
        SubtitleFormat::Srt => &[
            "\u{feff}1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>Hello</i>\r\nworld\r\n\r\n2\r\n00:00:02,000 --> 00:00:03,000\r\n<font color=\"red\">again</font>\r\n",
            "00:01.000 --> 00:02.000\nno number, no hours\n\n3\n01:00:00.5 --> 01:00:01\nfraction\n",
        ],
        SubtitleFormat::Vtt => &[
            "WEBVTT - title\n\nNOTE a comment\nspanning lines\n\nSTYLE\n::cue { color: red }\n\nid-1\n00:00:01.000 --> 00:00:02.000 align:start position:10%\n<v Roger>Hi &amp; <c.yellow>bye</c>\n\n00:02.000 --> 00:03.000\n<00:02.500>karaoke <00:02.800>tags\n",
        ],
        _ => &[
            "[Script Info]\nScriptType: v4.00+\n\n[V4+ Styles]\nFormat: Name, Fontname, Fontsize\nStyle: Default,Arial,20\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.00,0:00:02.50,Default,,0,0,0,,{\\k50}Hel{\\k100}lo, world\\Nnext\nComment: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,hidden\nDialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\i1}text{\\i0}, with, commas\n",
        ],
    };
    seeds.extend(written.iter().map(|s| s.as_bytes().to_vec()));
    seeds
}

const SUBTITLE_TOKENS: &[&[u8]] = &[
    b"00:00:01,000 --> 00:00:02,000\n",
    b"\n\n1\n",
    b"WEBVTT\n\n",
    b"<00:00:01.000>",
    b"Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,",
    b"{\\k-5}",
    b"{\\kf99999999999}",
    b"{\\K100}",
    b"99999999999:00:00,000",
    b"00:00:00,-1",
    b"1e308",
    b"\\N",
];

/// A subtitle reader on mutated files: cues and words come out finite, in range and in order,
/// and an error names a line of the file.
fn fuzz_subtitles(name: &str, format: SubtitleFormat) {
    let strategy = mutated_bytes(subtitle_seeds(format), SUBTITLE_TOKENS);
    fuzz::run(name, file!(), strategy, |bytes| {
        let text = String::from_utf8_lossy(&bytes);
        let line_count = text.split(['\n', '\r']).count();
        let check_error = |e: SubtitleError| match e.line() {
            Some(line) if (1..=line_count).contains(&line) && !e.to_string().is_empty() => {
                Ok(Verdict::Rejected)
            }
            _ => Err(format!("error without a line of the file: {e:?}")),
        };
        let cues = match parse_cues(&text, format) {
            Ok(cues) => cues,
            Err(e) => return check_error(e),
        };
        for (i, cue) in cues.iter().enumerate() {
            let ok = cue.start_s.is_finite()
                && cue.end_s.is_finite()
                && cue.start_s >= 0.0
                && cue.start_s <= cue.end_s;
            if !ok || (i > 0 && cues[i - 1].start_s > cue.start_s) {
                return Err(format!("cue {i} read as {cue:?}"));
            }
        }
        let words =
            import_words(&text, format).map_err(|e| format!("cues read but not words: {e}"))?;
        for (i, w) in words.iter().enumerate() {
            let ok = w.start.is_finite() && w.end.is_finite() && w.start >= 0.0 && w.start <= w.end;
            if !ok || (i > 0 && words[i - 1].start > w.start) || w.word.trim().is_empty() {
                return Err(format!("word {i} read as {w:?}"));
            }
        }
        // Whatever a subtitle file gives must be usable as a request's words.
        if words.iter().all(|w| w.end <= WORD_TIME_S.max) {
            parse_words(&serde_json::to_value(&words).unwrap(), "words")
                .map_err(|e| format!("imported words break the wire rules: {e}"))?;
        }
        Ok(Verdict::Accepted)
    });
}

#[test]
fn subtitles_srt() {
    fuzz_subtitles("subtitles SRT", SubtitleFormat::Srt);
}

#[test]
fn subtitles_vtt() {
    fuzz_subtitles("subtitles VTT", SubtitleFormat::Vtt);
}

#[test]
fn subtitles_ass() {
    fuzz_subtitles("subtitles ASS", SubtitleFormat::Ass);
}
