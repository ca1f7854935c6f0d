//! The aligner on real speech: Festival sentences whose word times are known to the sample, and
//! President Kennedy's recorded voice. Needs `make setup` (the PocketSphinx model, the g2p
//! weights, Festival).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::path::Path;

mod support;

use caption_align::Aligner;
use caption_testkit::speech::{TimedWord, festival_sentence, read_wav_16k};
use support::{boundary_errors, to_f32};

fn aligner() -> Aligner {
    Aligner::open_installed().expect("the aligner's models are installed by make setup")
}

fn festival(text: &str, voice: &str, dir: &Path) -> (Vec<f32>, Vec<TimedWord>) {
    let wav = dir.join(format!("{voice}.wav"));
    let truth = festival_sentence(text, voice, &wav).unwrap();
    (to_f32(&read_wav_16k(&wav).unwrap()), truth)
}

#[test]
fn continuous_speech_is_timed_within_tens_of_milliseconds() {
    let dir = tempfile::tempdir().unwrap();
    let aligner = aligner();
    let text = "The old lighthouse keeper climbed the narrow stairs every evening to light the lamp for passing ships";
    for voice in ["slt", "kal"] {
        let (samples, truth) = festival(text, voice, dir.path());
        let words: Vec<&str> = truth.iter().map(|w| w.word.as_str()).collect();
        let spans = aligner.align(&samples, &words).unwrap();
        let (mean, within) = boundary_errors(&truth, &spans);
        assert!(
            mean <= 0.03 && within >= 0.85,
            "{voice}: mean {mean:.3} s, {within:.2} within 50 ms"
        );
        assert!(spans.windows(2).all(|w| w[0].end_s <= w[1].start_s + 1e-9));
        assert!(spans.iter().all(|s| s.end_s > s.start_s));
    }
}

#[test]
fn numbers_symbols_and_unknown_words_get_real_times() {
    let dir = tempfile::tempdir().unwrap();
    // Festival reads the written forms aloud as the spoken words; the aligner gets the written
    // forms and must find each one, including names no dictionary has.
    let text = "I paid $25 on the 3rd of May, 10% more, to Zelensky and Kubernetes.";
    let (samples, truth) = festival(text, "slt", dir.path());
    let written: Vec<&str> = text.split_whitespace().collect();
    let spans = aligner().align(&samples, &written).unwrap();
    assert_eq!(spans.len(), written.len());
    for (word, span) in written.iter().zip(&spans) {
        assert!(span.end_s - span.start_s >= 0.05, "{word}: {span:?}");
    }
    // "$25" is "twenty five dollars": it spans Festival's three words.
    let twenty = truth.iter().position(|w| w.word == "twenty").unwrap();
    let dollars = truth.iter().position(|w| w.word == "dollars").unwrap();
    assert!(
        (spans[2].start_s - truth[twenty].start_s).abs() < 0.06,
        "{:?}",
        spans[2]
    );
    assert!(
        (spans[2].end_s - truth[dollars].end_s).abs() < 0.06,
        "{:?}",
        spans[2]
    );
    let last = truth.last().unwrap();
    assert!((spans.last().unwrap().end_s - last.end_s).abs() < 0.08);
}

#[test]
fn kennedy_is_timed_on_his_pauses() {
    let samples = to_f32(&read_wav_16k(&fixture("jfk.wav")).unwrap());
    let text = "And so, my fellow Americans: ask not what your country can do for you, ask what you can do for your country.";
    let words: Vec<&str> = text.split_whitespace().collect();
    let spans = aligner().align(&samples, &words).unwrap();
    // The pauses after "Americans:" and "not" are over half a second of silence; the words
    // around them end and start at its edges (measured on the waveform: 2.16 s, 3.25 s, 4.30 s,
    // 5.37 s).
    let near = |got: f64, want: f64| (got - want).abs() < 0.06;
    assert!(near(spans[4].end_s, 2.16), "{:?}", spans[4]);
    assert!(near(spans[5].start_s, 3.25), "{:?}", spans[5]);
    assert!(near(spans[6].end_s, 4.30), "{:?}", spans[6]);
    assert!(near(spans[7].start_s, 5.37), "{:?}", spans[7]);
}

#[test]
fn symbols_alone_are_refused_and_times_stay_inside_the_audio() {
    let aligner = aligner();
    let silence = vec![0.0f32; 16_000];
    assert!(matches!(
        aligner.align(&silence, &["—", "🙂"]),
        Err(caption_align::Error::NothingToAlign)
    ));
    assert!(aligner.align(&silence, &[]).unwrap().is_empty());
    // Whatever the search makes of words in a second of silence, it never places them outside.
    if let Ok(spans) = aligner.align(&silence, &["hello", "world"]) {
        assert!(
            spans
                .iter()
                .all(|s| 0.0 <= s.start_s && s.start_s <= s.end_s && s.end_s <= 1.0)
        );
    }
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/audio")
        .join(name)
}

