//! A voice's pitch: where the sound is periodic (YIN's cumulative mean normalised difference),
//! at what fundamental, and where it holds a note.
//!
//! A held note is the easiest thing there is for a pitch tracker: one period, repeated for a
//! second or more. Held notes tell singing from speech (sung notes hold one pitch for a quarter
//! of a second and more, where speech glides all the time), and they are what the aligner
//! shortens before it aligns a song ([`crate::LanguageAligner::sung`]).

use std::ops::Range;

use crate::SAMPLE_RATE_HZ;

const SAMPLE_RATE: usize = SAMPLE_RATE_HZ as usize;

/// Frames of the track: 10 ms apart (the aligner's frame rate).
pub const PITCH_HOP_S: f64 = 0.01;
const HOP_S: f64 = PITCH_HOP_S;
/// The track runs on the input taken down to 8 kHz (pairs of samples averaged): a voice's
/// fundamental is far below 4 kHz, and the difference function costs a quarter.
const RATE_HZ: usize = SAMPLE_RATE / 2;
/// Samples compared at each lag: 30 ms, two periods of the lowest fundamental.
const WINDOW: usize = RATE_HZ * 3 / 100;
/// Lowest and highest fundamental looked for, Hz: a bass's low notes to a soprano's high.
const MIN_F0_HZ: f64 = 70.0;
const MAX_F0_HZ: f64 = 800.0;
/// A frame is periodic when its normalised difference dips under this at some lag (YIN's
/// absolute threshold; 0.1-0.2 on clean speech, higher to keep a voice over a music bed).
const PERIODIC_BELOW: f32 = 0.3;

/// One 10 ms frame of the track.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Frame {
    /// The fundamental, Hz, when the frame is periodic.
    f0_hz: Option<f32>,
    /// The power of the frame's window, dB.
    level_db: f32,
}

/// The pitch track of an input: one frame every [`PITCH_HOP_S`], the first centred on its
/// first sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Pitch {
    frames: Vec<Frame>,
}

impl Pitch {
    /// Tracks the pitch of 16 kHz mono `samples` (a few milliseconds a second of audio).
    pub fn track(samples: &[f32]) -> Self {
        Self {
            frames: track(samples),
        }
    }

    /// The held notes (seconds, in time order): stretches of at least a quarter of a second
    /// of periodic frames whose pitch ranges over at most a semitone.
    pub fn held_notes(&self) -> Vec<Range<f64>> {
        held_notes(&self.frames)
    }

