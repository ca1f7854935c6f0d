//! `captions burn --reframe`: the output takes the shape asked for; a shape that is not one of
//! the three is refused before any work, naming the flag and the shapes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use support::{captions, s, stderr_of};

#[test]
fn burn_reframes_to_the_shape_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let video = caption_testkit::media::tone_video(
        &dir.path().join("wide.mp4"),
        "color=c=gray:s=640x360:r=25",
        1.0,
    )
    .unwrap();
    let words = dir.path().join("words.json");
    std::fs::write(
        &words,
        r#"[{"start": 0.1, "end": 0.8, "word": "hi", "punctuated_word": "hi"}]"#,
    )
    .unwrap();
    let out = dir.path().join("vertical.mp4");
    let o = captions(&[
        "burn",
        s(&video),
        "--words",
        s(&words),
        "--reframe",
        "9:16",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).contains("reframed 9:16 to 202x360"),
        "{}",
        stderr_of(&o)
    );
    let size = caption_testkit::media::run(
        "ffprobe",
        &[
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=width,height",
            "-of",
            "csv=p=0",
            s(&out),
        ],
    )
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&size).trim(), "202,360");
}

#[test]
fn a_shape_that_is_not_one_of_the_three_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.mp4");
    for shape in ["16:9", "vertical", ""] {
        let o = captions(&["burn", s(&missing), "--reframe", shape, "-o", "out.mp4"]);
        assert_eq!(o.status.code(), Some(2), "--reframe {shape:?}");
        let stderr = stderr_of(&o);
        assert!(
            stderr.contains("--reframe") && stderr.contains("must be one of 9:16, 1:1, 4:5"),
            "{stderr}"
        );
    }
}
