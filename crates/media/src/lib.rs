//! Media input and output for the caption engine, on FFmpeg (through `ffmpeg-next`).
//!
//! - [`probe`] reads a file's duration and its video and audio stream facts.
//! - [`AudioReader`] / [`decode_audio_16k_mono`] turn the audio of anything FFmpeg reads into
//!   16 kHz mono `f32` samples, the input whisper expects, streamed in chunks.
//! - [`burn`] re-encodes a video with an [`OverlaySource`]'s pictures blended into its frames
//!   (the caption burn-in), streaming, with frames overlaid in parallel.
//!
//! No FFmpeg type crosses this crate's public API; errors carry the path they concern.

mod audio;
mod blend;
mod burn;
mod error;
mod ff;
mod overlay;
mod pool;
mod probe;

pub use audio::{AUDIO_SAMPLE_RATE_HZ, AudioReader, decode_audio_16k_mono};
pub use blend::{Colorimetry, FrameMut, PlaneLayout, PreparedOverlay, YuvMatrix, blend_overlay};
pub use burn::{AudioOutcome, BurnOptions, BurnReport, burn};
pub use error::{Error, Result};
pub use overlay::{NoOverlay, Overlay, OverlaySource};
pub use probe::{AudioInfo, MediaInfo, VideoInfo, check_output, probe};