    /// The runs of at least `min_s` of periodic frames, whatever their pitch does (seconds,
    /// in time order): a voice's short sung notes and voiced consonants as well as its held
    /// ones.
    pub fn periodic_runs(&self, min_s: f64) -> Vec<Range<f64>> {
        let min_frames = (min_s / HOP_S).round() as usize;
        let mut runs = Vec::new();
        let mut start = None;
        for (k, frame) in self.frames.iter().enumerate() {
            match (frame.f0_hz, start) {
                (Some(_), None) => start = Some(k),
                (None, Some(first)) => {
                    if k - first >= min_frames {
                        runs.push(first as f64 * HOP_S..k as f64 * HOP_S);
                    }
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(first) = start.filter(|&first| self.frames.len() - first >= min_frames) {
            runs.push(first as f64 * HOP_S..self.frames.len() as f64 * HOP_S);
        }
        runs
    }
}

fn track(samples: &[f32]) -> Vec<Frame> {
    let low: Vec<f32> = samples
        .chunks(2)
        .map(|pair| pair.iter().sum::<f32>() / pair.len() as f32)
        .collect();
    let min_lag = (RATE_HZ as f64 / MAX_F0_HZ).floor() as usize;
    let max_lag = (RATE_HZ as f64 / MIN_F0_HZ).ceil() as usize;
    let hop = (HOP_S * RATE_HZ as f64).round() as usize;
    let frames = samples.len().div_ceil(SAMPLE_RATE / 100);
    let mut difference = vec![0f32; max_lag + 1];
    (0..frames)
        .map(|k| {
            let start = (k * hop).saturating_sub(WINDOW / 2);
            if start + WINDOW + max_lag > low.len() {
                return Frame {
                    f0_hz: None,
                    level_db: f32::NEG_INFINITY,
                };
            }
            let x = &low[start..start + WINDOW + max_lag];
            // Silence is not periodic, whatever its rounding noise does.
            let energy: f32 = x[..WINDOW].iter().map(|v| v * v).sum();
            let level_db = 10.0 * (energy / WINDOW as f32).max(1e-12).log10();
            if energy < 1e-6 * WINDOW as f32 {
                return Frame {
                    f0_hz: None,
                    level_db,
                };
            }
            for (lag, d) in difference.iter_mut().enumerate().skip(1) {
                *d = x[..WINDOW]
                    .iter()
                    .zip(&x[lag..lag + WINDOW])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
            }
            Frame {
                f0_hz: best_lag(&difference, min_lag).map(|lag| RATE_HZ as f32 / lag),
                level_db,
            }
        })
        .collect()
}

/// The lag of a period in the difference function `d` (index = lag, `d[0]` unused): YIN's
/// first dip of the cumulative mean normalised difference under [`PERIODIC_BELOW`], from
/// `min_lag` on, refined to the bottom of the dip and by a parabola through its neighbours.
fn best_lag(d: &[f32], min_lag: usize) -> Option<f32> {
    let mut normalised = vec![1f32; d.len()];
    let mut running = 0f32;
    for lag in 1..d.len() {
        running += d[lag];
        normalised[lag] = if running > 0.0 {
            d[lag] * lag as f32 / running
        } else {
            1.0
        };
    }
    let mut lag = (min_lag.max(1)..d.len()).find(|&l| normalised[l] < PERIODIC_BELOW)?;
    while lag + 1 < d.len() && normalised[lag + 1] < normalised[lag] {
        lag += 1;
    }
    if lag + 1 >= d.len() {
        return None;
    }
    let (a, b, c) = (normalised[lag - 1], normalised[lag], normalised[lag + 1]);
    let bend = a - 2.0 * b + c;
    let shift = if bend > 0.0 {
        0.5 * (a - c) / bend
    } else {
        0.0
    };
    Some(lag as f32 + shift.clamp(-0.5, 0.5))
}

/// Semitones between two frequencies.
fn semitones(a_hz: f32, b_hz: f32) -> f32 {
    12.0 * (a_hz / b_hz).log2().abs()
}

/// A held note: at least this long on one pitch.
const NOTE_MIN_S: f64 = 0.25;
/// How far a held note's pitch may range, semitones: a sung note's vibrato swings about a
/// semitone. A reference that followed the pitch slowly (a running mean) let the glides of
/// read speech pass for notes (a fifth of a Festival voice's voiced time).
const NOTE_RANGE_ST: f32 = 1.0;

/// A held note ends where the sound falls this far under its loudest, dB: a voice's note has
/// ended there, and a music bed's chord at about the same pitch goes on. Without it a note ran
/// on into the bed through the rest after a sung line, the aligner's cut took the rest out
/// with it, and the next line's first word was put in that rest.
const NOTE_FADE_DB: f32 = 6.0;

/// A held note goes on through frames the track finds no period in, up to this long, while
/// they are as loud as the note (see [`NOTE_FADE_DB`]): YIN loses a sung vowel for a frame or
/// two under a music bed or in its vibrato, and a note cut there was not shortened in full
/// before aligning (the part left was read as a pause, and the word after it started late).
/// Shorter than a consonant between two notes. Measured on the bench's tuning songs, lyrics
/// given (onsets within 0.3 s / mean onset error): no dropout 91.3 % / 0.114 s, 20 ms 92.1 % /
/// 0.103 s, 30 ms 92.4 % / 0.105 s, 50 ms 92.9 % / 0.095 s, 80 ms 92.9 % / 0.091 s, 120 ms
/// 92.7 % / 0.095 s; held out, 50 ms: 82.2 % / 0.195 s -> 86.7 % / 0.159 s.
const NOTE_DROPOUT_S: f64 = 0.05;

/// The held notes of `frames`: stretches of at least [`NOTE_MIN_S`] of periodic frames whose
/// pitch ranges over at most [`NOTE_RANGE_ST`], through dropouts of [`NOTE_DROPOUT_S`].
fn held_notes(frames: &[Frame]) -> Vec<Range<f64>> {
    let dropout_frames = (NOTE_DROPOUT_S / HOP_S).round() as usize;
    let min_frames = (NOTE_MIN_S / HOP_S).round() as usize;
    let mut notes = Vec::new();
    let mut run_start = 0;
    // Where the run ends (exclusive): after its last periodic frame.
    let mut run_end = 0;
    // The lowest and highest pitch of the run so far.
    let mut range: Option<(f32, f32)> = None;
    // The loudest frame of the run so far, dB.
    let mut loudest_db = f32::NEG_INFINITY;
    let close = |start: usize, end: usize, notes: &mut Vec<Range<f64>>| {
        if end > start && end - start >= min_frames {
            notes.push(start as f64 * HOP_S..end as f64 * HOP_S);
        }
    };
    for (k, frame) in frames.iter().enumerate() {
        match (frame.f0_hz, range) {
            (Some(f0), Some((low, high)))
                if semitones(high.max(f0), low.min(f0)) <= NOTE_RANGE_ST
                    && frame.level_db >= loudest_db - NOTE_FADE_DB =>
            {
                range = Some((low.min(f0), high.max(f0)));
                loudest_db = loudest_db.max(frame.level_db);
                run_end = k + 1;
            }
            // A frame the track could not read, inside a note still as loud.
            (None, Some(_))
                if k - run_end < dropout_frames && frame.level_db >= loudest_db - NOTE_FADE_DB => {}
            (f0, _) => {
                close(run_start, run_end, &mut notes);
                run_start = k;
                run_end = k + 1;
                range = f0.map(|f| (f, f));
                loudest_db = frame.level_db;
            }
        }
    }
    close(run_start, run_end, &mut notes);
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(f0_hz: f64, seconds: f64) -> Vec<f32> {
        let n = (seconds * SAMPLE_RATE as f64) as usize;
        (0..n)
            .map(|i| {
                let t = i as f64 / SAMPLE_RATE as f64;
                // A voice-like tone: a fundamental and two harmonics.
                let phase = std::f64::consts::TAU * f0_hz * t;
                (0.3 * phase.sin() + 0.2 * (2.0 * phase).sin() + 0.1 * (3.0 * phase).sin()) as f32
            })
            .collect()
    }

    #[test]
    fn a_held_tone_is_one_note_at_its_pitch() {
        let mut samples = vec![0.0; 8000];
        samples.extend(tone(147.0, 1.0));
        samples.extend(vec![0.0; 8000]);
        let frames = track(&samples);
        let f0s: Vec<f32> = frames.iter().filter_map(|f| f.f0_hz).collect();
        assert!(f0s.len() >= 90, "{} periodic frames", f0s.len());
        assert!(f0s.iter().all(|f| (f - 147.0).abs() < 3.0), "{f0s:?}");
        let notes = held_notes(&frames);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!((notes[0].start - 0.5).abs() < 0.03 && (notes[0].end - 1.5).abs() < 0.03);
    }

    /// As loud as [`tone`]'s, with no period: a fixed pseudo-random sequence.
    fn noise(seconds: f64) -> Vec<f32> {
        let mut state = 12345u32;
        (0..(seconds * SAMPLE_RATE as f64) as usize)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (f64::from(state >> 8) / f64::from(1u32 << 24) - 0.5) as f32 * 1.2
            })
            .collect()
    }

    #[test]
    fn a_note_holds_through_a_dropout_and_ends_at_a_consonant() {
        for (gap_s, notes_expected) in [(0.03, 1), (0.15, 2)] {
            let mut samples = vec![0.0; 8000];
            samples.extend(tone(147.0, 0.5));
            samples.extend(noise(gap_s));
            samples.extend(tone(147.0, 0.5));
            samples.extend(vec![0.0; 8000]);
            let frames = track(&samples);
            let unread = frames
                .iter()
                .filter(|f| f.f0_hz.is_none() && f.level_db > -20.0);
            assert!(unread.count() >= 2, "{gap_s} s of noise has no period");
            let notes = held_notes(&frames);
            assert_eq!(notes.len(), notes_expected, "{gap_s} s: {notes:?}");
            assert!((notes[0].start - 0.5).abs() < 0.03, "{notes:?}");
            let end = 1.5 + gap_s;
            assert!((notes[notes.len() - 1].end - end).abs() < 0.03, "{notes:?}");
        }
    }

    #[test]
    fn a_glide_is_one_periodic_run_and_no_held_note() {
        // A glide up a fifth, silence, a low tone, silence.
        let mut samples = vec![0.0; 8000];
        let mut phase = 0.0;
        samples.extend((0..4800).map(|i| {
            let f0_hz = 150.0 * 1.5f64.powf(f64::from(i) / 4800.0);
            phase += std::f64::consts::TAU * f0_hz / SAMPLE_RATE as f64;
            (0.3 * phase.sin() + 0.2 * (2.0 * phase).sin() + 0.1 * (3.0 * phase).sin()) as f32
        }));
        samples.extend(vec![0.0; 8000]);
        samples.extend(tone(120.0, 0.4));
        samples.extend(vec![0.0; 8000]);
        let pitch = Pitch::track(&samples);
        assert!(
            pitch.held_notes().iter().all(|n| n.start > 1.0),
            "{:?}",
            pitch.held_notes()
        );
        let runs = pitch.periodic_runs(0.1);
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert!((runs[0].start - 0.5).abs() < 0.03 && (runs[0].end - 0.8).abs() < 0.03);
        assert!((runs[1].start - 1.3).abs() < 0.03 && (runs[1].end - 1.7).abs() < 0.03);
        assert!(pitch.periodic_runs(0.5).is_empty());
    }
}
