//! Noise taken out of a recording, for reading the edges of its sounds.
//!
//! Under noise the amplitude gate cannot tell a pause from a soft onset, and the aligner lets
//! a word after a pause take some of the noise before it. RNNoise (through `nnnoiseless`, a
//! port of Xiph's recurrent noise suppressor, BSD-3-Clause) takes stationary noise out of
//! speech and keeps the speech. It works on 48 kHz audio in 10 ms frames, so the 16 kHz input
//! goes up to 48 kHz and back through a windowed-sinc resampler. The aligner itself still hears
//! the recording as it is: on the denoised audio its boundaries were no better on the bench.

use nnnoiseless::DenoiseState;

use crate::speech::SAMPLE_RATE_HZ;

/// The denoiser's rate over ours.
const RATIO: usize = 3;
/// Half the resampler's kernel, in 16 kHz samples: 32 taps a phase.
const HALF_TAPS: usize = 16;
/// The resampler's cutoff as a fraction of 8 kHz (the transition band lies under it).
const CUTOFF: f32 = 0.95;
/// RNNoise works on 16-bit sample values.
const SCALE: f32 = 32768.0;
/// Audio before a piece that its denoiser hears first and whose output is dropped, so that
/// the piece's start does not meet a cold state.
const WARM_UP_S: f64 = 0.5;

/// A recording with the noise taken out, and where RNNoise heard a voice in it.
pub(crate) struct Denoised {
    /// The samples (16 kHz, as many as the input's).
    pub(crate) samples: Vec<f32>,
    /// RNNoise's voice probability for each 10 ms frame: frame `k` is heard on the 20 ms from
    /// `(k - 1) * 10` ms to `(k + 1) * 10` ms.
    pub(crate) voice: Vec<f32>,
}

/// Samples of one 10 ms frame of RNNoise's, at 16 kHz.
const FRAME_16K: usize = DenoiseState::FRAME_SIZE / RATIO;
/// The length of a frame of [`Denoised::voice`].
pub(crate) const VOICE_FRAME_S: f64 = FRAME_16K as f64 / SAMPLE_RATE_HZ as f64;

/// `samples` (16 kHz) with the noise removed, at the same rate and length, in up to `threads`
/// pieces on threads of their own.
pub(crate) fn denoised(samples: &[f32], threads: usize) -> Denoised {
    let pieces = threads.clamp(1, 8);
    // Whole frames, so that every piece's frames fall on the same 10 ms grid.
    let warm_up = (WARM_UP_S / VOICE_FRAME_S).round() as usize * FRAME_16K;
    let length = samples.len().div_ceil(pieces).div_ceil(FRAME_16K).max(1) * FRAME_16K;
    let mut out = vec![0.0; samples.len()];
    let mut voice = vec![0.0; samples.len().div_ceil(FRAME_16K)];
    std::thread::scope(|scope| {
        for (k, (target, frames)) in out
            .chunks_mut(length)
            .zip(voice.chunks_mut(length / FRAME_16K))
            .enumerate()
        {
            let start = k * length;
            let from = start.saturating_sub(warm_up);
            let input = &samples[from..start + target.len()];
            // The first piece has nothing before it: its denoiser hears its own start first.
            let prime = if k == 0 {
                &input[..warm_up.min(input.len())]
            } else {
                &[][..]
            };
            scope.spawn(move || {
                let piece = denoise_piece(prime, input);
                target.copy_from_slice(&piece.samples[start - from..]);
                let skipped = (start - from) / FRAME_16K;
                frames.copy_from_slice(&piece.voice[skipped..skipped + frames.len()]);
            });
        }
    });
    Denoised {
        samples: out,
        voice,
    }
}

