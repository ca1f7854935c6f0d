//! Where the signal itself has speech: an amplitude gate on 1 ms blocks.
//!
//! Word edges are snapped to these regions, and audio without any region is never shown to the
//! model (whisper invents words on silence). The gate is relative to the recording's own level
//! (a fraction of its loud peaks, and a margin over its noise floor) so that quiet and loud
//! recordings behave alike.

/// Samples per second of every input.
pub(crate) const SAMPLE_RATE_HZ: usize = 16_000;
const BLOCK_SAMPLES: usize = SAMPLE_RATE_HZ / 1000;
const BLOCK_S: f64 = BLOCK_SAMPLES as f64 / SAMPLE_RATE_HZ as f64;

/// A stretch of speech (or other sound) in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Region {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
}

impl Region {
    pub(crate) fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// Tuning of [`speech_regions`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct GateParams {
    /// Gate as a fraction of the loud-peak level (the 99.5th percentile of block peaks).
    pub(crate) peak_fraction: f32,
    /// Gate as a multiple of the noise floor (the 10th percentile of block peaks).
    pub(crate) floor_multiple: f32,
    /// Nothing quieter than this counts as sound (about -66 dBFS).
    pub(crate) absolute_min: f32,
    /// Silences shorter than this inside sound are bridged.
    pub(crate) bridge_s: f64,
    /// Sounds shorter than this are dropped (clicks).
    pub(crate) min_sound_s: f64,
}

impl Default for GateParams {
    fn default() -> Self {
        Self {
            peak_fraction: 0.015,
            floor_multiple: 4.0,
            absolute_min: 5e-4,
            bridge_s: 0.02,
            min_sound_s: 0.02,
        }
    }
}

fn percentile(sorted: &[f32], fraction: f64) -> f32 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() - 1) as f64 * fraction).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// The sound regions of 16 kHz mono `samples`, in time order, never overlapping.
pub(crate) fn speech_regions(samples: &[f32], params: &GateParams) -> Vec<Region> {
    let peaks: Vec<f32> = samples
        .chunks(BLOCK_SAMPLES)
        .map(|block| block.iter().fold(0f32, |m, &x| m.max(x.abs())))
        .collect();
    let mut sorted = peaks.clone();
    sorted.sort_unstable_by(f32::total_cmp);
    let loud = percentile(&sorted, 0.995);
    let floor = percentile(&sorted, 0.10);
    let gate = (loud * params.peak_fraction)
        .max(floor * params.floor_multiple)
        .max(params.absolute_min);

    let bridge_blocks = (params.bridge_s / BLOCK_S).round() as usize;
    let mut regions: Vec<(usize, usize)> = Vec::new();
    for (i, _) in peaks.iter().enumerate().filter(|&(_, &p)| p >= gate) {
        match regions.last_mut() {
            Some((_, end)) if i <= *end + bridge_blocks => *end = i + 1,
            _ => regions.push((i, i + 1)),
        }
    }
    let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
    regions
        .into_iter()
        .map(|(a, b)| Region {
            start_s: a as f64 * BLOCK_S,
            end_s: (b as f64 * BLOCK_S).min(total_s),
        })
        .filter(|r| r.duration_s() >= params.min_sound_s)
        .collect()
}

/// Millisecond precision: finer than any boundary is known, and stable in JSON.
pub(crate) fn round_ms(t_s: f64) -> f64 {
    (t_s * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(seconds: f64, amplitude: f32) -> Vec<f32> {
        let n = (seconds * SAMPLE_RATE_HZ as f64) as usize;
        (0..n).map(|i| amplitude * (i as f32 * 0.3).sin()).collect()
    }

    #[test]
    fn silence_has_no_regions() {
        assert!(speech_regions(&vec![0.0; 16_000 * 20], &GateParams::default()).is_empty());
        let hiss: Vec<f32> = (0..16_000 * 5)
            .map(|i| 1e-4 * ((i * 7919 % 101) as f32 / 50.0 - 1.0))
            .collect();
        assert!(speech_regions(&hiss, &GateParams::default()).is_empty());
    }

    #[test]
    fn finds_tone_bursts_to_the_millisecond() {
        let mut audio = vec![0.0; 8000];
        audio.extend(tone(0.3, 0.5));
        audio.extend(vec![0.0; 800]);
        audio.extend(tone(0.2, 0.05));
        audio.extend(vec![0.0; 4000]);
        let regions = speech_regions(&audio, &GateParams::default());
        assert_eq!(regions.len(), 2, "{regions:?}");
        assert!((regions[0].start_s - 0.5).abs() <= 0.001, "{regions:?}");
        assert!((regions[0].end_s - 0.8).abs() <= 0.001, "{regions:?}");
        assert!((regions[1].start_s - 0.85).abs() <= 0.001, "{regions:?}");
        assert!((regions[1].end_s - 1.05).abs() <= 0.001, "{regions:?}");
    }
}
