//! Files are safe and errors are said once: interrupted burns leave nothing, a burn never
//! replaces its input, output names match what is written, and mistakes are reported before
//! any long work starts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;

use support::{captions_binary, espeak_wav, ffmpeg, h264_fast, run};

fn captions(args: &[&str]) -> Output {
    Command::new(captions_binary())
        .args(args)
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A silent test-pattern video of `seconds`, big enough that burning it takes a while.
fn pattern_clip(dir: &Path, name: &str, seconds: u32) -> PathBuf {
    let clip = dir.join(name);
    let source = format!("testsrc=s=1280x720:r=30:d={seconds}");
    let input = ["-f", "lavfi", "-i", &source];
    ffmpeg(&[&input[..], &h264_fast(), &[s(&clip)]].concat());
    clip
}

fn words_file(dir: &Path) -> PathBuf {
    let words = dir.join("words.json");
    std::fs::write(
        &words,
        r#"[{"start":0.2,"end":0.6,"word":"hello","punctuated_word":"Hello"},
            {"start":0.7,"end":1.2,"word":"world","punctuated_word":"world."}]"#,
    )
    .unwrap();
    words
}

/// Names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_interrupted_burn_removes_its_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let clip = pattern_clip(dir.path(), "long.mp4", 40);
    let words = words_file(dir.path());
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let out = out_dir.join("captioned.mp4");
        let child = Command::new(captions_binary())
            .args(["burn", s(&clip), "--words", s(&words), "-o", s(&out)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the burn is writing (its hidden partial file exists), then interrupt it.
        let deadline = Instant::now() + Duration::from_secs(120);
        while !listing(&out_dir).iter().any(|n| n.contains(".partial-")) {
            assert!(Instant::now() < deadline, "no partial file appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        run("kill", &[&format!("-{signal}"), &child.id().to_string()]);
        let done = child.wait_with_output().unwrap();
        assert_eq!(done.status.code(), Some(code), "{}", stderr(&done));
        assert!(stderr(&done).contains("interrupted: "), "{}", stderr(&done));
        assert_eq!(listing(&out_dir), Vec::<String>::new(), "SIG{signal}");
    }
}

#[test]
fn a_burn_never_replaces_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let clip = pattern_clip(dir.path(), "clip.mp4", 1);
    let words = words_file(dir.path());
    let before = std::fs::read(&clip).unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let via_parent = sub.join("../clip.mp4");
    for output in [clip.clone(), via_parent] {
        let o = captions(&["burn", s(&clip), "--words", s(&words), "-o", s(&output)]);
        assert!(!o.status.success());
        assert!(
            stderr(&o).contains("the output is the input video"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(&clip).unwrap(), before);
    assert_eq!(listing(dir.path()), ["clip.mp4", "sub", "words.json"]);
}

#[test]
fn output_names_must_match_what_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let words = words_file(dir.path());
    let jpg = dir.path().join("frame.jpg");
    let o = captions(&["preview", "--words", s(&words), "-o", s(&jpg)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("name the file .png"), "{}", stderr(&o));
    assert!(!jpg.exists());

    // Refused before the (here impossible) transcription starts: the model does not exist.
    let wav = dir.path().join("speech.wav");
    espeak_wav(&wav, 150, "hello there");
    for (name, format, expected) in [
        ("a.docx", None, ".docx is not a transcript format"),
        (
            "a.srt",
            Some("vtt"),
            "--format vtt writes .vtt files, not .srt",
        ),
    ] {
        let out = dir.path().join(name);
        let mut args = vec![
            "transcribe",
            s(&wav),
            "--model",
            "no-such-model",
            "-o",
            s(&out),
        ];
        if let Some(f) = format {
            args.extend(["--format", f]);
        }
        let o = captions(&args);
        assert!(!o.status.success());
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
        assert!(!out.exists());
    }
    let clip = pattern_clip(dir.path(), "clip.mp4", 1);
    let o = captions(&["burn", s(&clip), "--words", s(&words), "-o", "out.xyz"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("out.xyz"), "{}", stderr(&o));
}

#[test]
fn errors_say_it_once_in_the_users_words() {
    let dir = tempfile::tempdir().unwrap();
    let words = words_file(dir.path());
    let clip = pattern_clip(dir.path(), "clip.mp4", 1);

    let o = captions(&[
        "burn",
        s(&clip),
        "--words",
        s(&words),
        "-o",
        "/no/such/dir/out.mp4",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.matches("does not exist").count(), 1, "{e}");
    assert!(
        e.contains("the output folder /no/such/dir does not exist"),
        "{e}"
    );

    for args in [
        vec!["burn", "missing.mp4", "--words", s(&words), "-o", "x.mp4"],
        vec!["transcribe", "missing.mp4"],
        vec!["align", "missing.mp4", "--text", s(&words)],
    ] {
        let o = captions(&args);
        assert!(!o.status.success());
        let e = stderr(&o);
        assert_eq!(
            e.trim(),
            "error[input_not_found]: missing.mp4: file not found",
            "{args:?}"
        );
    }

    // An audio-only input fails before transcription: with a model that does not exist, a
    // transcription would have failed first, with another message.
    let wav = dir.path().join("speech.wav");
    espeak_wav(&wav, 150, "hello there");
    let out = dir.path().join("out.mp4");
    let o = captions(&[
        "burn",
        s(&wav),
        "--transcribe",
        "--model",
        "no-such-model",
        "-o",
        s(&out),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("speech.wav: has no video stream"), "{e}");
    assert!(!e.contains("model"), "{e}");

    // The command line speaks of its model, not of a server's.
    let o = captions(&["transcribe", s(&wav), "--lang", "es"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("English only"), "{e}");
    assert!(!e.contains("server"), "{e}");
}
