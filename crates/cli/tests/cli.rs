//! The `captions` binary as a user runs it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::process::Output;

mod support;

use support::captions;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn templates_lists_at_least_twelve_and_prints_one_in_full() {
    let list = captions(&["templates"]);
    assert!(list.status.success());
    assert!(stdout(&list).lines().count() >= 12, "{}", stdout(&list));

    let json = captions(&["templates", "--json"]);
    let items: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(items.as_array().unwrap().len() >= 12);
    assert!(items[0].get("config").is_none());

    let one = captions(&["templates", "karaoke"]);
    assert!(one.status.success());
    let t: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(t["id"], "karaoke");
    assert_eq!(t["config"]["modes"]["spokenMode"], "WORD");
    assert!(t["config"]["sizes"]["fontSize"].is_number());

    let missing = captions(&["templates", "nope"]);
    assert!(!missing.status.success());
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "error[not_found]: nope: no such template (`captions templates` lists them)"
    );
    // A near miss names the template meant.
    let typo = captions(&["templates", "kareoke"]);
    assert!(!typo.status.success());
    assert_eq!(
        String::from_utf8_lossy(&typo.stderr).trim(),
        "error[not_found]: kareoke: no such template; did you mean karaoke? (`captions templates` lists them)"
    );
}

#[test]
fn fonts_by_language() {
    let ja = captions(&["fonts", "--lang", "ja"]);
    let en = captions(&["fonts", "--lang", "en"]);
    assert!(ja.status.success() && en.status.success());
    assert!(stdout(&ja).contains("Noto Sans CJK JP"), "{}", stdout(&ja));
    assert_ne!(stdout(&ja), stdout(&en));
    let all = captions(&["fonts"]);
    assert!(stdout(&all).lines().count() > stdout(&en).lines().count() / 2);

    let bad = captions(&["fonts", "--lang", "zz"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown language code \"zz\""));
}

#[test]
fn validate_prints_every_problem_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"linesCount": 0, "modes": {"displayMode": "SOMETIMES"},
            "colors": {"hilightColor": {"colors": [{"r": 300, "g": 0, "b": 0}]}}}"#,
    )
    .unwrap();
    let out = captions(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "error[invalid_request]: {}: config.linesCount: must be an integer from 1 to 10",
            bad.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("config.modes.displayMode: must be one of ALL, PROGRESSIVE, WORD"),
        "{text}"
    );
    assert!(
        text.contains("config.colors.hilightColor.colors[0].r: must be an integer from 0 to 255"),
        "{text}"
    );

    let good = dir.path().join("good.json");
    std::fs::write(
        &good,
        r#"{"modes": {"effectType": "POP"}, "linesCount": 2}"#,
    )
    .unwrap();
    let out = captions(&["validate", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));

    let template = captions(&["templates", "neon-glow"]);
    let path = dir.path().join("template.json");
    std::fs::write(&path, &template.stdout).unwrap();
    assert!(
        captions(&["validate", path.to_str().unwrap()])
            .status
            .success()
    );

    let request = dir.path().join("request.json");
    std::fs::write(
        &request,
        r#"{"input": "k", "words": [{"start": 3, "end": 1, "word": "a", "punctuated_word": "a"}]}"#,
    )
    .unwrap();
    let out = captions(&["validate", request.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("words[0].end: must not be before start"));

    let not_json = dir.path().join("x.json");
    std::fs::write(&not_json, "{").unwrap();
    assert!(
        !captions(&["validate", not_json.to_str().unwrap()])
            .status
            .success()
    );
}

#[test]
fn validate_warns_of_unknown_fields_refuses_them_with_strict_and_checks_the_font() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo.json");
    std::fs::write(&typo, r#"{"colours": {}, "fontsize": 80, "linesCount": 2}"#).unwrap();
    let out = captions(&["validate", typo.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let text = stdout(&out);
    let typo_name = typo.display();
    assert!(
        text.contains(&format!(
            "warning: {typo_name}: config.colours: unknown field; did you mean config.colors?"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "warning: {typo_name}: config.fontsize: unknown field; did you mean config.sizes.fontSize?"
        )),
        "{text}"
    );

    let strict = captions(&["validate", "--strict", typo.to_str().unwrap()]);
    assert_eq!(strict.status.code(), Some(1));
    let text = stdout(&strict);
    assert!(text.contains("config.colours: unknown field; did you mean config.colors?"));
    assert!(!text.contains("warning:"), "{text}");

    // Every problem at once, the font that is not installed among them.
    let bad = dir.path().join("font.json");
    std::fs::write(
        &bad,
        r#"{"font": "Comic Nonexistent", "fontWeight": 950, "linesCount": 0}"#,
    )
    .unwrap();
    let out = captions(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    let name = bad.display();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines.contains(&format!(
        "error[invalid_request]: {name}: config.fontWeight: must be an integer from 100 to 900"
    )));
    assert!(
        lines.iter().any(|l| l.starts_with(&format!(
            "error[invalid_request]: {name}: config.font: \"Comic Nonexistent\" is not an installed font family (closest: "
        ))),
        "{lines:?}"
    );
    assert_eq!(lines[3], format!("{name}: 3 error(s), 0 warning(s)"));
    let good_font = dir.path().join("good.json");
    std::fs::write(&good_font, r#"{"font": "inter"}"#).unwrap();
    assert!(
        captions(&["validate", good_font.to_str().unwrap()])
            .status
            .success()
    );
}

#[test]
fn preview_sheet_writes_every_word_over_several_sheets_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<serde_json::Value> = (0..230)
        .map(|i| {
            let start = f64::from(i) * 0.4;
            serde_json::json!({"start": start, "end": start + 0.3,
                               "word": format!("w{i}"), "punctuated_word": format!("w{i}")})
        })
        .collect();
    let file = dir.path().join("words.json");
    std::fs::write(&file, serde_json::to_string(&words).unwrap()).unwrap();
    let sheet = dir.path().join("sheet.png");
    let out = captions(&[
        "preview",
        "--words",
        file.to_str().unwrap(),
        "--sheet",
        "--size",
        "108x192",
        "-o",
        sheet.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("230 words, 100 to a sheet: wrote 3 sheets"),
        "{stderr}"
    );
    for name in ["sheet.png", "sheet-2.png", "sheet-3.png"] {
        let png = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{name}");
    }
    assert!(!dir.path().join("sheet-4.png").exists());
}
