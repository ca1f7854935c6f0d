//! `captions convert` and `burn --words` with subtitle files, checked against ffmpeg: what we
//! write, ffmpeg reads (and writes again in every other format), and what ffmpeg writes, we
//! read, cue for cue within 10 ms.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use caption_core::{Cue, SubtitleFormat, Word, parse_cues};

mod support;

use support::{captions_binary, ffmpeg, h264_fast};

fn captions(args: &[&str]) -> Output {
    Command::new(captions_binary()).args(args).output().unwrap()
}

fn captions_ok(args: &[&str]) {
    let out = captions(args);
    assert!(
        out.status.success(),
        "captions {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Two sentences, a pause, text that needs escaping, and Chinese written without spaces.
fn transcript() -> Vec<Word> {
    let spoken = [
        (0.20, 0.55, "Fish"),
        (0.60, 0.75, "&"),
        (0.80, 1.30, "chips,"),
        (1.35, 1.60, "<3"),
        (1.70, 2.10, "a > b."),
        (3.40, 3.80, "我们"),
        (3.80, 4.20, "今天"),
        (4.20, 4.50, "去"),
        (4.50, 5.00, "公园。"),
        (6.25, 6.70, "Goodbye"),
        (6.75, 7.40, "everyone!"),
    ];
    spoken
        .iter()
        .map(|&(start, end, text)| Word::new(start, end, text))
        .collect()
}

/// An ASS style that shows words as written (no capitals, punctuation kept).
fn as_written(dir: &Path) -> PathBuf {
    let config = dir.join("as-written.json");
    std::fs::write(
        &config,
        r#"{"capitalizationType": "NONE", "wordHasPunctuation": true}"#,
    )
    .unwrap();
    config
}

fn cues(path: &Path) -> Vec<Cue> {
    let format = SubtitleFormat::from_path(path).unwrap();
    parse_cues(&std::fs::read_to_string(path).unwrap(), format).unwrap()
}

fn words(path: &Path) -> Vec<Word> {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn assert_same_cues(ours: &[Cue], theirs: &[Cue], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: {ours:?} vs {theirs:?}");
    for (a, b) in ours.iter().zip(theirs) {
        assert_eq!(a.text, b.text, "{what}");
        assert!(
            (a.start_s - b.start_s).abs() <= 0.010 && (a.end_s - b.end_s).abs() <= 0.010,
            "{what}: {a:?} vs {b:?}"
        );
    }
}

#[test]
fn every_format_round_trips_through_ffmpeg() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = d.join("words.json");
    std::fs::write(&json, serde_json::to_string(&transcript()).unwrap()).unwrap();
    let style = as_written(d);
    for ours_format in ["srt", "vtt", "ass"] {
        let ours = d.join(format!("ours.{ours_format}"));
        captions_ok(&["convert", s(&json), "-o", s(&ours), "--config", s(&style)]);
        let our_cues = cues(&ours);
        assert!(our_cues.len() >= 3, "{our_cues:?}");
        assert!(
            our_cues.iter().any(|c| c.text == "我们今天去公园。"),
            "{our_cues:?}"
        );
        for their_format in ["srt", "vtt", "ass"] {
            let theirs = d.join(format!("{ours_format}-by-ffmpeg.{their_format}"));
            ffmpeg(&["-i", s(&ours), s(&theirs)]);
            let what = format!("ours.{ours_format} -> ffmpeg -> .{their_format}");
            assert_same_cues(&our_cues, &cues(&theirs), &what);

            // What ffmpeg wrote becomes words again: the same words, each cue's first word
            // starting with its cue.
            let back = d.join(format!("{ours_format}-by-ffmpeg-{their_format}.json"));
            captions_ok(&["convert", s(&theirs), "-o", s(&back)]);
            let back = words(&back);
            let texts: Vec<&str> = back.iter().map(|w| w.punctuated_word.as_str()).collect();
            assert!(
                texts.starts_with(&["Fish", "&", "chips,", "<3", "a", ">", "b."]),
                "{what}: {texts:?}"
            );
            assert!(
                texts.ends_with(&["Goodbye", "everyone!"]),
                "{what}: {texts:?}"
            );
            assert_eq!(
                texts.iter().copied().collect::<String>().replace(' ', ""),
                "Fish&chips,<3a>b.我们今天去公园。Goodbyeeveryone!",
                "{what}"
            );
            for cue in &our_cues {
                assert!(
                    back.iter().any(|w| (w.start - cue.start_s).abs() <= 0.010),
                    "{what}: no word starts with {cue:?}"
                );
            }
        }
    }
}

#[test]
fn ass_karaoke_keeps_every_words_times_and_escapes_through_ffmpeg() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut spoken = transcript();
    spoken.push(Word::new(8.0, 8.5, "{C:\\New}"));
    spoken.push(Word::new(8.6, 9.0, "\\h{\\b1}"));
    let json = d.join("words.json");
    std::fs::write(&json, serde_json::to_string(&spoken).unwrap()).unwrap();
    let ours = d.join("ours.ass");
    let style = as_written(d);
    captions_ok(&["convert", s(&json), "-o", s(&ours), "--config", s(&style)]);
    let script = std::fs::read_to_string(&ours).unwrap();
    assert!(script.contains("\\{C:\\\u{2060}New\\}"), "{script}");
    // ffmpeg reads our events as they are and writes them again.
    let theirs = d.join("ffmpeg.ass");
    ffmpeg(&["-i", s(&ours), s(&theirs)]);
    let back = d.join("back.json");
    captions_ok(&["convert", s(&theirs), "-o", s(&back)]);
    let back = words(&back);
    let texts: Vec<&str> = back.iter().map(|w| w.punctuated_word.as_str()).collect();
    let mut expected: Vec<&str> = spoken.iter().map(|w| w.punctuated_word.as_str()).collect();
    // One word written with spaces comes back as two.
    let at = expected.iter().position(|t| *t == "a > b.").unwrap();
    expected.splice(at..=at, ["a", ">", "b."]);
    assert_eq!(texts, expected);
    let mut k = 0;
    for word in &spoken {
        let n = word.punctuated_word.split_whitespace().count();
        assert!(
            (back[k].start - word.start).abs() <= 0.010
                && (back[k + n - 1].end - word.end).abs() <= 0.010,
            "{word:?}: {:?}",
            &back[k..k + n]
        );
        k += n;
    }
}

#[test]
fn convert_names_the_extension_rule_and_refuses_untimed_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = d.join("words.json");
    std::fs::write(&json, serde_json::to_string(&transcript()).unwrap()).unwrap();

    let out = captions(&["convert", s(&json), "-o", s(&d.join("words.doc"))]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".json, .srt, .vtt, .ass or .txt"),
        "{stderr}"
    );

    let txt = d.join("words.txt");
    captions_ok(&["convert", s(&json), "-o", s(&txt)]);
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.contains("我们今天去公园。"), "{text}");
    let out = captions(&["convert", s(&txt), "-o", s(&d.join("back.srt"))]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no times") && stderr.contains("align"),
        "{stderr}"
    );

    let broken = d.join("broken.srt");
    std::fs::write(&broken, "1\n00:00:0x,000 --> 00:00:01,000\nhi\n").unwrap();
    let out = captions(&["convert", s(&broken), "-o", s(&d.join("x.vtt"))]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 2"), "{stderr}");
}

