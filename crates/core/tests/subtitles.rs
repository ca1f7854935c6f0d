//! Subtitle export then import, on generated transcripts: the words come back as written, cues
//! start on their first word's start to the millisecond, and ASS karaoke gives every word its
//! times back to the centisecond.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{
    CapitalizationType, Catalog, Config, ExportOptions, SubtitleFormat, Word, export_words,
    import_words, parse_cues,
};
use proptest::prelude::*;

/// The default style, showing words exactly as written.
fn as_written() -> Config {
    let mut config = Catalog::builtin().unwrap().default_config().clone();
    config.capitalization_type = CapitalizationType::None;
    config.word_has_punctuation = true;
    config
}

/// Words with texts that need escaping now and then, in time order on a millisecond grid.
fn transcript() -> impl Strategy<Value = Vec<Word>> {
    let text = prop_oneof![
        8 => "[A-Za-z][a-z']{0,7}[.,!?]?",
        1 => "[&<>{}\\\\][a-zA-Z]{0,3}[&<>{}\\\\]?",
        1 => "[我们今天去公园東京に行きます]{1,3}",
    ];
    prop::collection::vec((text, 0u64..1500, 40u64..900), 1..60).prop_map(|specs| {
        let mut at_ms = 0;
        specs
            .into_iter()
            .map(|(text, gap_ms, length_ms)| {
                let start_ms = at_ms + gap_ms;
                at_ms = start_ms + length_ms;
                Word::new(start_ms as f64 / 1000.0, at_ms as f64 / 1000.0, text)
            })
            .collect()
    })
}

fn texts(words: &[Word]) -> Vec<&str> {
    words.iter().map(|w| w.punctuated_word.as_str()).collect()
}

/// Whether any word is Chinese or Japanese: written without spaces, such text is cut into
/// words again by a dictionary when read back, perhaps elsewhere.
fn has_cjk(words: &[Word]) -> bool {
    words.iter().any(|w| {
        w.punctuated_word
            .chars()
            .any(caption_core::is_unspaced_char)
    })
}

/// All the words' characters, spaces left out.
fn characters(words: &[Word]) -> String {
    words
        .iter()
        .flat_map(|w| w.punctuated_word.chars())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn srt_and_vtt_give_back_the_words_and_the_cue_starts(words in transcript()) {
        for format in [SubtitleFormat::Srt, SubtitleFormat::Vtt] {
            let file = export_words(&words, format, &ExportOptions::default()).unwrap();
            let back = import_words(&file, format).unwrap();
            if has_cjk(&words) {
                prop_assert_eq!(characters(&back), characters(&words), "{:?}: {}", format, file);
            } else {
                prop_assert_eq!(texts(&back), texts(&words), "{:?}: {}", format, file);
            }
            let starts: Vec<u64> = words.iter().map(|w| (w.start * 1000.0).round() as u64).collect();
            let cues = parse_cues(&file, format).unwrap();
            for cue in &cues {
                let ms = (cue.start_s * 1000.0).round() as u64;
                prop_assert!(starts.contains(&ms), "{:?}: a cue at {} ms: {}", format, ms, file);
                prop_assert!(cue.end_s >= cue.start_s);
            }
            let last_end = words.iter().map(|w| w.end).fold(0.0, f64::max);
            prop_assert!(cues.last().unwrap().end_s >= last_end - 0.0005);
        }
    }

    #[test]
    fn ass_karaoke_gives_back_every_words_times(words in transcript()) {
        let options = ExportOptions::default().with_config(as_written());
        let file = export_words(&words, SubtitleFormat::Ass, &options).unwrap();
        let back = import_words(&file, SubtitleFormat::Ass).unwrap();
        prop_assert_eq!(texts(&back), texts(&words), "{}", file);
        for (read, written) in back.iter().zip(&words) {
            prop_assert!((read.start - written.start).abs() <= 0.0051, "{:?} {:?}", read, written);
            prop_assert!((read.end - written.end).abs() <= 0.0051, "{:?} {:?}", read, written);
        }
    }
}

#[test]
fn real_world_srt_bom_crlf_styling_and_overlaps() {
    let srt = "\u{feff}1\r\n00:00:01,000 --> 00:00:03,000\r\n<font color=\"#ffff00\">- Where are you?</font>\r\n<i>- Here.</i>\r\n\r\n3\r\n00:00:02,500 --> 00:00:04,000\r\n{\\an8}[door slams]\r\n\r\n";
    let words = import_words(srt, SubtitleFormat::Srt).unwrap();
    assert_eq!(
        texts(&words),
        ["-", "Where", "are", "you?", "-", "Here.", "[door", "slams]"]
    );
    // The overlapping cue's words follow the first cue's.
    assert!((words[6].start - 3.0).abs() < 1e-9);
    assert!((words[7].end - 4.0).abs() < 1e-9);
    assert!(words.windows(2).all(|w| w[0].end <= w[1].start + 1e-9));
}

#[test]
fn errors_have_typed_codes() {
    use caption_core::SubtitleErrorCode;
    let err = import_words("00:00:0x,000 --> 00:00:01,000\nhi\n", SubtitleFormat::Srt);
    assert_eq!(err.unwrap_err().code(), SubtitleErrorCode::BadTime);
    let err = import_words("plain words", SubtitleFormat::Text).unwrap_err();
    assert_eq!(err.code(), SubtitleErrorCode::Untimed);
    assert_eq!(err.code().as_str(), "untimed");
}
