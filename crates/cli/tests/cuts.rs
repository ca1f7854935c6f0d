//! `captions burn --cut-pauses --cut-fillers` on speech with known pauses and fillers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use caption_engine::{Captioner, Task, Word};
use caption_testkit::speech::{read_wav_16k, write_wav_16k};

mod support;

use support::{duration_s, espeak_wav, ffmpeg};

const RATE: usize = 16_000;
const FPS: f64 = 25.0;
const PAUSE_S: f64 = 0.4;

/// What the clip is made of, in order.
enum Piece {
    Silence(f64),
    Speech(&'static str),
    Filler(&'static str),
}

/// Sentences and fillers spoken by espeak-ng, each trimmed to its sound, with silences of
/// known lengths between them.
const LAYOUT: &[Piece] = &[
    Piece::Silence(0.8),
    Piece::Speech("The river runs past the old mill every spring."),
    Piece::Silence(1.5),
    Piece::Speech("We walked along the bank until the evening."),
    Piece::Silence(0.2),
    Piece::Filler("um"),
    Piece::Silence(0.25),
    Piece::Speech("Then the rain began to fall on the fields."),
    Piece::Silence(0.3),
    Piece::Speech("Nobody had brought a coat with them."),
    Piece::Silence(0.15),
    Piece::Filler("uh"),
    Piece::Silence(0.15),
    Piece::Speech("So we ran back to the house together."),
    Piece::Silence(1.0),
];

/// `text` at 16 kHz, trimmed to where it reaches 1 % of its peak.
fn spoken(dir: &Path, name: &str, text: &str) -> Vec<i16> {
    let raw = dir.join(format!("{name}-raw.wav"));
    espeak_wav(&raw, 160, text);
    let wav = dir.join(format!("{name}.wav"));
    ffmpeg(&[
        "-i",
        raw.to_str().unwrap(),
        "-ar",
        "16000",
        "-ac",
        "1",
        wav.to_str().unwrap(),
    ]);
    let samples = read_wav_16k(&wav).unwrap();
    let peak = samples.iter().map(|s| s.unsigned_abs()).max().unwrap();
    let loud = |s: &i16| s.unsigned_abs() >= peak / 100;
    let first = samples.iter().position(loud).unwrap();
    let last = samples.iter().rposition(loud).unwrap();
    samples[first..=last].to_vec()
}

/// The clip: its video (25 fps, a plain picture), and per piece its span in seconds.
fn make_clip(dir: &Path) -> (PathBuf, Vec<(f64, f64)>) {
    let mut audio: Vec<i16> = Vec::new();
    let mut spans = Vec::new();
    for (i, piece) in LAYOUT.iter().enumerate() {
        let start = audio.len();
        match piece {
            Piece::Silence(s) => audio.extend(vec![0; (s * RATE as f64).round() as usize]),
            Piece::Speech(text) | Piece::Filler(text) => {
                audio.extend(spoken(dir, &format!("piece{i}"), text));
            }
        }
        spans.push((start as f64 / RATE as f64, audio.len() as f64 / RATE as f64));
    }
    let wav = dir.join("clip.wav");
    write_wav_16k(&wav, &audio).unwrap();
    let video = dir.join("clip.mp4");
    let seconds = format!("{:.3}", audio.len() as f64 / RATE as f64);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "color=c=0x204060:s=320x240:r=25",
        "-i",
        wav.to_str().unwrap(),
        "-t",
        &seconds,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-ar",
        "48000",
        video.to_str().unwrap(),
    ]);
    (video, spans)
}

fn captioner() -> Captioner {
    Captioner::builder()
        .model("tiny.en")
        .threads(2)
        .build()
        .unwrap()
}

/// Seconds the layout says `--cut-pauses 0.4 --cut-fillers` removes, given each piece's span:
/// every silence beyond 0.4 s, every filler with the silence around it beyond 0.4 s, and the
/// silence at either end beyond 0.4 s.
fn expected_cut_s(spans: &[(f64, f64)]) -> f64 {
    let mut total = 0.0;
    // Silence and fillers since the last sentence.
    let (mut silence, mut fillers) = (0.0, 0.0);
    for (piece, (start, end)) in LAYOUT.iter().zip(spans) {
        match piece {
            Piece::Silence(_) => silence += end - start,
            Piece::Filler(_) => fillers += end - start,
            Piece::Speech(_) => {
                total += fillers + (silence - PAUSE_S).max(0.0);
                (silence, fillers) = (0.0, 0.0);
            }
        }
    }
    total + fillers + (silence - PAUSE_S).max(0.0)
}