#[test]
fn burn_takes_words_from_subtitles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let clip = d.join("clip.mp4");
    let mut args = vec!["-f", "lavfi", "-i", "color=c=navy:s=270x480:r=24:d=2.5"];
    args.extend(h264_fast());
    args.push(s(&clip));
    ffmpeg(&args);
    // Written by another tool: a byte-order mark, CRLF, a styling tag, overlapping cues.
    let srt = d.join("cues.srt");
    std::fs::write(
        &srt,
        "\u{feff}1\r\n00:00:00,300 --> 00:00:01,500\r\n<i>Hello</i> there\r\n\r\n2\r\n00:00:01,200 --> 00:00:02,400\r\nfriends\r\n",
    )
    .unwrap();
    let plain = caption_testkit::media::frame_rgb_at(&clip, 1.0).unwrap();
    for words in [srt, d.join("cues.ass")] {
        if words.extension().is_some_and(|e| e == "ass") {
            captions_ok(&["convert", s(&d.join("cues.srt")), "-o", s(&words)]);
        }
        let out = d.join("out.mp4");
        captions_ok(&[
            "burn",
            s(&clip),
            "--words",
            s(&words),
            "--template",
            "clean-subtitle",
            "-o",
            s(&out),
        ]);
        let captioned = caption_testkit::media::frame_rgb_at(&out, 1.0).unwrap();
        let changed = plain
            .iter()
            .zip(&captioned)
            .filter(|(a, b)| a.abs_diff(**b) > 40)
            .count();
        assert!(changed > 100, "{}: no caption drawn", words.display());
    }
    let txt = d.join("script.txt");
    std::fs::write(&txt, "Hello there friends\n").unwrap();
    let out = captions(&[
        "burn",
        s(&clip),
        "--words",
        s(&txt),
        "-o",
        s(&d.join("x.mp4")),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("align"));
}

