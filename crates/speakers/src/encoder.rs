//! The GE2E voice encoder of resemblyzer 0.1.4 (Apache-2.0): three LSTM layers of 256 over 40
//! mel bands, the last hidden state through a linear layer and a ReLU, L2-normalised. An
//! utterance is cut into partials of 1.6 s, 1.3 a second; its embedding is the normalised mean
//! of theirs (resemblyzer's `embed_utterance`).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::mel::{HOP, MelFrontEnd, N_MELS, SAMPLE_RATE_HZ, dot};

/// The weights file `scripts/setup-wheel-models` converts from resemblyzer's `pretrained.pt`.
pub const WEIGHTS_FILE_NAME: &str = "resemblyzer-ge2e.f32";
/// Values an embedding has.
pub const EMBEDDING_DIM: usize = 256;
const HIDDEN: usize = 256;
const GATES: usize = 4 * HIDDEN;
const LAYERS: usize = 3;
/// Frames of a partial utterance (1.6 s).
const PARTIAL_FRAMES: usize = 160;
/// Samples of a partial utterance.
pub(crate) const PARTIAL_SAMPLES: usize = PARTIAL_FRAMES * HOP;
/// Partials an utterance is cut into, a second (resemblyzer's default `rate`).
const PARTIALS_PER_S: f64 = 1.3;
/// The last partial is kept when it covers this much of its 1.6 s with the utterance.
const MIN_COVERAGE: f64 = 0.75;
/// Loudness the utterance is brought to before its mel frames (resemblyzer's
/// `audio_norm_target_dBFS`): the network sees power, so it hears loudness.
const TARGET_DBFS: f64 = -30.0;

#[derive(Debug)]
struct Layer {
    /// `[GATES][input]`, gates in PyTorch's order: input, forget, cell, output.
    w_ih: Vec<f32>,
    /// `[GATES][HIDDEN]`.
    w_hh: Vec<f32>,
    /// `b_ih + b_hh`.
    bias: Vec<f32>,
    input: usize,
}

/// A speaker embedding: 256 values, L2 norm 1; the cosine of two is their dot product.
pub type Embedding = [f32; EMBEDDING_DIM];

/// The voice encoder, loaded once and shared (it is `Sync`).
#[derive(Debug)]
pub struct VoiceEncoder {
    layers: Vec<Layer>,
    /// `[EMBEDDING_DIM][HIDDEN]`.
    linear_w: Vec<f32>,
    linear_b: Vec<f32>,
    front: MelFrontEnd,
}

impl VoiceEncoder {
    /// Where `scripts/setup-wheel-models` installs the weights:
    /// `$CAPTIONS_MODELS/resemblyzer-ge2e.f32`, else under `~/.cache/caption-engine/models`.
    pub fn default_path() -> Result<PathBuf> {
        let dir = caption_core::models_dir().ok_or(Error::NoModelsDir)?;
        Ok(dir.join(WEIGHTS_FILE_NAME))
    }

    /// Loads the weights installed at [`VoiceEncoder::default_path`].
    pub fn open_installed() -> Result<Self> {
        let path = Self::default_path()?;
        if !path.is_file() {
            return Err(Error::ModelMissing { path });
        }
        Self::open(&path)
    }

