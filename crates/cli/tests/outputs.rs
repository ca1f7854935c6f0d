//! What the command line writes is an ordinary file: other programs and users can open it as
//! they can any file the user makes (0666, or 0777 for a folder, less the umask).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

mod support;

use support::{captions_under_umask, s, stderr_of};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Runs `args` under umask 022 and checks that it succeeded.
fn ok(args: &[&str]) {
    let out = captions_under_umask("022", args);
    assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
}

#[test]
fn every_output_takes_the_umask_like_any_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let videos = d.join("videos");
    std::fs::create_dir(&videos).unwrap();
    let clip = caption_testkit::media::speech_video(
        &videos.join("talk.mp4"),
        "color=c=navy:s=160x284:r=15",
        "hello world",
    )
    .unwrap();
    std::fs::remove_file(clip.with_extension("wav")).unwrap();
    let words = d.join("words.json");
    std::fs::write(
        &words,
        r#"[{"start":0.1,"end":0.5,"word":"hello","punctuated_word":"Hello"},
            {"start":0.6,"end":0.9,"word":"world","punctuated_word":"world."}]"#,
    )
    .unwrap();

    let burned = d.join("burned.mp4");
    let args = [
        "burn",
        s(&clip),
        "--words",
        s(&words),
        "--preset",
        "ultrafast",
    ];
    ok(&[&args[..], &["-o", s(&burned)]].concat());
    let layer = d.join("layer.mov");
    ok(&[&args[..], &["--overlay-only", "-o", s(&layer)]].concat());
    let frames = d.join("frames");
    ok(&[&args[..], &["--overlay-only", "-o", s(&frames)]].concat());
    let srt = d.join("talk.srt");
    ok(&["transcribe", s(&clip), "-o", s(&srt)]);
    let vtt = d.join("talk.vtt");
    ok(&["convert", s(&words), "-o", s(&vtt)]);
    let png = d.join("frame.png");
    ok(&[
        "preview",
        "--words",
        s(&words),
        "--size",
        "108x192",
        "-o",
        s(&png),
    ]);
    let out = d.join("out");
    ok(&["batch", s(&videos), "--out", s(&out)]);

    let mut files = vec![burned, layer, srt, vtt, png];
    for name in ["talk.mp4", "talk.words.json", "talk.fingerprint"] {
        files.push(out.join(name));
    }
    let first_frame = std::fs::read_dir(&frames).unwrap().next().unwrap().unwrap();
    files.push(first_frame.path());
    for file in &files {
        assert_eq!(mode(file), 0o644, "{}", file.display());
    }
    for folder in [&frames, &out] {
        assert_eq!(mode(folder), 0o755, "{}", folder.display());
    }

    // A stricter umask is kept: the output is not made more open than the user asks.
    let private = d.join("private.mp4");
    let o = captions_under_umask("077", &[&args[..], &["-o", s(&private)]].concat());
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(mode(&private), 0o600);
}
