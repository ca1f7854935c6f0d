//! The mel filterbank whisper.cpp expects in a model file.
//!
//! CTranslate2 model folders carry none (faster-whisper computes its own), so it is computed here
//! the way librosa's `filters.mel(sr=16000, n_fft=400, n_mels, norm="slaney")` does, including
//! its precision steps (float64 maths, a float32 store, then the float64 normalisation applied in
//! place), which reproduces OpenAI's `mel_filters.npz` for 80 mels.

pub(crate) const SAMPLE_RATE_HZ: f64 = 16_000.0;
pub(crate) const N_FFT: usize = 400;
/// Frequency bins of a real FFT of `N_FFT` samples.
pub(crate) const N_FREQ: usize = N_FFT / 2 + 1;

const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;
const MIN_LOG_MEL: f64 = MIN_LOG_HZ / F_SP;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

fn hz_to_mel(hz: f64) -> f64 {
    if hz >= MIN_LOG_HZ {
        MIN_LOG_MEL + (hz / MIN_LOG_HZ).ln() / log_step()
    } else {
        hz / F_SP
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    if mel >= MIN_LOG_MEL {
        MIN_LOG_HZ * (log_step() * (mel - MIN_LOG_MEL)).exp()
    } else {
        F_SP * mel
    }
}

/// Row-major `[n_mels][N_FREQ]` Slaney-normalised triangular filters from 0 to 8 kHz.
pub(crate) fn mel_filters(n_mels: usize) -> Vec<f32> {
    let fft_step_hz = 1.0 / (N_FFT as f64 * (1.0 / SAMPLE_RATE_HZ));
    let fft_freqs: Vec<f64> = (0..N_FREQ).map(|k| k as f64 * fft_step_hz).collect();

    // np.linspace(mel(0), mel(8000), n_mels + 2): i * step + start, the last point exactly `stop`.
    let n_points = n_mels + 2;
    let (mel_lo, mel_hi) = (hz_to_mel(0.0), hz_to_mel(SAMPLE_RATE_HZ / 2.0));
    let step = (mel_hi - mel_lo) / (n_points - 1) as f64;
    let mel_f: Vec<f64> = (0..n_points)
        .map(|i| {
            if i == n_points - 1 {
                mel_hi
            } else {
                i as f64 * step + mel_lo
            }
        })
        .map(mel_to_hz)
        .collect();

    let mut weights = vec![0f32; n_mels * N_FREQ];
    for i in 0..n_mels {
        let (fdiff_lo, fdiff_hi) = (mel_f[i + 1] - mel_f[i], mel_f[i + 2] - mel_f[i + 1]);
        let enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for (k, &freq) in fft_freqs.iter().enumerate() {
            let lower = -(mel_f[i] - freq) / fdiff_lo;
            let upper = (mel_f[i + 2] - freq) / fdiff_hi;
            let stored = lower.min(upper).max(0.0) as f32;
            let value = (f64::from(stored) * enorm) as f32;
            // librosa yields one -0.0; OpenAI's table has +0.0 there.
            weights[i * N_FREQ + k] = if value == 0.0 { 0.0 } else { value };
        }
    }
    weights
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a over the little-endian bytes of OpenAI's 80-mel table, as stored in whisper.cpp's
    /// `models/for-tests-ggml-tiny.en.bin` (read once from that file to make this constant).
    const OPENAI_MEL80_FNV1A: u64 = 0x3215_6581_cfa4_00a6;

    #[test]
    fn matches_openai_table_bit_for_bit() {
        let filters = mel_filters(80);
        assert_eq!(filters.len(), 80 * N_FREQ);
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in filters.iter().flat_map(|w| w.to_le_bytes()) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        assert_eq!(filters[1], 0.024_862_595, "first filter, bin 1");
        assert_eq!(hash, OPENAI_MEL80_FNV1A);
    }
}
