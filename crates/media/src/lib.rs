//! Media input and output for the caption engine, on FFmpeg (through `ffmpeg-next`).
//!
//! - [`probe`] reads a file's duration and its video and audio stream facts.
//! - [`AudioReader`] / [`decode_audio_16k_mono`] turn the audio of anything FFmpeg reads into
//!   16 kHz mono `f32` samples, the input whisper expects, streamed in chunks.
//!
//! No FFmpeg type crosses this crate's public API; errors carry the path they concern.

mod audio;
mod error;
mod ff;
mod probe;

pub use audio::{AUDIO_SAMPLE_RATE_HZ, AudioReader, decode_audio_16k_mono};
pub use error::{Error, Result};
pub use probe::{AudioInfo, MediaInfo, VideoInfo, probe};
