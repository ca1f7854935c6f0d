//! Speakers end to end: a dialogue of two Festival voices in a video, transcribed with the
//! speakers told apart, then burned with `speakerColors`: in each turn's frames the words are
//! in that speaker's colour and never in the other's.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{Catalog, Word, parse_config_patch};
use caption_engine::{Captioner, SpeakerCount, Task};
use caption_testkit::dialogue::{SpokenWord, Voice, conversation, speaker_error_rate};
use serde_json::json;

const W: u32 = 360;
const H: u32 = 640;

/// Each transcribed word's true speaker: that of the spoken word nearest its middle.
fn truth_for(words: &[Word], spoken: &[SpokenWord]) -> Vec<SpokenWord> {
    words
        .iter()
        .map(|w| {
            let middle_s = (w.start + w.end) / 2.0;
            let distance = |s: &SpokenWord| (s.start_s - middle_s).max(middle_s - s.end_s).max(0.0);
            let nearest = spoken
                .iter()
                .min_by(|a, b| distance(a).total_cmp(&distance(b)))
                .unwrap();
            SpokenWord {
                word: w.word.clone(),
                start_s: w.start,
                end_s: w.end,
                speaker: nearest.speaker,
            }
        })
        .collect()
}

fn count(rgb: &[u8], pred: impl Fn(u8, u8, u8) -> bool) -> usize {
    rgb.chunks_exact(3)
        .filter(|p| pred(p[0], p[1], p[2]))
        .count()
}

fn red(r: u8, g: u8, b: u8) -> bool {
    r > 190 && g < 70 && b < 70
}

fn blue(r: u8, g: u8, b: u8) -> bool {
    b > 190 && r < 70 && g < 70
}

#[test]
fn a_dialogue_gets_its_speakers_and_their_colours() {
    let dir = tempfile::tempdir().unwrap();
    let dialogue =
        conversation(&[Voice::Festival("slt"), Voice::Festival("kal")], 4, None).unwrap();
    let video = dir.path().join("dialogue.mp4");
    dialogue.write_video(&video, W, H).unwrap();

    let captioner = Captioner::builder().model("tiny.en").build().unwrap();
    let task = Task::default().language("en");
    let plain = captioner.transcribe(&video, &task).unwrap();
    assert!(
        plain.iter().all(|w| w.speaker.is_none()),
        "no speakers unless asked"
    );
    let words = captioner
        .transcribe(&video, &task.speakers(SpeakerCount::Auto))
        .unwrap();
    assert!(
        words.len() >= dialogue.words.len() * 9 / 10,
        "{} words",
        words.len()
    );
    let labels: Vec<usize> = words
        .iter()
        .map(|w| match w.speaker.as_deref() {
            Some("S1") => 0,
            Some("S2") => 1,
            other => panic!("speaker {other:?} on {:?}", w.word),
        })
        .collect();
    assert_eq!(labels[0], 0, "S1 speaks first");
    assert!(labels.contains(&1), "two speakers found");
    let error_rate = speaker_error_rate(&truth_for(&words, &dialogue.words), &labels);
    assert!(
        error_rate <= 0.05,
        "{error_rate:.3} of words on the wrong speaker"
    );

    let style = parse_config_patch(
        &json!({
            "speakerColors": [{"r": 230, "g": 20, "b": 20}, {"r": 20, "g": 40, "b": 240}],
            "colors": {"hilightColor": {"colors": [{"r": 40, "g": 220, "b": 40}]}},
        }),
        "config",
    )
    .unwrap()
    .apply(
        &Catalog::builtin()
            .unwrap()
            .get("bold-highlight")
            .unwrap()
            .config,
    );
    let burned = dir.path().join("burned.mp4");
    captioner
        .burn(&video, &burned, &words, &style, &Task::default())
        .unwrap();
    for (speaker, start_s, end_s) in dialogue.turns() {
        let middle_s = (start_s + end_s) / 2.0;
        let frame = caption_testkit::media::frame_rgb_at(&burned, middle_s).unwrap();
        assert_eq!(frame.len(), (W * H * 3) as usize);
        let (own, other) = if speaker == 0 {
            (count(&frame, red), count(&frame, blue))
        } else {
            (count(&frame, blue), count(&frame, red))
        };
        assert!(
            own > 150,
            "speaker {speaker} at {middle_s:.1} s: {own} pixels of their colour"
        );
        assert!(
            other < 10,
            "speaker {speaker} at {middle_s:.1} s: {other} pixels of the other's"
        );
    }
}