    /// Loads the weights from `path`: the encoder's tensors as little-endian f32, in the order
    /// of resemblyzer's state dict (each layer's `weight_ih`, `weight_hh`, `bias_ih`,
    /// `bias_hh`, then the linear layer's weight and bias).
    pub fn open(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            action: "reading",
            path: path.to_owned(),
            source,
        })?;
        let expected: usize = (0..LAYERS)
            .map(|i| GATES * (layer_input(i) + HIDDEN) + 2 * GATES)
            .sum::<usize>()
            + EMBEDDING_DIM * HIDDEN
            + EMBEDDING_DIM;
        if bytes.len() != expected * 4 {
            return Err(Error::Model {
                path: path.to_owned(),
                detail: format!("{} bytes, expected {}", bytes.len(), expected * 4),
            });
        }
        let mut values = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let mut take = |n: usize| -> Vec<f32> { values.by_ref().take(n).collect() };
        let layers = (0..LAYERS)
            .map(|i| {
                let input = layer_input(i);
                let w_ih = take(GATES * input);
                let w_hh = take(GATES * HIDDEN);
                let b_ih = take(GATES);
                let bias = take(GATES).iter().zip(&b_ih).map(|(a, b)| a + b).collect();
                Layer {
                    w_ih,
                    w_hh,
                    bias,
                    input,
                }
            })
            .collect();
        let linear_w = take(EMBEDDING_DIM * HIDDEN);
        let linear_b = take(EMBEDDING_DIM);
        if let Some(bad) = linear_w.iter().chain(&linear_b).find(|v| !v.is_finite()) {
            return Err(Error::Model {
                path: path.to_owned(),
                detail: format!("holds a value that is not finite: {bad}"),
            });
        }
        Ok(Self {
            layers,
            linear_w,
            linear_b,
            front: MelFrontEnd::new(),
        })
    }

    /// The embedding of one utterance (16 kHz mono samples), as resemblyzer's
    /// `embed_utterance` makes it from a preprocessed wave: loudness brought to -30 dBFS, then
    /// the mean of its partials' embeddings, normalised.
    pub fn embed_utterance(&self, samples: &[f32]) -> Embedding {
        let partials = self.embed_partials(samples);
        mean_direction(&partials)
    }

    /// The embeddings of the utterance's partials (see [`VoiceEncoder::embed_utterance`]).
    pub fn embed_partials(&self, samples: &[f32]) -> Vec<Embedding> {
        let starts = partial_starts(samples.len());
        let last_end = starts.last().map_or(0, |s| (s + PARTIAL_FRAMES) * HOP);
        let mut wave = normalized(samples);
        if last_end >= wave.len() {
            wave.resize(last_end, 0.0);
        }
        let frames = self.front.frames(&wave);
        starts
            .par_iter()
            .map(|&start| {
                self.embed_frames(&frames[start * N_MELS..(start + PARTIAL_FRAMES) * N_MELS])
            })
            .collect()
    }

    /// The embedding of one partial: `PARTIAL_FRAMES` rows of `N_MELS`.
    fn embed_frames(&self, frames: &[f32]) -> Embedding {
        let steps = frames.len() / N_MELS;
        let mut input = frames.to_vec();
        let mut h = vec![0f32; HIDDEN];
        for layer in &self.layers {
            // The input's part of every step's gates at once, then the recurrence.
            let mut pre = vec![0f32; steps * GATES];
            for (x, gates) in input
                .chunks_exact(layer.input)
                .zip(pre.chunks_exact_mut(GATES))
            {
                for (r, g) in gates.iter_mut().enumerate() {
                    *g =
                        layer.bias[r] + dot(&layer.w_ih[r * layer.input..(r + 1) * layer.input], x);
                }
            }
            let mut out = vec![0f32; steps * HIDDEN];
            h.fill(0.0);
            let mut c = vec![0f32; HIDDEN];
            for (gates, h_out) in pre
                .chunks_exact_mut(GATES)
                .zip(out.chunks_exact_mut(HIDDEN))
            {
                for (r, g) in gates.iter_mut().enumerate() {
                    *g += dot(&layer.w_hh[r * HIDDEN..(r + 1) * HIDDEN], &h);
                }
                for j in 0..HIDDEN {
                    let i_gate = sigmoid(gates[j]);
                    let f_gate = sigmoid(gates[HIDDEN + j]);
                    let cell = gates[2 * HIDDEN + j].tanh();
                    let o_gate = sigmoid(gates[3 * HIDDEN + j]);
                    c[j] = f_gate * c[j] + i_gate * cell;
                    h[j] = o_gate * c[j].tanh();
                }
                h_out.copy_from_slice(&h);
            }
            input = out;
        }
        let mut embedding = [0f32; EMBEDDING_DIM];
        for (r, e) in embedding.iter_mut().enumerate() {
            *e =
                (self.linear_b[r] + dot(&self.linear_w[r * HIDDEN..(r + 1) * HIDDEN], &h)).max(0.0);
        }
        normalize(&mut embedding);
        embedding
    }
}

fn layer_input(layer: usize) -> usize {
    if layer == 0 { N_MELS } else { HIDDEN }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Scales `v` to norm 1 (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The normalised mean of `embeddings`, weighted equally.
pub(crate) fn mean_direction(embeddings: &[Embedding]) -> Embedding {
    let mut mean = [0f32; EMBEDDING_DIM];
    for e in embeddings {
        mean.iter_mut().zip(e).for_each(|(m, x)| *m += x);
    }
    normalize(&mut mean);
    mean
}

/// The first frame of each partial (resemblyzer's `compute_partial_slices`): one every
/// 1/1.3 s; the last dropped when the utterance covers less than 75 % of it, unless it is the
/// only one.
fn partial_starts(n_samples: usize) -> Vec<usize> {
    let n_frames = (n_samples + 1).div_ceil(HOP);
    // round(16000 / 1.3 / 160) = 77 frames.
    let step = ((SAMPLE_RATE_HZ as f64 / PARTIALS_PER_S) / HOP as f64).round() as usize;
    let steps = (n_frames + step + 1).saturating_sub(PARTIAL_FRAMES).max(1);
    let mut starts: Vec<usize> = (0..steps).step_by(step).collect();
    if let Some(&last) = starts.last() {
        let coverage = (n_samples as f64 - (last * HOP) as f64) / (PARTIAL_FRAMES * HOP) as f64;
        if coverage < MIN_COVERAGE && starts.len() > 1 {
            starts.pop();
        }
    }
    starts
}

/// `samples` brought to -30 dBFS RMS (resemblyzer's `normalize_volume`, both ways here: a
/// loud speaker and a quiet one should sound alike to the clustering); silence stays silence.
fn normalized(samples: &[f32]) -> Vec<f32> {
    let full_scale = f64::from(i16::MAX);
    let power = samples
        .iter()
        .map(|&s| f64::from(s) * f64::from(s))
        .sum::<f64>()
        / samples.len().max(1) as f64;
    let rms = power.sqrt() * full_scale;
    if rms < 1e-3 {
        return samples.to_vec();
    }
    let gain = 10f64.powf((TARGET_DBFS - 20.0 * (rms / full_scale).log10()) / 20.0) as f32;
    samples.iter().map(|&s| s * gain).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partials_follow_resemblyzer() {
        // compute_partial_slices(n, rate=1.3, min_coverage=0.75) for these lengths.
        assert_eq!(partial_starts(8_000), [0]);
        assert_eq!(partial_starts(32_000), [0, 77]);
        assert_eq!(partial_starts(48_000), [0, 77, 154]);
    }

    #[test]
    fn front_end_frame_count() {
        assert_eq!(MelFrontEnd::new().frames(&[0.0; 1600]).len(), 11 * N_MELS);
    }
}
