//! Speakers told apart on real synthetic speech: dialogues of espeak-ng and Festival voices,
//! clean and under a music bed, every word's speaker known. Diarization error rate by words:
//! the share of words whose speaker differs from the truth under the best matching of labels.

use caption_speakers::{Diarizer, SpeakerCount, WordSpan};
use caption_testkit::dialogue::{Conversation, Voice, conversation, speaker_error_rate};

struct Heard {
    error_rate: f64,
    speakers_found: usize,
}

/// Speaks `voices` taking turns over `turns` lines, optionally under a music bed `snr_db` under
/// the speech, and diarizes it with `count`.
fn diarize(
    voices: &[Voice],
    turns: usize,
    music_snr_db: Option<f64>,
    count: SpeakerCount,
) -> anyhow::Result<Heard> {
    let Conversation {
        samples,
        words: truth,
    } = conversation(voices, turns, music_snr_db)?;
    let spans: Vec<WordSpan> = truth
        .iter()
        .map(|w| WordSpan {
            start_s: w.start_s,
            end_s: w.end_s,
        })
        .collect();
    let labels = Diarizer::open_installed()?.speakers(&samples, &spans, count)?;
    Ok(Heard {
        error_rate: speaker_error_rate(&truth, &labels),
        speakers_found: labels.iter().max().map_or(0, |m| m + 1),
    })
}

const ESPEAK_PAIR: [Voice; 2] = [Voice::Espeak("en-us"), Voice::Espeak("en-gb+f3")];
const FESTIVAL_PAIR: [Voice; 2] = [Voice::Festival("slt"), Voice::Festival("kal")];
const TRIO: [Voice; 3] = [
    Voice::Festival("slt"),
    Voice::Espeak("en-us"),
    Voice::Festival("kal"),
];

fn check(name: &str, heard: &Heard, voices: usize, max_error: f64) {
    eprintln!(
        "{name}: {:.1} % of words wrong, {} speakers found",
        100.0 * heard.error_rate,
        heard.speakers_found
    );
    assert!(
        heard.error_rate <= max_error,
        "{name}: {:.3} of words wrong",
        heard.error_rate
    );
    assert_eq!(heard.speakers_found, voices, "{name}: speakers found");
}

#[test]
fn two_espeak_voices() -> anyhow::Result<()> {
    let heard = diarize(&ESPEAK_PAIR, 8, None, SpeakerCount::Auto)?;
    check("espeak pair", &heard, 2, 0.05);
    Ok(())
}

#[test]
fn two_espeak_voices_under_music() -> anyhow::Result<()> {
    let heard = diarize(&ESPEAK_PAIR, 8, Some(10.0), SpeakerCount::Auto)?;
    check("espeak pair, music", &heard, 2, 0.05);
    Ok(())
}

#[test]
fn two_festival_voices() -> anyhow::Result<()> {
    let heard = diarize(&FESTIVAL_PAIR, 6, None, SpeakerCount::Auto)?;
    check("festival pair", &heard, 2, 0.05);
    Ok(())
}

#[test]
fn two_festival_voices_under_music() -> anyhow::Result<()> {
    let heard = diarize(&FESTIVAL_PAIR, 6, Some(10.0), SpeakerCount::Auto)?;
    check("festival pair, music", &heard, 2, 0.05);
    Ok(())
}

#[test]
fn three_voices() -> anyhow::Result<()> {
    let heard = diarize(&TRIO, 9, None, SpeakerCount::Auto)?;
    check("trio", &heard, 3, 0.10);
    Ok(())
}

#[test]
fn three_voices_given_the_count() -> anyhow::Result<()> {
    let heard = diarize(&TRIO, 9, Some(10.0), SpeakerCount::Exactly(3))?;
    check("trio, music, 3 given", &heard, 3, 0.10);
    Ok(())
}

#[test]
fn one_voice_is_one_speaker() -> anyhow::Result<()> {
    for voice in [Voice::Festival("slt"), Voice::Espeak("en-us")] {
        let heard = diarize(&[voice], 6, None, SpeakerCount::Auto)?;
        check(&format!("{voice:?} alone"), &heard, 1, 0.0);
    }
    Ok(())
}

#[test]
fn a_short_exchange_is_two_speakers() -> anyhow::Result<()> {
    // Two turns, about 8 s: few segments, each of which alone would fit a centroid perfectly.
    let voices = [Voice::Festival("slt"), Voice::Espeak("en-us")];
    let heard = diarize(&voices, 2, None, SpeakerCount::Auto)?;
    check("short exchange", &heard, 2, 0.05);
    Ok(())
}
