//! One voice for what goes wrong: every failure is `error[<code>]: <file>: <problem>`, said
//! once; warnings read as `warning: <file>: <problem>` wherever a style file is read, from the
//! code the HTTP service checks requests with; a closed pipe or a Ctrl-C ends a command quietly
//! and says what was not written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod support;

use caption_core::{UnknownFields, check_config_patch};
use support::{captions, captions_binary, espeak_wav, s, stderr_of, stdout_of};

/// A one-second gray clip with a tone, and two timed words.
fn clip_and_words(dir: &Path) -> (PathBuf, PathBuf) {
    let clip = caption_testkit::media::tone_video(
        &dir.join("clip.mp4"),
        "color=c=gray:s=160x284:r=15",
        1.0,
    )
    .unwrap();
    let words = dir.join("words.json");
    std::fs::write(
        &words,
        r#"[{"start":0.1,"end":0.4,"word":"hello","punctuated_word":"Hello"},
            {"start":0.5,"end":0.9,"word":"world","punctuated_word":"world."}]"#,
    )
    .unwrap();
    (clip, words)
}

fn lines_starting(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn burn_warns_of_a_misspelled_key_as_validate_and_the_service_do() {
    let dir = tempfile::tempdir().unwrap();
    let (clip, words) = clip_and_words(dir.path());
    let typo = dir.path().join("typo.json");
    let config = r#"{"colours": {}, "fontsize": 80, "linesCount": 2}"#;
    std::fs::write(&typo, config).unwrap();

    let out = dir.path().join("out.mp4");
    let burn = captions(&[
        "burn",
        s(&clip),
        "--words",
        s(&words),
        "--config",
        s(&typo),
        "--preset",
        "ultrafast",
        "-o",
        s(&out),
    ]);
    assert!(burn.status.success(), "{}", stderr_of(&burn));
    let burn_warnings = lines_starting(&stderr_of(&burn), "warning: ");
    let validate = captions(&["validate", s(&typo)]);
    assert!(validate.status.success(), "{}", stdout_of(&validate));
    let validate_warnings = lines_starting(&stdout_of(&validate), "warning: ");

    // The service's warnings come from caption-core's checker: the same lines.
    let value: serde_json::Value = serde_json::from_str(config).unwrap();
    let service = check_config_patch(&value, "config", UnknownFields::Warn).warnings;
    let expected: Vec<String> = service
        .iter()
        .map(|w| format!("warning: {}: {w}", typo.display()))
        .collect();
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert!(
        expected[0].contains("did you mean config.colors?"),
        "{expected:?}"
    );
    assert_eq!(burn_warnings, expected);
    assert_eq!(validate_warnings, expected);
}

#[test]
fn every_problem_of_a_style_file_is_said_at_once_the_missing_font_among_them() {
    let dir = tempfile::tempdir().unwrap();
    let (clip, words) = clip_and_words(dir.path());
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"colours": {}, "linesCount": 0, "font": "Helvetika"}"#,
    )
    .unwrap();
    let name = bad.display().to_string();
    let lines_count = format!(
        "error[invalid_request]: {name}: config.linesCount: must be an integer from 1 to 10"
    );
    let font = format!(
        "error[invalid_request]: {name}: config.font: \"Helvetika\" is not an installed font family (closest: "
    );
    let warning = format!("warning: {name}: config.colours: unknown field");

    // validate: errors and warnings together.
    let validate = captions(&["validate", s(&bad)]);
    assert_eq!(validate.status.code(), Some(1));
    let text = stdout_of(&validate);
    assert!(text.lines().any(|l| l == lines_count), "{text}");
    assert!(text.lines().any(|l| l.starts_with(&font)), "{text}");
    assert!(text.lines().any(|l| l.starts_with(&warning)), "{text}");

    // burn: the same lines, the font with the other errors in the one run.
    let out = dir.path().join("out.mp4");
    let burn = captions(&[
        "burn",
        s(&clip),
        "--words",
        s(&words),
        "--config",
        s(&bad),
        "-o",
        s(&out),
    ]);
    assert_eq!(burn.status.code(), Some(1));
    let text = stderr_of(&burn);
    assert!(text.lines().any(|l| l == lines_count), "{text}");
    assert!(text.lines().any(|l| l.starts_with(&font)), "{text}");
    assert!(text.lines().any(|l| l.starts_with(&warning)), "{text}");
    assert!(!out.exists());
}

