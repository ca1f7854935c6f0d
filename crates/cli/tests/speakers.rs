//! `captions transcribe --speakers`: every word of a two-voice dialogue gets its speaker, "S1"
//! first; a count out of range is refused before any work, naming the flag and its rule.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_testkit::dialogue::{Voice, conversation};

mod support;

use support::{captions, s, stderr_of, stdout_of};

#[test]
fn transcribe_labels_each_word_with_its_speaker() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("dialogue.wav");
    conversation(
        &[Voice::Espeak("en-us"), Voice::Espeak("en-gb+f3")],
        4,
        None,
    )
    .unwrap()
    .write_wav(&wav)
    .unwrap();
    for count in ["auto", "2"] {
        let o = captions(&["transcribe", s(&wav), "--speakers", count]);
        assert!(o.status.success(), "{}", stderr_of(&o));
        let words: serde_json::Value = serde_json::from_str(&stdout_of(&o)).unwrap();
        let speakers: Vec<&str> = words
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["speaker"].as_str().expect("every word has a speaker"))
            .collect();
        assert_eq!(speakers.first(), Some(&"S1"), "--speakers {count}");
        assert!(speakers.contains(&"S2"), "--speakers {count}: {speakers:?}");
        assert!(
            speakers.iter().all(|s| ["S1", "S2"].contains(s)),
            "{speakers:?}"
        );
    }
}

#[test]
fn a_speaker_count_out_of_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("missing.wav");
    for count in ["0", "9", "two"] {
        let o = captions(&["transcribe", s(&wav), "--speakers", count]);
        assert_eq!(o.status.code(), Some(2), "--speakers {count}");
        let stderr = stderr_of(&o);
        assert!(
            stderr.contains("--speakers")
                && stderr.contains("\"auto\" or a whole number from 1 to 8"),
            "{stderr}"
        );
    }
}

/// The share of `frame`'s pixels near `rgb`.
fn pixels_near(frame: &[u8], rgb: [u8; 3]) -> usize {
    frame
        .chunks_exact(3)
        .filter(|p| p.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) < 60))
        .count()
}

#[test]
fn burn_transcribes_with_speakers_and_colours_each() {
    let dir = tempfile::tempdir().unwrap();
    let dialogue =
        conversation(&[Voice::Festival("slt"), Voice::Espeak("en-us")], 2, None).unwrap();
    let video = dir.path().join("dialogue.mp4");
    dialogue.write_video(&video, 270, 480).unwrap();
    let style = dir.path().join("two.json");
    std::fs::write(
        &style,
        r#"{"speakerColors": [{"r": 230, "g": 20, "b": 20}, {"r": 20, "g": 40, "b": 240}],
            "colors": {"hilightColor": {"colors": [{"r": 40, "g": 220, "b": 40}]}}}"#,
    )
    .unwrap();
    let out = dir.path().join("out.mp4");
    let o = captions(&[
        "burn",
        s(&video),
        "--transcribe",
        "--speakers",
        "auto",
        "--config",
        s(&style),
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let turns = dialogue.turns();
    assert_eq!(turns.len(), 2);
    for ((speaker, start_s, end_s), colour) in turns.into_iter().zip([[230, 20, 20], [20, 40, 240]])
    {
        let frame = caption_testkit::media::frame_rgb_at(&out, (start_s + end_s) / 2.0).unwrap();
        let lit = pixels_near(&frame, colour);
        assert!(lit > 100, "speaker {speaker}: {lit} pixels of their colour");
    }

    let o = captions(&["burn", s(&video), "--speakers", "2", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "--speakers needs --transcribe");
}
