//! An input in which no one speaks (silence, or music alone: here a sine tone) is said to have
//! no speech, never written as a silently empty transcript or a video without captions; with
//! `--require-speech` it is a failure, `error[no_speech]`, and nothing is written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};

mod support;

use support::{captions, ffmpeg, h264_fast, s, stderr_of, stdout_of};

/// Two seconds of a gray picture over `sound` (a lavfi audio source), in `dir/name`.
fn clip(dir: &Path, name: &str, sound: &str) -> PathBuf {
    let out = dir.join(name);
    let args = [
        &["-f", "lavfi", "-i", "color=c=gray:s=160x284:r=15"][..],
        &["-f", "lavfi", "-i", sound, "-t", "2"],
        &h264_fast(),
        &["-c:a", "aac", "-shortest", s(&out)],
    ]
    .concat();
    ffmpeg(&args);
    out
}

/// A tone (music without a voice) and silence.
fn speechless(dir: &Path) -> [PathBuf; 2] {
    [
        clip(dir, "tone.mp4", "sine=frequency=440:sample_rate=16000"),
        clip(dir, "silence.mp4", "anullsrc=r=16000:cl=mono"),
    ]
}

#[test]
fn a_transcript_of_no_speech_is_written_with_a_warning_or_refused_when_speech_is_required() {
    let dir = tempfile::tempdir().unwrap();
    for input in speechless(dir.path()) {
        let name = input.display();
        let srt = input.with_extension("srt");
        let o = captions(&["transcribe", s(&input), "-o", s(&srt)]);
        assert!(o.status.success(), "{}", stderr_of(&o));
        assert_eq!(
            stderr_of(&o).trim_end(),
            format!("warning: {name}: no speech was heard; the subtitles are empty")
        );
        assert!(srt.is_file());

        let o = captions(&["transcribe", s(&input)]);
        assert!(o.status.success(), "{}", stderr_of(&o));
        assert_eq!(stdout_of(&o).trim(), "[]");
        assert_eq!(
            stderr_of(&o).trim_end(),
            format!("warning: {name}: no speech was heard; the word list is empty")
        );

        let required = input.with_extension("vtt");
        let o = captions(&[
            "transcribe",
            s(&input),
            "--require-speech",
            "-o",
            s(&required),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
        assert_eq!(
            stderr_of(&o).trim_end(),
            format!(
                "error[no_speech]: {name}: no speech was heard (silence, music or noise); \
                 nothing was written"
            )
        );
        assert!(!required.exists());
    }
}

#[test]
fn a_burn_of_no_speech_says_the_video_has_no_captions() {
    let dir = tempfile::tempdir().unwrap();
    for input in speechless(dir.path()) {
        let name = input.display();
        let out = input.with_extension("captioned.mp4");
        let burn = ["burn", s(&input), "--transcribe", "--preset", "ultrafast"];
        let o = captions(&[&burn[..], &["-o", s(&out)]].concat());
        assert!(o.status.success(), "{}", stderr_of(&o));
        let e = stderr_of(&o);
        assert!(
            e.lines()
                .any(|l| l
                    == format!("warning: {name}: no speech was heard; the video has no captions")),
            "{e}"
        );
        assert!(out.is_file());

        let refused = input.with_extension("refused.mp4");
        let o = captions(&[&burn[..], &["--require-speech", "-o", s(&refused)]].concat());
        assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
        assert!(
            stderr_of(&o).starts_with(&format!("error[no_speech]: {name}: no speech was heard")),
            "{}",
            stderr_of(&o)
        );
        assert!(!refused.exists());
    }
    // --require-speech is about a transcription.
    let words = dir.path().join("words.json");
    std::fs::write(&words, "[]").unwrap();
    let [tone, _] = speechless(dir.path());
    let out = dir.path().join("out.mp4");
    let args = [
        "burn",
        s(&tone),
        "--words",
        s(&words),
        "--require-speech",
        "-o",
        s(&out),
    ];
    let o = captions(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
    assert_eq!(
        stderr_of(&o).trim_end(),
        "error[invalid_request]: --require-speech: is about what a transcription hears: use it \
         with --transcribe"
    );
}

#[test]
fn a_batch_says_which_videos_had_no_speech() {
    let dir = tempfile::tempdir().unwrap();
    let videos = dir.path().join("videos");
    std::fs::create_dir(&videos).unwrap();
    let [tone, _] = speechless(&videos);
    let out = dir.path().join("out");
    let o = captions(&["batch", s(&videos), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let e = stderr_of(&o);
    for input in [&tone, &videos.join("silence.mp4")] {
        assert!(
            e.lines().any(|l| l
                == format!(
                    "warning: {}: no speech was heard; the video has no captions",
                    input.display()
                )),
            "{e}"
        );
    }

    let strict = dir.path().join("strict");
    let o = captions(&["batch", s(&videos), "--require-speech", "--out", s(&strict)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr_of(&o));
    let e = stderr_of(&o);
    assert!(
        e.contains(&format!(
            "error[no_speech]: {}: no speech was heard",
            tone.display()
        )),
        "{e}"
    );
    assert!(!strict.join("tone.mp4").exists());
}