#[test]
fn every_failure_is_one_line_with_its_code_naming_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let (clip, words) = clip_and_words(dir.path());
    let wav = dir.path().join("speech.wav");
    espeak_wav(&wav, 150, "hello there");
    let not_media = dir.path().join("notes.json");
    std::fs::write(&not_media, "[]").unwrap();
    let missing = dir.path().join("missing.json");
    let out = dir.path().join("out.mp4");
    let out_dir = dir.path().join("o");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["validate", s(&missing)],
            format!(
                "error[input_not_found]: {}: file not found",
                missing.display()
            ),
        ),
        (
            vec![
                "burn",
                s(&clip),
                "--words",
                s(&words),
                "--config",
                s(&missing),
                "-o",
                s(&out),
            ],
            format!(
                "error[input_not_found]: {}: file not found",
                missing.display()
            ),
        ),
        (
            vec!["convert", s(&missing), "-o", "x.srt"],
            format!(
                "error[input_not_found]: {}: file not found",
                missing.display()
            ),
        ),
        (
            vec!["transcribe", s(&not_media)],
            format!(
                "error[no_audio]: {}: has no audio stream",
                not_media.display()
            ),
        ),
        (
            vec!["burn", s(&wav), "--words", s(&words), "-o", s(&out)],
            format!(
                "error[no_video]: {}: has no video stream (an audio file has no picture to burn \
                 captions into)",
                wav.display()
            ),
        ),
        (
            vec![
                "burn",
                s(&clip),
                "--words",
                s(&words),
                "--template",
                "kareoke",
                "-o",
                s(&out),
            ],
            "error[not_found]: kareoke: no such template; did you mean karaoke? (`captions \
             templates` lists them)"
                .to_owned(),
        ),
        (
            vec!["batch", s(&missing), "--out", s(&out_dir)],
            format!(
                "error[input_not_found]: {}: no such folder or file, and not a pattern",
                missing.display()
            ),
        ),
    ];
    for (args, expected) in cases {
        let o = captions(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = stderr_of(&o);
        assert_eq!(e.trim_end(), expected, "{args:?}");
        assert!(!e.contains("os error"), "{e}");
    }
    assert!(!out.exists());
}

#[test]
fn a_closed_pipe_ends_a_listing_quietly() {
    for command in [
        "templates karaoke",
        "templates",
        "fonts",
        "completions bash",
    ] {
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "\"$0\" {command} | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}"
            ))
            .arg(captions_binary())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{command}: {}", stderr_of(&o));
        assert_eq!(stderr_of(&o), "", "{command}");
    }
}

#[test]
fn ctrl_c_during_a_transcription_says_what_was_not_written() {
    let dir = tempfile::tempdir().unwrap();
    // A long talk: a transcription of it takes well over the wait below.
    let wav = dir.path().join("talk.wav");
    let sentence = "the quick brown fox jumps over the lazy dog and runs into the forest. ";
    espeak_wav(&wav, 160, &sentence.repeat(40));
    for (to_file, unwritten) in [
        (true, dir.path().join("talk.srt").display().to_string()),
        (false, "the transcript (standard output)".to_owned()),
    ] {
        let srt = dir.path().join("talk.srt");
        let mut command = Command::new(captions_binary());
        command.args(["transcribe", s(&wav), "--threads", "1"]);
        if to_file {
            command.args(["-o", s(&srt)]);
        }
        let child = command
            .env("CAPTIONS_MODEL", "tiny.en")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(3));
        support::run("kill", &["-INT", &child.id().to_string()]);
        let done = child.wait_with_output().unwrap();
        let e = stderr_of(&done);
        assert_eq!(done.status.code(), Some(130), "{e}");
        assert_eq!(
            e.trim_end(),
            format!("interrupted: {unwritten} was not written")
        );
        assert!(done.stdout.is_empty());
        assert!(!srt.exists());
    }
}

#[test]
fn a_failed_batch_leaves_no_empty_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let videos = dir.path().join("videos");
    std::fs::create_dir(&videos).unwrap();
    std::fs::write(
        videos.join("broken.mp4"),
        b"\x00\x00\x00\x18ftypisom not a video",
    )
    .unwrap();
    let out = dir.path().join("out");
    // Every video fails.
    let o = captions(&["batch", s(&videos), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).contains("error[unreadable_input]: "),
        "{}",
        stderr_of(&o)
    );
    assert!(!out.exists(), "{} was left behind", out.display());
    // A style that cannot be used fails before any folder is made.
    let o = captions(&[
        "batch",
        s(&videos),
        "--template",
        "kareoke",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    // A folder that was there before stays.
    std::fs::create_dir(&out).unwrap();
    let o = captions(&["batch", s(&videos), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.is_dir());
}
