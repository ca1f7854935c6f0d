//! Media input and output for the caption engine, on FFmpeg (through `ffmpeg-next`).
//!
//! - [`probe`] reads a file's duration and its video and audio stream facts.
//! - [`AudioReader`] / [`decode_audio_16k_mono`] turn the audio of anything FFmpeg reads into
//!   16 kHz mono `f32` samples, the input whisper expects, streamed in chunks.
//! - [`burn`] re-encodes a video with an [`OverlaySource`]'s pictures blended into its frames
//!   (the caption burn-in), streaming, with frames overlaid in parallel; with a [`CropPath`]
//!   it keeps a moving window of each frame (a reframe to another aspect ratio).
//! - [`sample_frames`] hands over a few small frames a second, for a face detector.
//!
//! No FFmpeg type crosses this crate's public API; errors carry the path they concern.
//!
//! ```
//! use std::process::Command;
//! use std::sync::Arc;
//!
//! use caption_media::{BurnOptions, Overlay, OverlaySource, burn, probe};
//!
//! // Two seconds of gray 320x240 video with a tone, made by the ffmpeg command line.
//! let dir = tempfile::tempdir()?;
//! let input = dir.path().join("in.mp4");
//! let made = Command::new("ffmpeg")
//!     .args(["-loglevel", "error", "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=2"])
//!     .args(["-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:v", "libx264"])
//!     .args(["-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
//!     .arg(&input)
//!     .status()?;
//! assert!(made.success());
//!
//! let info = probe(&input)?;
//! let video = info.video.as_ref().expect("a video stream");
//! assert_eq!((video.display_width, video.display_height), (320, 240));
//! assert!((info.duration_s - 2.0).abs() < 0.1, "{}", info.duration_s);
//!
//! // A white box over the first second.
//! struct WhiteBox(Arc<Overlay>);
//! impl OverlaySource for WhiteBox {
//!     fn overlay_at(&self, t_s: f64, _w: u32, _h: u32) -> Option<Arc<Overlay>> {
//!         (t_s < 1.0).then(|| self.0.clone())
//!     }
//! }
//! let white = WhiteBox(Arc::new(Overlay::solid(10, 10, 100, 50, [255, 255, 255, 255])));
//! let output = dir.path().join("out.mp4");
//! let report = burn(&input, &output, &white, &BurnOptions::default())?;
//! assert_eq!(report.frames, 50);
//! assert_eq!(report.frames_with_overlay, 25);
//! assert!(probe(&output)?.audio.is_some(), "the audio is kept");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod audio;
mod blend;
mod burn;
mod crop;
mod error;
mod ff;
mod health;
mod layer;
mod limits;
mod overlay;
mod partial;
mod pool;
mod probe;
mod sample;

pub use audio::{AUDIO_SAMPLE_RATE_HZ, AudioReader, decode_audio_16k_mono};
pub use blend::{Colorimetry, FrameMut, PlaneLayout, PreparedOverlay, YuvMatrix, blend_overlay};
pub use burn::{AudioOutcome, BurnOptions, BurnReport, burn};
pub use crop::{CropKey, CropPath};
pub use error::{Error, Result};
pub use layer::{LayerFormat, LayerReport, write_layer};
pub use limits::{MAX_PICTURE_PIXELS, MAX_PICTURE_SIDE_PX};
pub use overlay::{NoOverlay, Overlay, OverlaySource};
pub use probe::{AudioInfo, MediaInfo, VideoInfo, check_output, probe};
pub use sample::{SampleReport, SampledFrame, sample_frames};
