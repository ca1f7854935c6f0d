//! Held notes shortened to a spoken vowel's length before a song is aligned, and the times
//! found on the shortened audio put back on the song's.
//!
//! A note held on a vowel is many times longer than the acoustic model, trained on read
//! speech, lets a vowel be; and a held vowel does not change, so that its features' deltas are
//! those of silence. The aligner took the held part of a note for a pause: "of the night", sung
//! over four seconds, was put inside a third of a second before them, and words after a held
//! note started late. Cut to its onset and its end, the note is a spoken vowel again.

use std::ops::Range;

use crate::SAMPLE_RATE_HZ;
use crate::pitch::Pitch;

/// Kept of a held note at each end, seconds: the vowel's onset after the consonant before it,
/// and its end before the next. Measured on the bench's tuning songs, lines aligned on their
/// own with a song's pause cost (onsets within 0.3 s / mean error): nothing cut 86 % / 0.17 s,
/// 0.2 s kept 91 % / 0.13 s, 0.12 s 92 % / 0.11 s, 0.08 s 93 % / 0.09 s, 0.05 s 95 % / 0.07 s.
const KEEP_S: f64 = 0.05;
/// A note is cut only where this much would go, seconds.
const MIN_CUT_S: f64 = 0.05;

/// Audio with the middle of its held notes cut out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Squeezed {
    /// The audio kept, joined.
    pub(crate) samples: Vec<f32>,
    /// Each piece kept: where it starts in the joined samples and in the audio, seconds.
    pieces: Vec<(f64, f64)>,
}

impl Squeezed {
    /// `samples` (16 kHz) without the middle of each of its held notes ([`Pitch::held_notes`]).
    pub(crate) fn new(samples: &[f32]) -> Self {
        let notes = Pitch::track(samples).held_notes();
        Self::cut(samples, &notes)
    }

    /// `samples` without the middle of each of `notes` (seconds, in time order).
    fn cut(samples: &[f32], notes: &[Range<f64>]) -> Self {
        let rate = f64::from(SAMPLE_RATE_HZ);
        let index = |t: f64| ((t * rate).round().max(0.0) as usize).min(samples.len());
        let mut kept = Vec::with_capacity(samples.len());
        let mut pieces = vec![(0.0, 0.0)];
        let mut from = 0;
        for note in notes {
            let (cut_from, cut_to) = (index(note.start + KEEP_S), index(note.end - KEEP_S));
            if cut_from < from || cut_to < cut_from + index(MIN_CUT_S) {
                continue;
            }
            kept.extend_from_slice(&samples[from..cut_from]);
            pieces.push((kept.len() as f64 / rate, cut_to as f64 / rate));
            from = cut_to;
        }
        kept.extend_from_slice(&samples[from..]);
        Self {
            samples: kept,
            pieces,
        }
    }

    /// The audio's time for `t_s` of the joined samples: a time at a cut is the end of the
    /// note's onset when it is a word's end (`ending`), else the start of the note's end.
    pub(crate) fn original_s(&self, t_s: f64, ending: bool) -> f64 {
        let k = if ending {
            self.pieces.partition_point(|&(at_s, _)| at_s < t_s)
        } else {
            self.pieces.partition_point(|&(at_s, _)| at_s <= t_s)
        }
        .saturating_sub(1);
        let (at_s, from_s) = self.pieces[k];
        from_s + (t_s - at_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_notes_lose_their_middle_and_times_map_back() {
        let samples: Vec<f32> = (0..16_000 * 4).map(|i| i as f32).collect();
        // A note from 1 to 2 s, one too short to cut, one from 2.5 to 3.5 s.
        let squeezed = Squeezed::cut(&samples, &[1.0..2.0, 2.2..2.3, 2.5..3.5]);
        // 0.9 s of each long note goes.
        assert_eq!(squeezed.samples.len(), 16_000 * 22 / 10);
        assert!((squeezed.original_s(0.5, false) - 0.5).abs() < 1e-9);
        // The cut of the first note: at 1.05 s of the joined samples.
        assert!((squeezed.original_s(1.05, true) - 1.05).abs() < 1e-9);
        assert!((squeezed.original_s(1.05, false) - 1.95).abs() < 1e-9);
        assert!((squeezed.original_s(1.2, false) - 2.1).abs() < 1e-9);
        // After both cuts.
        assert!((squeezed.original_s(2.1, false) - 3.9).abs() < 1e-9);
    }
}
