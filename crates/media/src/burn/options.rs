//! What a burn takes (encoder settings, progress and cancel hooks) and what it reports.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use caption_core::Reframe;

use crate::crop::CropPath;

/// How [`burn`](fn@crate::burn) encodes, and the hooks to follow or stop it.
#[derive(Clone)]
#[non_exhaustive]
pub struct BurnOptions {
    /// libx264 preset (`ultrafast` .. `placebo`). Default `veryfast`: what short-video tools
    /// use, near-real-time on two cores for 1080p.
    pub x264_preset: String,
    /// libx264 constant rate factor; lower is better and larger. Default 20: captions' sharp
    /// edges stay clean where 23 starts to ring.
    pub crf: f32,
    /// Encoder threads; 0 lets x264 choose (1.5 x cores).
    pub encoder_threads: usize,
    /// Keep an HDR input (PQ or HLG) HDR: HEVC (libx265) 10-bit 4:2:0 with the input's colour
    /// tags, the preset and crf above given to x265. Default `false`: every output is H.264
    /// High, 8-bit 4:2:0 BT.709, which plays everywhere, and HDR inputs are tone-mapped to
    /// SDR. An SDR input gives that output either way.
    pub keep_hdr: bool,
    /// Spans to cut out, `(start, end)` in seconds from the media's start: the frames that
    /// start inside one are dropped, the audio loses the same span with a 15 ms crossfade
    /// (audio is then always re-encoded, to AAC), and everything after it moves earlier.
    /// Spans on the video's frame grid keep the output exactly in step; the overlay source is
    /// asked for the output's times. Default none.
    pub cuts: Vec<(f64, f64)>,
    /// The output's aspect ratio when it is not the input's: caption-engine plans the crop
    /// window that follows the speaker's face and sets [`crop`](Self::crop) from it;
    /// [`burn`](fn@crate::burn) itself applies `crop` alone. Default none.
    pub reframe: Option<Reframe>,
    /// The window of each frame kept (see [`CropPath`]), before the captions are drawn: the
    /// overlay source is asked for the window's size. Default none: the whole frame.
    pub crop: Option<Arc<CropPath>>,
    /// Called with the fraction done (0 to 1, by presentation time) after each batch of frames.
    pub progress: Option<Arc<dyn Fn(f64) + Send + Sync>>,
    /// When raised, the burn stops soon, removes its partial output and returns
    /// [`Error::Cancelled`](crate::Error::Cancelled).
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for BurnOptions {
    fn default() -> Self {
        Self {
            x264_preset: "veryfast".to_owned(),
            crf: 20.0,
            encoder_threads: 0,
            keep_hdr: false,
            cuts: Vec::new(),
            reframe: None,
            crop: None,
            progress: None,
            cancel: None,
        }
    }
}

impl std::fmt::Debug for BurnOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BurnOptions")
            .field("x264_preset", &self.x264_preset)
            .field("crf", &self.crf)
            .field("encoder_threads", &self.encoder_threads)
            .field("keep_hdr", &self.keep_hdr)
            .field("cuts", &self.cuts)
            .field("reframe", &self.reframe)
            .field("crop", &self.crop.as_ref().map(|c| (c.width(), c.height())))
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel.is_some())
            .finish()
    }
}

impl BurnOptions {
    /// Sets the libx264 preset (`ultrafast` .. `placebo`).
    pub fn with_preset(mut self, preset: impl Into<String>) -> Self {
        self.x264_preset = preset.into();
        self
    }

    /// Sets the libx264 constant rate factor (0–51; lower is better and larger).
    pub fn with_crf(mut self, crf: f32) -> Self {
        self.crf = crf;
        self
    }

    /// Sets the encoder threads; 0 lets x264 choose.
    pub fn with_encoder_threads(mut self, encoder_threads: usize) -> Self {
        self.encoder_threads = encoder_threads;
        self
    }

    /// Keeps HDR inputs HDR (HEVC 10-bit with their colour tags) instead of tone-mapping
    /// them to SDR H.264; see [`keep_hdr`](Self::keep_hdr).
    pub fn with_keep_hdr(mut self, keep_hdr: bool) -> Self {
        self.keep_hdr = keep_hdr;
        self
    }

    /// Cuts `cuts` (`(start, end)` seconds from the media's start) out of the output; see
    /// [`cuts`](Self::cuts).
    pub fn with_cuts(mut self, cuts: impl IntoIterator<Item = (f64, f64)>) -> Self {
        self.cuts = cuts.into_iter().collect();
        self
    }

    /// Asks for the output at `reframe`'s aspect ratio; see [`reframe`](Self::reframe).
    pub fn with_reframe(mut self, reframe: Option<Reframe>) -> Self {
        self.reframe = reframe;
        self
    }

    /// Keeps the window `crop` of each frame; see [`crop`](Self::crop).
    pub fn with_crop(mut self, crop: CropPath) -> Self {
        self.crop = Some(Arc::new(crop));
        self
    }

    /// Calls `progress` with the fraction done, 0 to 1, from the burn's thread.
    pub fn with_progress(mut self, progress: impl Fn(f64) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Stops the burn soon after `cancel` is raised.
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

/// What happened to the audio during a burn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AudioOutcome {
    /// The input has no audio stream.
    None,
    /// The audio stream was copied packet for packet.
    Copied {
        /// FFmpeg's codec name, for example `aac`.
        codec: String,
    },
    /// The output container cannot hold the input's audio codec, so it was re-encoded to AAC.
    Reencoded {
        /// FFmpeg's name of the input's codec.
        from_codec: String,
    },
}

/// What [`burn`](fn@crate::burn) did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BurnReport {
    /// Video frames written.
    pub frames: u64,
    /// Frames that had an overlay blended in.
    pub frames_with_overlay: u64,
    /// Presentation time of the end of the last frame, in seconds from the media's start
    /// (of the output: after the cuts).
    pub video_end_s: f64,
    /// Seconds cut out ([`BurnOptions::cuts`] inside the media).
    pub cut_s: f64,
    /// Display size (after rotation), as handed to the overlay source.
    pub display_width: u32,
    /// Display height (after rotation), pixels.
    pub display_height: u32,
    /// Pixel format the video was blended and encoded in.
    pub pixel_format: String,
    /// Whether the audio was copied, re-encoded or absent.
    pub audio: AudioOutcome,
    /// Wall-clock time the burn took, seconds.
    pub elapsed_s: f64,
    /// Damage met in the input that did not stop the burn (packets in the middle that would
    /// not decode, an empty audio track), one sentence each; empty for a sound input.
    pub warnings: Vec<String>,
}