#[test]
fn words_that_open_on_the_voice_are_told_from_those_that_do_not() {
    let aligner = aligner();
    // Vowels, nasals, liquids, glides and the "th" of "they"; a number by its spoken form
    // ("8" is "eight"), and a made-up word by the g2p network.
    for word in [
        "and",
        "In,",
        "they",
        "Mended",
        "long",
        "we",
        "8",
        "Oomphalor",
    ] {
        assert!(aligner.opens_on_voice(word), "{word}");
    }
    // Stops, "h", voiceless fricatives; "$25" is "twenty five dollars"; nothing to say.
    for word in ["peppers", "to", "for", "his", "think", "$25", "—"] {
        assert!(!aligner.opens_on_voice(word), "{word}");
    }
}

#[test]
fn a_pause_token_gets_the_pause_between_its_words() {
    // Festival pauses at the comma; asked for, the pause is a span of its own between the
    // words around it, and the words keep their times. Where no pause was made, the pause
    // asked for still gets at least its 30 ms, between the two words.
    let dir = tempfile::tempdir().unwrap();
    let text = "we waited by the river, and then the boats came in";
    let (samples, truth) = festival(text, "slt", dir.path());
    let mut words: Vec<&str> = text.split_whitespace().collect();
    words.insert(5, caption_align::PAUSE);
    let spans = aligner().align(&samples, &words).unwrap();
    assert_eq!(spans.len(), truth.len() + 1);
    let pause = spans[5];
    assert!(pause.end_s - pause.start_s >= 0.05, "{pause:?}");
    assert!(spans[4].end_s <= pause.start_s && pause.end_s <= spans[6].start_s);
    let mut word_spans = spans.clone();
    word_spans.remove(5);
    let (mean, within) = boundary_errors(&truth, &word_spans);
    assert!(
        mean <= 0.03 && within >= 0.85,
        "mean {mean:.3}, {within:.2}"
    );
    let mut forced: Vec<&str> = text.split_whitespace().collect();
    forced.insert(8, caption_align::PAUSE);
    let spans = aligner().align(&samples, &forced).unwrap();
    assert!(spans[8].end_s - spans[8].start_s >= 0.03 - 1e-9);
    assert!(spans[7].end_s <= spans[8].start_s && spans[8].end_s <= spans[9].start_s);
}

fn espeak_us(text: &str, dir: &Path) -> Vec<f32> {
    let wav = dir.join("espeak.wav");
    caption_testkit::media::espeak_voice_wav(&wav, "en-us", 175, text).unwrap();
    let resampled = dir.join("espeak-16k.wav");
    caption_testkit::speech::resample_16k(&wav, &resampled).unwrap();
    to_f32(&read_wav_16k(&resampled).unwrap())
}

#[test]
fn a_maybe_pause_keeps_a_misheard_words_neighbours_on_their_own_sound() {
    // "bicycle" heard as "medical" (as whisper tiny.en hears espeak-ng say it): the same
    // length, but not its sounds. Aligned as heard, "a" stretches over the "bi" it cannot
    // match; with a pause allowed before the misheard word, the unmatched sound goes to the
    // pause and every other word keeps the span it has with the true text. Before a word that
    // was heard right the allowed pause is not taken.
    let dir = tempfile::tempdir().unwrap();
    let samples = espeak_us(
        "After a long debate, they agreed to fund a bicycle path and a community garden.",
        dir.path(),
    );
    let aligner = aligner();
    let said = "after a long debate they agreed to fund a bicycle path and a community garden";
    let said: Vec<&str> = said.split_whitespace().collect();
    let truth = aligner.align(&samples, &said).unwrap();
    let mut heard = said.clone();
    heard[9] = "medical";
    let as_heard = aligner.align(&samples, &heard).unwrap();
    assert!(
        as_heard[8].end_s - truth[8].end_s > 0.06,
        "the misheard word pulls \"a\" over its sound: {:?} against {:?}",
        as_heard[8],
        truth[8]
    );

    let mut with_room = heard.clone();
    with_room.insert(9, caption_align::MAYBE_PAUSE);
    let spans = aligner.align(&samples, &with_room).unwrap();
    assert_eq!(spans.len(), with_room.len());
    let pause = spans[9];
    assert!(pause.end_s - pause.start_s >= 0.03, "{pause:?}");
    assert!(spans[8].end_s <= pause.start_s && pause.end_s <= spans[10].start_s);
    let mut words = spans.clone();
    words.remove(9);
    for (i, (got, want)) in words.iter().zip(&truth).enumerate() {
        if i != 9 {
            assert!(
                (got.start_s - want.start_s).abs() <= 0.01
                    && (got.end_s - want.end_s).abs() <= 0.01,
                "{}: {got:?} against {want:?}",
                said[i]
            );
        }
    }

    let mut right_with_room = said.clone();
    right_with_room.insert(9, caption_align::MAYBE_PAUSE);
    let spans = aligner.align(&samples, &right_with_room).unwrap();
    assert_eq!(
        spans[9].start_s, spans[9].end_s,
        "no pause taken: {:?}",
        spans[9]
    );
    let mut words = spans.clone();
    words.remove(9);
    assert_eq!(words, truth);
}
