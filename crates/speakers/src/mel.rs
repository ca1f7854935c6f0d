//! The voice encoder's front end: resemblyzer's `wav_to_mel_spectrogram`, which is librosa's
//! `feature.melspectrogram(sr=16000, n_fft=400, hop_length=160, n_mels=40)`: frames centred on
//! every 160th sample (the signal padded with 200 zeros each side), a periodic Hann window, the
//! power spectrum, Slaney mel filters from 0 to 8 kHz. Power, not its logarithm: the network
//! was trained on it.

/// Samples a second.
pub(crate) const SAMPLE_RATE_HZ: usize = 16_000;
/// Samples between two frames (10 ms).
pub(crate) const HOP: usize = 160;
/// Mel bands a frame has.
pub(crate) const N_MELS: usize = 40;
const N_FFT: usize = 400;
const N_FREQ: usize = N_FFT / 2 + 1;

/// The transform's tables, made once per encoder.
#[derive(Debug)]
pub(crate) struct MelFrontEnd {
    window: Vec<f32>,
    /// `cos` and `sin` of the DFT, `[N_FREQ][N_FFT]` each.
    cos: Vec<f32>,
    sin: Vec<f32>,
    /// Row-major `[N_MELS][N_FREQ]`.
    filters: Vec<f32>,
}

impl MelFrontEnd {
    pub(crate) fn new() -> Self {
        use std::f64::consts::TAU;
        let window = (0..N_FFT)
            .map(|n| (0.5 - 0.5 * (TAU * n as f64 / N_FFT as f64).cos()) as f32)
            .collect();
        let mut cos = vec![0f32; N_FREQ * N_FFT];
        let mut sin = vec![0f32; N_FREQ * N_FFT];
        for k in 0..N_FREQ {
            for n in 0..N_FFT {
                // The product modulo N_FFT keeps the angle small, so f64 stays exact enough.
                let angle = TAU * ((k * n) % N_FFT) as f64 / N_FFT as f64;
                cos[k * N_FFT + n] = angle.cos() as f32;
                sin[k * N_FFT + n] = angle.sin() as f32;
            }
        }
        Self {
            window,
            cos,
            sin,
            filters: slaney_filters(),
        }
    }

    /// `1 + samples.len() / HOP` frames of `N_MELS` band powers, row-major.
    pub(crate) fn frames(&self, samples: &[f32]) -> Vec<f32> {
        let n_frames = 1 + samples.len() / HOP;
        let mut padded = vec![0f32; samples.len() + N_FFT];
        padded[N_FFT / 2..N_FFT / 2 + samples.len()].copy_from_slice(samples);
        let mut out = vec![0f32; n_frames * N_MELS];
        let mut frame = [0f32; N_FFT];
        let mut power = [0f32; N_FREQ];
        for (i, mel) in out.chunks_exact_mut(N_MELS).enumerate() {
            let start = i * HOP;
            for ((f, &x), &w) in frame
                .iter_mut()
                .zip(&padded[start..start + N_FFT])
                .zip(&self.window)
            {
                *f = x * w;
            }
            for (k, p) in power.iter_mut().enumerate() {
                let re = dot(&frame, &self.cos[k * N_FFT..(k + 1) * N_FFT]);
                let im = dot(&frame, &self.sin[k * N_FFT..(k + 1) * N_FFT]);
                *p = re * re + im * im;
            }
            for (m, value) in mel.iter_mut().enumerate() {
                *value = dot(&power, &self.filters[m * N_FREQ..(m + 1) * N_FREQ]);
            }
        }
        out
    }
}

/// The dot product, in eight lanes the compiler turns into vector instructions.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len().min(b.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

/// librosa's `filters.mel(sr=16000, n_fft=400, n_mels=40)`: Slaney's mel scale (linear below
/// 1 kHz, logarithmic above) and Slaney's area normalisation.
fn slaney_filters() -> Vec<f32> {
    const F_SP: f64 = 200.0 / 3.0;
    const MIN_LOG_HZ: f64 = 1000.0;
    let log_step = 6.4f64.ln() / 27.0;
    let to_mel = |hz: f64| {
        if hz >= MIN_LOG_HZ {
            MIN_LOG_HZ / F_SP + (hz / MIN_LOG_HZ).ln() / log_step
        } else {
            hz / F_SP
        }
    };
    let to_hz = |mel: f64| {
        if mel >= MIN_LOG_HZ / F_SP {
            MIN_LOG_HZ * (log_step * (mel - MIN_LOG_HZ / F_SP)).exp()
        } else {
            F_SP * mel
        }
    };
    let nyquist_hz = SAMPLE_RATE_HZ as f64 / 2.0;
    let top = to_mel(nyquist_hz);
    let edges: Vec<f64> = (0..N_MELS + 2)
        .map(|i| to_hz(top * i as f64 / (N_MELS + 1) as f64))
        .collect();
    let mut filters = vec![0f32; N_MELS * N_FREQ];
    for (m, row) in filters.chunks_exact_mut(N_FREQ).enumerate() {
        let (lo, mid, hi) = (edges[m], edges[m + 1], edges[m + 2]);
        let area = 2.0 / (hi - lo);
        for (k, weight) in row.iter_mut().enumerate() {
            let hz = k as f64 * nyquist_hz / (N_FREQ - 1) as f64;
            let rise = (hz - lo) / (mid - lo);
            let fall = (hi - hz) / (hi - mid);
            *weight = (rise.min(fall).max(0.0) * area) as f32;
        }
    }
    filters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tone_lands_in_its_band() {
        let front = MelFrontEnd::new();
        let tone: Vec<f32> = (0..SAMPLE_RATE_HZ)
            .map(|n| (std::f32::consts::TAU * 1000.0 * n as f32 / SAMPLE_RATE_HZ as f32).sin())
            .collect();
        let frames = front.frames(&tone);
        assert_eq!(frames.len(), 101 * N_MELS);
        let middle = &frames[50 * N_MELS..51 * N_MELS];
        let loudest = (0..N_MELS)
            .max_by(|&a, &b| middle[a].total_cmp(&middle[b]))
            .unwrap_or_default();
        // 1 kHz is FFT bin 25, whose heaviest filter is band 13 (librosa's filters say so).
        assert_eq!(loudest, 13, "{middle:?}");
    }

    #[test]
    fn filters_match_librosa() {
        // librosa 0.11 `filters.mel(sr=16000, n_fft=400, n_mels=40)` at three places.
        let filters = slaney_filters();
        for (band, bin, librosa) in [
            (0, 1, 0.007_390_209_5),
            (13, 25, 0.007_438_048_3),
            (39, 195, 0.000_607_577),
        ] {
            let ours = filters[band * N_FREQ + bin];
            assert!(
                (ours - librosa).abs() < 1e-8,
                "band {band} bin {bin}: {ours}"
            );
        }
    }
}
