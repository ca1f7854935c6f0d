//! Word times from a forced aligner, after whisper decided the words.
//!
//! DTW's boundaries are off by 80-100 ms on connected speech; an acoustic model that knows which
//! words were said puts them within a few tens of milliseconds. The words of a piece are cut into
//! groups at real pauses (where the snap onto the signal found silence between two words), each
//! group is aligned on its own audio with a little of the surrounding silence, and a group whose
//! alignment fails keeps the times it had: a transcription never fails because alignment did.

use caption_align::Aligner;
use caption_core::Word;

use crate::speech::SAMPLE_RATE_HZ;

/// A silence at least this long between two words separates alignment groups.
const GROUP_PAUSE_S: f64 = 0.25;
/// Audio kept before a group's first and after its last word (at most half the pause).
const GROUP_MARGIN_S: f64 = 0.25;
/// Groups are not allowed to grow beyond this (the aligner's search is linear in length, but
/// failures cost the whole group).
const MAX_GROUP_S: f64 = 20.0;

/// Replaces the times of `words` (already in time order, covering `samples` from `0`) by the
/// aligner's, group by group. Returns how many groups fell back to the old times.
pub(crate) fn refine(aligner: &Aligner, samples: &[f32], words: &mut [Word]) -> usize {
    let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
    let mut failed = 0;
    for group in groups(words) {
        let first = &words[group.start];
        let last = &words[group.end - 1];
        let before_s = if group.start == 0 {
            first.start
        } else {
            first.start - words[group.start - 1].end
        };
        let after_s = if group.end == words.len() {
            total_s - last.end
        } else {
            words[group.end].start - last.end
        };
        let from_s = (first.start - GROUP_MARGIN_S.min(before_s / 2.0)).max(0.0);
        let to_s = (last.end + GROUP_MARGIN_S.min(after_s / 2.0)).min(total_s);
        let at = |t: f64| ((t * SAMPLE_RATE_HZ as f64).round() as usize).min(samples.len());
        let audio = &samples[at(from_s)..at(to_s)];
        let texts: Vec<&str> = words[group.clone()]
            .iter()
            .map(|w| w.punctuated_word.as_str())
            .collect();
        match aligner.align(audio, &texts) {
            Ok(spans) => {
                for (word, span) in words[group.clone()].iter_mut().zip(spans) {
                    word.start = round_ms(from_s + span.start_s);
                    word.end = round_ms(from_s + span.end_s);
                }
            }
            Err(error) => {
                failed += 1;
                tracing::debug!(%error, words = ?texts, "alignment failed; keeping DTW times");
            }
        }
    }
    failed
}

fn round_ms(t_s: f64) -> f64 {
    (t_s * 1000.0).round() / 1000.0
}

/// Ranges of words between pauses of at least [`GROUP_PAUSE_S`], each at most [`MAX_GROUP_S`]
/// long when a pause allows.
fn groups(words: &[Word]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=words.len() {
        let at_end = i == words.len();
        let cut = at_end || {
            let pause_s = words[i].start - words[i - 1].end;
            pause_s >= GROUP_PAUSE_S
                || (words[i].end - words[start].start > MAX_GROUP_S && pause_s > 0.0)
        };
        if cut {
            out.push(start..i);
            start = i;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(start: f64, end: f64) -> Word {
        Word {
            start,
            end,
            word: "w".into(),
            punctuated_word: "w".into(),
            emoji: None,
        }
    }

    #[test]
    fn groups_break_at_pauses() {
        let words = [
            word(0.0, 0.3),
            word(0.3, 0.6),
            word(1.0, 1.2),
            word(1.3, 1.5),
            word(1.5, 1.9),
        ];
        assert_eq!(groups(&words), vec![0..2, 2..5]);
        assert_eq!(groups(&[]), Vec::<std::ops::Range<usize>>::new());
    }
}