/// One piece through one denoiser, which hears `prime` first (its output dropped).
fn denoise_piece(prime: &[f32], samples: &[f32]) -> Denoised {
    let kernels = Kernels::new();
    let frame = DenoiseState::FRAME_SIZE;
    let mut state = DenoiseState::new();
    let mut output = vec![0.0; frame];
    for chunk in kernels.up(prime).chunks_exact(frame) {
        let input: Vec<f32> = chunk.iter().map(|x| x * SCALE).collect();
        state.process_frame(&mut output, &input);
    }
    let up = kernels.up(samples);
    let mut clean = vec![0.0; up.len()];
    let mut voice = Vec::with_capacity(up.len().div_ceil(frame));
    let mut input = vec![0.0; frame];
    // The denoiser's output lags its input by one frame: frame k's output is frame k - 1's.
    // Its voice probability is the input frame's.
    for k in 0..=up.len().div_ceil(frame) {
        input.fill(0.0);
        let at = (k * frame).min(up.len());
        let part = &up[at..(at + frame).min(up.len())];
        for (slot, &x) in input.iter_mut().zip(part) {
            *slot = x * SCALE;
        }
        let probability = state.process_frame(&mut output, &input);
        if k < up.len().div_ceil(frame) {
            voice.push(probability);
        }
        if k == 0 {
            continue;
        }
        let to = (k - 1) * frame;
        let n = frame.min(clean.len().saturating_sub(to));
        for (slot, &y) in clean[to..to + n].iter_mut().zip(&output) {
            *slot = y / SCALE;
        }
    }
    Denoised {
        samples: kernels.down(&clean, samples.len()),
        voice,
    }
}

/// The resampler's kernels: a Blackman-windowed sinc cut at [`CUTOFF`] of 8 kHz.
struct Kernels {
    /// For each of the three phases of the 48 kHz output, the weights of the 16 kHz samples
    /// `i - HALF_TAPS + 1 ..= i + HALF_TAPS` around output `3 i + phase`.
    up: [[f32; 2 * HALF_TAPS]; RATIO],
    /// The weights of the 48 kHz samples `3 n - R ..= 3 n + R` for output `n`.
    down: Vec<f32>,
}

impl Kernels {
    fn new() -> Self {
        let half = HALF_TAPS as f64;
        let cutoff = f64::from(CUTOFF);
        // A windowed sinc at a distance of `x` 16 kHz samples.
        let weight = |x: f64| {
            if x.abs() >= half {
                return 0.0;
            }
            let sinc = if x == 0.0 {
                cutoff
            } else {
                (std::f64::consts::PI * cutoff * x).sin() / (std::f64::consts::PI * x)
            };
            let blackman = 0.42
                + 0.5 * (std::f64::consts::PI * x / half).cos()
                + 0.08 * (2.0 * std::f64::consts::PI * x / half).cos();
            sinc * blackman
        };
        let mut up = [[0f32; 2 * HALF_TAPS]; RATIO];
        for (phase, taps) in up.iter_mut().enumerate() {
            let t = phase as f64 / RATIO as f64;
            for (j, tap) in taps.iter_mut().enumerate() {
                let k = j as f64 - half + 1.0;
                *tap = weight(t - k) as f32;
            }
        }
        let reach = RATIO * HALF_TAPS - 1;
        let down = (0..=2 * reach)
            .map(|m| (weight((m as f64 - reach as f64) / RATIO as f64) / RATIO as f64) as f32)
            .collect();
        Self { up, down }
    }

    /// 16 kHz to 48 kHz.
    fn up(&self, x: &[f32]) -> Vec<f32> {
        let padded: Vec<f32> = std::iter::repeat_n(0.0, HALF_TAPS - 1)
            .chain(x.iter().copied())
            .chain(std::iter::repeat_n(0.0, HALF_TAPS))
            .collect();
        let mut y = Vec::with_capacity(x.len() * RATIO);
        for window in padded.windows(2 * HALF_TAPS) {
            for taps in &self.up {
                y.push(dot(window, taps));
            }
        }
        y.truncate(x.len() * RATIO);
        y
    }

