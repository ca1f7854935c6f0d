//! Words to speakers: the words cut into segments at pauses (and every few seconds of unbroken
//! speech), each segment's voice embedded, the segments clustered. A segment is whole words, so
//! the speaker changes between two words, never inside one.

use caption_core::SpeakerCount;
use caption_core::rules::MAX_SPEAKERS;
use rayon::prelude::*;

use crate::cluster::{self, Segment};
use crate::encoder::{PARTIAL_SAMPLES, VoiceEncoder};
use crate::error::{Error, Result};
use crate::mel::SAMPLE_RATE_HZ;

/// A pause at least this long (seconds) between two words may be a change of speaker.
const TURN_GAP_S: f64 = 0.25;
/// Unbroken speech is cut into segments no longer than this (seconds), at word edges, so that
/// a change of speaker without a pause costs at most one segment.
const MAX_SEGMENT_S: f64 = 3.0;

/// A word's time in the audio, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordSpan {
    /// Where the word starts.
    pub start_s: f64,
    /// Where it ends.
    pub end_s: f64,
}

/// Tells speakers apart with a [`VoiceEncoder`].
#[derive(Debug)]
pub struct Diarizer {
    encoder: VoiceEncoder,
}

impl Diarizer {
    /// A diarizer over `encoder`.
    pub fn new(encoder: VoiceEncoder) -> Self {
        Self { encoder }
    }

    /// A diarizer over the installed encoder ([`VoiceEncoder::open_installed`]).
    pub fn open_installed() -> Result<Self> {
        VoiceEncoder::open_installed().map(Self::new)
    }

    /// The encoder it embeds voices with.
    pub fn encoder(&self) -> &VoiceEncoder {
        &self.encoder
    }

    /// Each word's speaker (0, 1, … in order of first speech) in `samples` (16 kHz mono),
    /// `words` in the order spoken. Words with the same speaker between two pauses stay
    /// together.
    pub fn speakers(
        &self,
        samples: &[f32],
        words: &[WordSpan],
        count: SpeakerCount,
    ) -> Result<Vec<usize>> {
        for (index, w) in words.iter().enumerate() {
            if !(w.start_s.is_finite()
                && w.end_s.is_finite()
                && 0.0 <= w.start_s
                && w.start_s <= w.end_s)
            {
                return Err(Error::BadSpan {
                    index,
                    start_s: w.start_s,
                    end_s: w.end_s,
                });
            }
        }
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let runs = segments(words);
        let embedded: Vec<Segment> = runs
            .par_iter()
            .map(|run| {
                let (start_s, end_s) = (words[run.start].start_s, words[run.end - 1].end_s);
                let at = |t: f64| ((t * SAMPLE_RATE_HZ as f64) as usize).min(samples.len());
                let audio = tiled(&samples[at(start_s)..at(end_s).max(at(start_s))]);
                Segment {
                    embedding: self.encoder.embed_utterance(&audio),
                    duration_s: end_s - start_s,
                }
            })
            .collect();
        let count = match count {
            SpeakerCount::Auto => cluster::estimate_count(&embedded, usize::from(MAX_SPEAKERS)),
            SpeakerCount::Exactly(n) => usize::from(n.clamp(1, MAX_SPEAKERS)),
        };
        let labels = cluster::cluster(&embedded, count);
        tracing::debug!(
            segments = runs.len(),
            speakers = count,
            "speakers told apart"
        );
        let mut by_word = vec![0; words.len()];
        for (run, &label) in runs.iter().zip(&labels) {
            by_word[run.clone()].fill(label);
        }
        Ok(in_order_of_first_speech(&by_word))
    }
}

/// Runs of words: a new run after a pause of [`TURN_GAP_S`], or where the run would grow past
/// [`MAX_SEGMENT_S`].
fn segments(words: &[WordSpan]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..words.len() {
        let pause = words[i].start_s - words[i - 1].end_s >= TURN_GAP_S;
        let long = words[i].end_s - words[start].start_s > MAX_SEGMENT_S;
        if pause || long {
            runs.push(start..i);
            start = i;
        }
    }
    runs.push(start..words.len());
    runs
}

/// `audio` repeated to fill at least one partial of the encoder. resemblyzer pads a short
/// utterance with silence, which pulls the embeddings of all short segments towards one
/// another, whoever speaks: on two-voice dialogues the short turns of one voice became a third
/// speaker. Repeated speech keeps the voice alone in the window.
fn tiled(audio: &[f32]) -> Vec<f32> {
    if audio.is_empty() {
        return Vec::new();
    }
    let len = audio.len().max(PARTIAL_SAMPLES);
    audio.iter().copied().cycle().take(len).collect()
}

/// Labels renumbered 0, 1, … in order of first appearance.
fn in_order_of_first_speech(labels: &[usize]) -> Vec<usize> {
    let mut seen: Vec<usize> = Vec::new();
    labels
        .iter()
        .map(|&l| {
            seen.iter().position(|&s| s == l).unwrap_or_else(|| {
                seen.push(l);
                seen.len() - 1
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start_s: f64, end_s: f64) -> WordSpan {
        WordSpan { start_s, end_s }
    }

    #[test]
    fn runs_break_at_pauses_and_length() {
        let words = [
            span(0.0, 0.4),
            span(0.4, 0.8),
            span(1.2, 1.5),
            span(1.5, 3.0),
            span(3.0, 4.6),
        ];
        assert_eq!(segments(&words), [0..2, 2..4, 4..5]);
    }

    #[test]
    fn first_speaker_is_zero() {
        assert_eq!(
            in_order_of_first_speech(&[2, 2, 0, 1, 0, 2]),
            [0, 0, 1, 2, 1, 0]
        );
    }
}