/// Stretches of at least `min_s` seconds quieter than -40 dBFS, by FFmpeg's silencedetect.
fn silences(media: &Path, min_s: f64) -> Vec<f64> {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostats", "-i", media.to_str().unwrap()])
        .args(["-af", &format!("silencedetect=noise=-40dB:d={min_s}")])
        .args(["-f", "null", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.split("silence_duration: ").nth(1))
        .map(|d| d.trim().parse().unwrap())
        .collect()
}

/// Mean absolute difference of two RGB frames, per channel value.
fn frame_difference(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let sum: u64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    sum as f64 / a.len() as f64
}

fn burn(clip: &Path, words: &[Word], config: &Path, out: &Path, extra: &[&str]) -> String {
    let words_json = out.with_extension("words.json");
    std::fs::write(&words_json, serde_json::to_vec(words).unwrap()).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_captions"))
        .args(["burn", clip.to_str().unwrap()])
        .args(["--words", words_json.to_str().unwrap()])
        .args(["--config", config.to_str().unwrap()])
        .args(["-o", out.to_str().unwrap()])
        .args(extra)
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    stderr
}

fn bare(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.punctuated_word.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn pauses_and_fillers_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (clip, spans) = make_clip(dir.path());
    let captioner = captioner();

    // Whisper keeps the fillers when asked to, and marks them; it drops them otherwise.
    let words = captioner
        .transcribe(&clip, &Task::default().keep_fillers(true))
        .unwrap();
    let fillers: Vec<&str> = words
        .iter()
        .filter(|w| w.filler)
        .map(|w| w.word.as_str())
        .collect();
    assert_eq!(fillers, ["um", "uh"], "{}", bare(&words));
    let plain = captioner.transcribe(&clip, &Task::default()).unwrap();
    assert!(!plain.iter().any(|w| w.filler), "{}", bare(&plain));

    // One word a page: the frame at a word's time shows that word whatever the paging.
    let config = dir.path().join("one-word.json");
    std::fs::write(
        &config,
        r#"{"linesCount": 1, "wordsPerLineCount": 1, "sizes": {"fontSize": 220}}"#,
    )
    .unwrap();
    let cut = dir.path().join("cut.mp4");
    let report = burn(
        &clip,
        &words,
        &config,
        &cut,
        &["--cut-pauses", "0.4", "--cut-fillers"],
    );
    let kept: Vec<Word> = words.iter().filter(|w| !w.filler).cloned().collect();
    let reference = dir.path().join("reference.mp4");
    burn(&clip, &kept, &config, &reference, &[]);

    // Shorter by what the layout says, to within a frame.
    let removed = duration_s(&clip) - duration_s(&cut);
    let expected = expected_cut_s(&spans);
    eprintln!("{report}removed {removed:.3} s, expected {expected:.3} s");
    assert!(
        (removed - expected).abs() <= 1.0 / FPS,
        "removed {removed:.3} s, expected {expected:.3} s"
    );

    // No long silence left, where the input had several.
    assert!(
        silences(&clip, 0.45).len() >= 3,
        "{:?}",
        silences(&clip, 0.45)
    );
    let left = silences(&cut, 0.45);
    assert!(
        left.is_empty(),
        "silences over 0.45 s after the cut: {left:?}"
    );

    // No filler in what is said now; every other word still is.
    let after = captioner
        .transcribe(&cut, &Task::default().keep_fillers(true))
        .unwrap();
    assert!(!after.iter().any(|w| w.filler), "{}", bare(&after));
    assert!(
        after.len() + 3 >= kept.len(),
        "{}\n{}",
        bare(&after),
        bare(&kept)
    );

    // Each word is captioned at its new time as it was at its old one.
    let mut style = captioner
        .style(
            None,
            &caption_core::parse_config_patch(
                &serde_json::json!({"linesCount": 1, "wordsPerLineCount": 1,
                    "cutPausesS": 0.4, "cutFillers": true}),
                "config",
            )
            .unwrap(),
        )
        .unwrap();
    style.sizes.font_px = 220.0;
    let plan = captioner.plan_cuts(&clip, &words, &style).unwrap();
    assert!((plan.removed_s() - expected).abs() <= 1.0 / FPS);
    let checked: Vec<&Word> = kept.iter().filter(|w| w.duration_s() >= 0.12).collect();
    assert!(checked.len() >= 20);
    for (i, word) in checked.iter().enumerate() {
        let t = (word.start + word.end) / 2.0;
        let now = caption_testkit::media::frame_rgb_at(&cut, plan.map(t)).unwrap();
        let then = caption_testkit::media::frame_rgb_at(&reference, t).unwrap();
        let other = checked[(i + 1) % checked.len()];
        let elsewhere =
            caption_testkit::media::frame_rgb_at(&reference, (other.start + other.end) / 2.0)
                .unwrap();
        // Measured: 0 to 0.7 for the same word (x264 noise), 3.5 to 11 for another.
        let same = frame_difference(&now, &then);
        let different = frame_difference(&now, &elsewhere);
        assert!(
            same < 1.5 && different > 2.5,
            "{:?} at {t:.2} s (now {:.2} s): {same:.2} from its old frame, {different:.2} from {:?}'s",
            word.word,
            plan.map(t),
            other.word
        );
    }
}

#[test]
fn cut_flags_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let video = caption_testkit::media::tone_video(
        &dir.path().join("tone.mp4"),
        "color=c=gray:s=64x64:r=25",
        1.0,
    )
    .unwrap();
    let words = dir.path().join("words.json");
    std::fs::write(&words, "[]").unwrap();
    let captions = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_captions"))
            .args(["burn", video.to_str().unwrap()])
            .args(["--words", words.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let out = dir.path().join("out.mp4");
    let out = out.to_str().unwrap();
    let stderr = captions(&["--cut-pauses", "0.05", "-o", out]);
    assert!(
        stderr.contains("--cut-pauses: must be between 0.1 and 10 seconds"),
        "{stderr}"
    );
    let layer = dir.path().join("layer.mov");
    let stderr = captions(&[
        "--overlay-only",
        "--cut-fillers",
        "-o",
        layer.to_str().unwrap(),
    ]);
    assert!(stderr.contains("--cut-fillers"), "{stderr}");
    assert!(!dir.path().join("out.mp4").exists() && !layer.exists());
}