    /// 48 kHz to `n` samples at 16 kHz.
    fn down(&self, y: &[f32], n: usize) -> Vec<f32> {
        let reach = RATIO * HALF_TAPS - 1;
        let padded: Vec<f32> = std::iter::repeat_n(0.0, reach)
            .chain(y.iter().copied())
            .chain(std::iter::repeat_n(0.0, reach + RATIO))
            .collect();
        (0..n)
            .map(|i| dot(&padded[i * RATIO..i * RATIO + self.down.len()], &self.down))
            .collect()
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(hz: f32, seconds: f32, amplitude: f32) -> Vec<f32> {
        let n = (seconds * SAMPLE_RATE_HZ as f32) as usize;
        (0..n)
            .map(|i| {
                amplitude
                    * (2.0 * std::f32::consts::PI * hz * i as f32 / SAMPLE_RATE_HZ as f32).sin()
            })
            .collect()
    }

    fn rms(x: &[f32]) -> f32 {
        (x.iter().map(|v| v * v).sum::<f32>() / x.len().max(1) as f32).sqrt()
    }

    fn power_db(x: &[f32]) -> f32 {
        20.0 * rms(x).max(1e-9).log10()
    }

    #[test]
    fn pink_noise_goes_and_the_speech_stays() {
        use caption_testkit::speech::{festival_sentence, mix_pink_noise, read_wav_16k};
        let dir = tempfile::tempdir().unwrap();
        let (clean, noisy) = (dir.path().join("clean.wav"), dir.path().join("noisy.wav"));
        let text =
            "After a long debate, they agreed to fund a bicycle path and a community garden.";
        let truth = festival_sentence(text, "slt", &clean).unwrap();
        mix_pink_noise(&clean, &noisy, 16.0).unwrap();
        let samples: Vec<f32> = read_wav_16k(&noisy)
            .unwrap()
            .iter()
            .map(|&s| f32::from(s) / 32768.0)
            .collect();
        let Denoised {
            samples: out,
            voice,
        } = denoised(&samples, 2);
        assert_eq!(out.len(), samples.len());
        let at = |t: f64| (t * SAMPLE_RATE_HZ as f64) as usize;
        // The pause at the comma (after "debate"), a margin inside each edge.
        let debate = truth.iter().position(|w| w.word == "debate").unwrap();
        let pause = at(truth[debate].end_s + 0.02)..at(truth[debate + 1].start_s - 0.02);
        assert!(pause.len() > 800, "a pause of {} samples", pause.len());
        // RNNoise hears no voice in the pause, and a voice in each word.
        assert_eq!(voice.len(), samples.len().div_ceil(FRAME_16K));
        let frame = |t: f64| (t / VOICE_FRAME_S) as usize;
        let silent = frame(truth[debate].end_s + 0.02)..frame(truth[debate + 1].start_s - 0.01);
        assert!(
            voice[silent.clone()].iter().all(|&p| p < 0.5),
            "the pause: {:?}",
            &voice[silent]
        );
        for word in &truth {
            let heard = voice[frame(word.start_s)..frame(word.end_s)].iter();
            assert!(heard.fold(0f32, |m, &p| m.max(p)) > 0.9, "{}", word.word);
        }
        let (before, after) = (power_db(&samples[pause.clone()]), power_db(&out[pause]));
        assert!(
            after <= before - 20.0,
            "pause {before:.1} dB, denoised {after:.1} dB"
        );
        // The speech keeps its level: all of it within 1 dB, each word within 3 dB (a soft
        // word loses the noise that was part of its level).
        let spans = || truth.iter().map(|w| at(w.start_s)..at(w.end_s));
        let (all_before, all_after): (Vec<f32>, Vec<f32>) = spans()
            .flat_map(|span| span.map(|i| (samples[i], out[i])))
            .unzip();
        let (before, after) = (power_db(&all_before), power_db(&all_after));
        assert!(
            (after - before).abs() <= 1.0,
            "speech {before:.1} dB, denoised {after:.1} dB"
        );
        for (word, span) in truth.iter().zip(spans()) {
            let (before, after) = (power_db(&samples[span.clone()]), power_db(&out[span]));
            assert!(
                (after - before).abs() <= 3.0,
                "{}: {before:.1} dB, denoised {after:.1} dB",
                word.word
            );
        }
    }

    #[test]
    fn up_and_down_again_keeps_the_signal() {
        let kernels = Kernels::new();
        for hz in [200.0, 1000.0, 3000.0, 5500.0] {
            let x = tone(hz, 0.5, 0.5);
            let y = kernels.down(&kernels.up(&x), x.len());
            let inner = 200..x.len() - 200;
            let error: Vec<f32> = inner.clone().map(|i| y[i] - x[i]).collect();
            assert!(
                rms(&error) < 0.01 * rms(&x[inner]),
                "{hz} Hz: error {} of {}",
                rms(&error),
                rms(&x)
            );
        }
    }
}
