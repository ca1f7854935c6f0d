//! The speed settings of a captioner reach whisper: greedy decoding and the whole encoder window
//! (the short one is the default) each hear a real recording (President Kennedy, 11 s) word for
//! word and time its words in order. Greedy decoding stays off by default: on five minutes of
//! continuous speech it skipped two 15 s stretches whole.

#![allow(clippy::expect_used, reason = "tests fail loudly")]

use std::path::{Path, PathBuf};

use captions::{Captioner, Task, Word};

const JFK: &str = "and so my fellow americans ask not what your country can do for you ask what you can do for your country";

fn jfk_wav() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/audio/jfk.wav")
}

fn heard(words: &[Word]) -> Vec<String> {
    words
        .iter()
        .map(|w| {
            w.word
                .chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .collect()
}

fn transcribe(captioner: &Captioner) -> Vec<Word> {
    let words = captioner
        .transcribe(jfk_wav(), &Task::default())
        .expect("transcribed");
    assert!(
        words
            .windows(2)
            .all(|w| w[0].start < w[0].end && w[0].end <= w[1].start),
        "{words:?}"
    );
    words
}

#[test]
fn greedy_decoding_hears_jfk_word_for_word() {
    let captioner = Captioner::builder()
        .model("tiny.en")
        .beam_size(1)
        .build()
        .expect("captioner");
    assert!(format!("{captioner:?}").contains("beam_size: 1"));
    let said: Vec<&str> = JFK.split(' ').collect();
    assert_eq!(heard(&transcribe(&captioner)), said);
}

#[test]
fn the_whole_window_hears_jfk_word_for_word() {
    assert!(format!("{:?}", Captioner::builder()).contains("short_window: true"));
    let captioner = Captioner::builder()
        .model("tiny.en")
        .short_window(false)
        .build()
        .expect("captioner");
    assert!(format!("{captioner:?}").contains("short_window: false"));
    let said: Vec<&str> = JFK.split(' ').collect();
    assert_eq!(heard(&transcribe(&captioner)), said);
}