/// Frames of `ass` drawn by libass (ffmpeg's `ass` filter) over a plain grey `width` x
/// `height` picture, two a second for `seconds`, each handed to `check` as grey levels.
fn libass_frames(
    ass: &Path,
    (width, height): (usize, usize),
    seconds: f64,
    mut check: impl FnMut(usize, &[u8]),
) {
    use std::io::Read as _;
    // The filter reads its file name after `ass=`: a path with ':' or '\'' would need escaping.
    assert!(!s(ass).contains([':', '\'', '\\']), "{}", ass.display());
    let source = format!("color=c=0x808080:s={width}x{height}:r=2:d={seconds},format=rgb24");
    let filter = format!("ass={},format=gray", s(ass));
    let mut child = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-f",
            "lavfi",
            "-i",
        ])
        .arg(&source)
        .args(["-vf", &filter, "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("ffmpeg (with libass) must be installed");
    let mut stdout = child.stdout.take().unwrap();
    let mut frame = vec![0u8; width * height];
    let mut n = 0;
    while stdout.read_exact(&mut frame).is_ok() {
        check(n, &frame);
        n += 1;
    }
    assert!(
        child.wait().unwrap().success(),
        "ffmpeg failed on {}",
        ass.display()
    );
    assert!(
        n as f64 >= seconds * 2.0 - 1.0,
        "{n} frames of {}",
        ass.display()
    );
}

#[test]
fn ass_captions_stay_inside_portrait_landscape_and_square_frames_in_every_template() {
    // A real transcript: 70 words in 25 s, sentences of up to 21 words.
    let transcript =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts/creator-tips.json");
    let seconds = 26.0;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let templates: Vec<String> = caption_core::Catalog::builtin()
        .unwrap()
        .templates()
        .iter()
        .map(|t| t.id.clone())
        .collect();
    let mut problems = Vec::new();
    for (width, height) in [(1080usize, 1920usize), (1920, 1080), (720, 720)] {
        for template in &templates {
            let ass = d.join(format!("{template}-{width}x{height}.ass"));
            let size = format!("{width}x{height}");
            captions_ok(&[
                "convert",
                s(&transcript),
                "-o",
                s(&ass),
                "--size",
                &size,
                "--template",
                template,
            ]);
            // A 2-pixel border stays background in every frame; the captions show in most.
            let mut touching = Vec::new();
            let mut captioned = 0;
            libass_frames(&ass, (width, height), seconds, |n, frame| {
                let caption = |&v: &u8| v.abs_diff(0x80) > 40;
                let edge = (0..height).any(|y| {
                    let row = &frame[y * width..(y + 1) * width];
                    if y < 2 || y >= height - 2 {
                        row.iter().any(caption)
                    } else {
                        row[..2].iter().chain(&row[width - 2..]).any(caption)
                    }
                });
                if edge {
                    touching.push(n as f64 / 2.0);
                }
                if frame.iter().filter(|v| caption(v)).count() > 500 {
                    captioned += 1;
                }
            });
            if !touching.is_empty() {
                problems.push(format!(
                    "{template} at {size}: a caption touches the frame's edge at {touching:?} s"
                ));
            }
            if captioned < 30 {
                problems.push(format!(
                    "{template} at {size}: captions drawn in only {captioned} frames"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
