//! `captions transcribe`, `burn`, `batch` and `preview` on real media.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};

mod support;

use support::{captions, espeak_wav, run};

fn jfk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/audio/jfk.wav")
}

/// A short portrait clip with spoken words (espeak-ng) as its audio track.
fn speech_clip(dir: &Path, name: &str, text: &str) -> PathBuf {
    let wav = dir.join(format!("{name}.wav"));
    espeak_wav(&wav, 150, text);
    let clip = dir.join(format!("{name}.mp4"));
    run(
        "ffmpeg",
        &[
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "color=c=navy:s=270x480:r=24",
            "-i",
            wav.to_str().unwrap(),
            "-shortest",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            clip.to_str().unwrap(),
        ],
    );
    clip
}

fn words_of(json: &[u8]) -> String {
    let words: Vec<serde_json::Value> = serde_json::from_slice(json).unwrap();
    words
        .iter()
        .map(|w| {
            w["word"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn transcribe_jfk_word_exact_in_every_format() {
    // On one core, as on a shared machine.
    let out = captions(&[
        "transcribe",
        jfk().to_str().unwrap(),
        "--lang",
        "en",
        "--threads",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        words_of(&out.stdout),
        "and so my fellow americans ask not what your country can do for you ask what you can do for your country"
    );
    let dir = tempfile::tempdir().unwrap();
    let srt = dir.path().join("jfk.srt");
    assert!(
        captions(&[
            "transcribe",
            jfk().to_str().unwrap(),
            "-o",
            srt.to_str().unwrap()
        ])
        .status
        .success()
    );
    let srt = std::fs::read_to_string(srt).unwrap();
    assert!(srt.starts_with("1\n00:00:0"), "{srt}");
    assert!(srt.to_lowercase().contains("fellow americans"));
    let vtt = captions(&["transcribe", jfk().to_str().unwrap(), "--format", "vtt"]);
    assert!(String::from_utf8_lossy(&vtt.stdout).starts_with("WEBVTT"));

    let spanish = captions(&["transcribe", jfk().to_str().unwrap(), "--lang", "es"]);
    assert!(!spanish.status.success());
    assert!(
        String::from_utf8_lossy(&spanish.stderr).contains("English only"),
        "{}",
        String::from_utf8_lossy(&spanish.stderr)
    );
}

#[test]
fn transcribe_translate_gives_english_words_for_spanish_speech() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("es.wav");
    caption_testkit::media::spanish_wav(&wav).unwrap();
    let wav = wav.to_str().unwrap();
    // An English-only model cannot translate: the error says which model to use.
    let out = captions(&["transcribe", wav, "--translate"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("multilingual") && stderr.contains("base"),
        "{stderr}"
    );
    let out = captions(&["transcribe", wav, "--translate", "--model", "base"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<caption_core::Word> = serde_json::from_slice(&out.stdout).unwrap();
    let text: Vec<String> = words.iter().map(|w| w.word.to_lowercase()).collect();
    let english = caption_testkit::media::SPANISH_TEXT_IN_ENGLISH;
    let hits = text
        .iter()
        .filter(|w| english.contains(&w.as_str()))
        .count();
    assert!(hits >= 3, "expected English words, got {text:?}");
    for spanish in caption_testkit::media::SPANISH_WORDS {
        assert!(
            !text.iter().any(|w| w.as_str() == *spanish),
            "{spanish:?} in {text:?}"
        );
    }
}

#[test]
fn align_times_a_script_and_subtitles_on_a_video() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        "Every summer my grandmother grows tomatoes and peppers behind her small wooden house";
    let clip = speech_clip(dir.path(), "garden", text);
    let script = dir.path().join("script.txt");
    // A script with the writer's punctuation and line breaks: the words come back as written.
    std::fs::write(
        &script,
        "Every summer, my grandmother grows\ntomatoes and peppers behind her small wooden house.\n",
    )
    .unwrap();
    let out = captions(&[
        "align",
        clip.to_str().unwrap(),
        "--text",
        script.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let written: Vec<&str> = words
        .iter()
        .map(|w| w["punctuated_word"].as_str().unwrap())
        .collect();
    assert_eq!(
        written.join(" "),
        "Every summer, my grandmother grows tomatoes and peppers behind her small wooden house."
    );
    let times: Vec<(f64, f64)> = words
        .iter()
        .map(|w| (w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap()))
        .collect();
    assert!(times.iter().all(|(s, e)| s < e), "{times:?}");
    assert!(times.windows(2).all(|w| w[0].1 <= w[1].0), "{times:?}");

    // The same words as two SRT cues in, a VTT out.
    let srt = dir.path().join("cues.srt");
    let half = times[6].0;
    std::fs::write(
        &srt,
        format!(
            "1\n00:00:00,000 --> 00:00:0{half:.3}\nEvery summer my grandmother grows tomatoes\n\n2\n00:00:0{half:.3} --> 00:00:09,000\nand peppers behind her small wooden house\n"
        )
        .replace('.', ","),
    )
    .unwrap();
    let vtt = dir.path().join("aligned.vtt");
    let out = captions(&[
        "align",
        clip.to_str().unwrap(),
        "--text",
        srt.to_str().unwrap(),
        "-o",
        vtt.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let vtt = std::fs::read_to_string(vtt).unwrap();
    assert!(
        vtt.starts_with("WEBVTT") && vtt.contains("grandmother"),
        "{vtt}"
    );

    let missing = captions(&[
        "align",
        clip.to_str().unwrap(),
        "--text",
        "/nonexistent.srt",
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent.srt"));
}

#[test]
fn burn_with_words_and_preview() {
    let dir = tempfile::tempdir().unwrap();
    let clip = speech_clip(dir.path(), "hello", "hello world, this is a caption test");
    let words = dir.path().join("words.json");
    std::fs::write(
        &words,
        r#"[{"start":0.2,"end":0.6,"word":"hello","punctuated_word":"Hello"},{"start":0.7,"end":1.2,"word":"world","punctuated_word":"world!","emoji":"🌍"}]"#,
    )
    .unwrap();
    let out = dir.path().join("out.mp4");
    burn_ok(&clip, &words, "emoji-hype", &out);
    assert!(out.metadata().unwrap().len() > 1000);

    // The captions alone, as ProRes 4444 with alpha at the clip's size and length.
    let layer = dir.path().join("captions.mov");
    let burn = captions(&[
        "burn",
        clip.to_str().unwrap(),
        "--words",
        words.to_str().unwrap(),
        "--overlay-only",
        "-o",
        layer.to_str().unwrap(),
    ]);
    assert!(
        burn.status.success(),
        "{}",
        String::from_utf8_lossy(&burn.stderr)
    );
    let (clip_info, layer_info) = (
        caption_media::probe(&clip).unwrap(),
        caption_media::probe(&layer).unwrap(),
    );
    let video = layer_info.video.unwrap();
    assert_eq!(video.codec, "prores");
    assert!(video.pixel_format.starts_with("yuva444p"), "{video:?}");
    let clip_video = clip_info.video.unwrap();
    assert_eq!(
        (video.width, video.height),
        (clip_video.display_width, clip_video.display_height)
    );
    assert!((layer_info.duration_s - clip_info.duration_s).abs() < 0.1);
    let refused = captions(&[
        "burn",
        clip.to_str().unwrap(),
        "--words",
        words.to_str().unwrap(),
        "--overlay-only",
        "-o",
        dir.path().join("captions.mp4").to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains(".webm"));

    let png = dir.path().join("frame.png");
    let preview = captions(&[
        "preview",
        "--template",
        "karaoke",
        "--words",
        words.to_str().unwrap(),
        "--at",
        "0.9",
        "--size",
        "540x960",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert!(
        preview.status.success(),
        "{}",
        String::from_utf8_lossy(&preview.stderr)
    );
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let sheet = dir.path().join("sheet.png");
    assert!(
        captions(&[
            "preview",
            "--words",
            words.to_str().unwrap(),
            "--sheet",
            "-o",
            sheet.to_str().unwrap()
        ])
        .status
        .success()
    );

    let missing = captions(&["burn", clip.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--words"));
}

#[test]
fn batch_skips_done_work_and_reports_the_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let videos = dir.path().join("videos");
    std::fs::create_dir(&videos).unwrap();
    for (i, text) in ["one small step", "hello there", "good morning", "thank you"]
        .iter()
        .enumerate()
    {
        speech_clip(&videos, &format!("clip{i}"), text);
    }
    std::fs::write(
        videos.join("broken.mp4"),
        b"\x00\x00\x00\x18ftypisom not a video at all",
    )
    .unwrap();
    let out = dir.path().join("out");
    // `captions batch INPUTS --template TEMPLATE --out OUT` plus `more`; its stderr.
    let batch = |inputs: &Path, template: &str, more: &[&str]| {
        let mut args = vec!["batch", inputs.to_str().unwrap(), "--template", template];
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend_from_slice(more);
        let output = captions(&args);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stderr)
    };
    let (code, stderr) = batch(&videos, "one-word", &["--jobs", "2", "--threads", "2"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("5 videos: 4 captioned, 0 skipped (already done), 1 failed"),
        "{stderr}"
    );
    assert!(stderr.contains("broken.mp4"), "{stderr}");
    for i in 0..4 {
        assert!(out.join(format!("clip{i}.mp4")).is_file());
    }
    assert!(!out.join("broken.mp4").exists(), "no partial output");

    let (code, stderr) = batch(&videos, "one-word", &[]);
    assert!(stderr.contains("4 skipped"), "{stderr}");
    assert_eq!(code, Some(1));
    let fingerprint = std::fs::read_to_string(out.join("clip0.fingerprint")).unwrap();

    // Another style re-captions every video (from the kept words: no transcription).
    let modified = std::fs::metadata(out.join("clip0.mp4"))
        .unwrap()
        .modified()
        .unwrap();
    let (_, stderr) = batch(&videos, "karaoke", &[]);
    assert!(
        stderr.contains("5 videos: 4 captioned, 0 skipped (already done), 1 failed"),
        "{stderr}"
    );
    assert_ne!(
        std::fs::read_to_string(out.join("clip0.fingerprint")).unwrap(),
        fingerprint
    );
    assert_ne!(
        std::fs::metadata(out.join("clip0.mp4"))
            .unwrap()
            .modified()
            .unwrap(),
        modified
    );

    // Edited words re-caption that video alone.
    let words_file = out.join("clip1.words.json");
    let edited = std::fs::read_to_string(&words_file).unwrap().replacen(
        "\"punctuated_word\": \"",
        "\"punctuated_word\": \"X",
        1,
    );
    std::fs::write(&words_file, edited).unwrap();
    let (_, stderr) = batch(&videos, "karaoke", &[]);
    assert!(stderr.contains("1 captioned, 3 skipped"), "{stderr}");

    // --force redoes everything, transcription included.
    std::fs::write(&words_file, "[]").unwrap();
    let (code, stderr) = batch(&videos.join("clip1.mp4"), "karaoke", &["--force"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("1 videos: 1 captioned"), "{stderr}");
    assert_ne!(std::fs::read_to_string(&words_file).unwrap().trim(), "[]");
}

fn frame(video: &Path, t_s: f64) -> Vec<u8> {
    caption_testkit::media::frame_rgb_at(video, t_s).unwrap()
}

/// `captions burn CLIP --words WORDS --template TEMPLATE -o OUT`, which must succeed.
fn burn_ok(clip: &Path, words: &Path, template: &str, out: &Path) {
    let burn = captions(&[
        "burn",
        clip.to_str().unwrap(),
        "--words",
        words.to_str().unwrap(),
        "--template",
        template,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        burn.status.success(),
        "{}",
        String::from_utf8_lossy(&burn.stderr)
    );
}

/// The mean row of the pixels that differ between two RGB frames `width` pixels wide.
fn changed_rows_centre(a: &[u8], b: &[u8], width: usize) -> f64 {
    let width = width * 3;
    let rows: Vec<usize> = a
        .iter()
        .zip(b)
        .enumerate()
        .filter(|(_, (x, y))| x.abs_diff(**y) > 40)
        .map(|(i, _)| i / width)
        .collect();
    assert!(!rows.is_empty(), "nothing drawn");
    rows.iter().sum::<usize>() as f64 / rows.len() as f64
}

#[test]
fn subtitles_follow_practice_and_ass_draws_where_the_burn_does() {
    let dir = tempfile::tempdir().unwrap();
    let clip = speech_clip(
        dir.path(),
        "talk",
        "Welcome back everyone. Today we are going to look at how captions are placed on the screen, and why a short pause matters.",
    );
    let srt = dir.path().join("talk.srt");
    let out = captions(&[
        "transcribe",
        clip.to_str().unwrap(),
        "-o",
        srt.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&srt).unwrap();
    let parse = |t: &str| -> f64 {
        let (hms, ms) = t.trim().split_once(',').unwrap();
        let p: Vec<f64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
        p[0] * 3600.0 + p[1] * 60.0 + p[2] + ms.parse::<f64>().unwrap() / 1000.0
    };
    let mut cues = Vec::new();
    for block in text.trim().split("\n\n") {
        let lines: Vec<&str> = block.lines().collect();
        let (a, b) = lines[1].split_once(" --> ").unwrap();
        cues.push((parse(a), parse(b), lines[2..].to_vec()));
    }
    assert!(cues.len() >= 2, "{text}");
    for (k, (start, end, lines)) in cues.iter().enumerate() {
        assert!(
            lines.len() <= 2 && lines.iter().all(|l| l.chars().count() <= 42),
            "{text}"
        );
        assert!(end - start <= 7.5, "{text}");
        if let Some((next, _, _)) = cues.get(k + 1) {
            assert!(end <= next, "overlap: {text}");
            assert!(
                end - start >= 0.8 - 1e-3 || (end - next).abs() < 1e-3,
                "{text}"
            );
        }
        let chars: usize = lines.iter().map(|l| l.chars().count()).sum();
        assert!(
            chars as f64 / (end - start) <= 20.5
                || cues.get(k + 1).is_some_and(|n| (end - n.0).abs() < 1e-3),
            "{text}"
        );
    }

    // ASS in the template's style at the video's size; libass draws it where our burn draws.
    let ass = dir.path().join("talk.ass");
    let out = captions(&[
        "transcribe",
        clip.to_str().unwrap(),
        "--template",
        "clean-subtitle",
        "-o",
        ass.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = std::fs::read_to_string(&ass).unwrap();
    assert!(
        script.contains("PlayResX: 270\nPlayResY: 480\n"),
        "{script}"
    );
    let words = dir.path().join("talk.json");
    assert!(
        captions(&[
            "transcribe",
            clip.to_str().unwrap(),
            "-o",
            words.to_str().unwrap()
        ])
        .status
        .success()
    );
    let ours = dir.path().join("ours.mp4");
    burn_ok(&clip, &words, "clean-subtitle", &ours);
    let libass = dir.path().join("libass.mp4");
    let filter = format!("ass={}", ass.to_str().unwrap());
    let mut args = vec!["-i", clip.to_str().unwrap(), "-vf", &filter, "-an"];
    args.extend(support::h264_fast());
    args.push(libass.to_str().unwrap());
    support::ffmpeg(&args);
    let t = 1.5;
    let plain = frame(&clip, t);
    let ours_row = changed_rows_centre(&plain, &frame(&ours, t), 270);
    let libass_row = changed_rows_centre(&plain, &frame(&libass, t), 270);
    assert!(
        (ours_row - libass_row).abs() < 480.0 * 0.06,
        "caption centre: ours at row {ours_row:.0}, libass at {libass_row:.0}"
    );
}
