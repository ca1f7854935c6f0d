//! The burn pipeline: demux and decode on the calling thread, overlay frames in parallel
//! batches with rayon, encode and mux on a writer thread, with bounded queues in between so
//! that memory stays flat whatever the input's length.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use ffmpeg::format::Pixel;
use ffmpeg::format::context::{Input, Output};
use ffmpeg::{Packet, Rational, Rescale as _, codec, encoder, frame, media, picture};
use ffmpeg_next as ffmpeg;
use rayon::prelude::*;

use crate::blend::{Colorimetry, FrameMut, PlaneLayout, PreparedOverlay, YuvMatrix};
use crate::ff;
use crate::overlay::{Overlay, OverlaySource};
use crate::pool::FramePool;
use crate::{Error, Result};

/// How [`burn`] encodes, and the hooks to follow or stop it.
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
    /// Called with the fraction done (0 to 1, by presentation time) after each batch of frames.
    pub progress: Option<Arc<dyn Fn(f64) + Send + Sync>>,
    /// When raised, the burn stops soon, removes its partial output and returns
    /// [`Error::Cancelled`].
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for BurnOptions {
    fn default() -> Self {
        Self {
            x264_preset: "veryfast".to_owned(),
            crf: 20.0,
            encoder_threads: 0,
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
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel.is_some())
            .finish()
    }
}

impl BurnOptions {
    pub fn with_preset(mut self, preset: impl Into<String>) -> Self {
        self.x264_preset = preset.into();
        self
    }

    pub fn with_crf(mut self, crf: f32) -> Self {
        self.crf = crf;
        self
    }

    pub fn with_progress(mut self, progress: impl Fn(f64) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

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
    Copied { codec: String },
    /// The output container cannot hold the input's audio codec, so it was re-encoded to AAC.
    Reencoded { from_codec: String },
}

/// What [`burn`] did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BurnReport {
    /// Video frames written.
    pub frames: u64,
    /// Frames that had an overlay blended in.
    pub frames_with_overlay: u64,
    /// Presentation time of the end of the last frame, in seconds from the media's start.
    pub video_end_s: f64,
    /// Display size (after rotation), as handed to the overlay source.
    pub display_width: u32,
    pub display_height: u32,
    /// Pixel format the video was blended and encoded in.
    pub pixel_format: String,
    pub audio: AudioOutcome,
    pub elapsed_s: f64,
}

/// Frames whose overlays are rendered and converted together in one rayon batch (one per
/// core is enough: most frames reuse the previous overlay), and the depth of the queue to the
/// encoder, in batches. Every frame in flight keeps a decoded picture (3 MB at 1080x1920)
/// alive, so these stay small: memory then stays at a bare transcode's whatever the length.
const BATCH_FRAMES: usize = 2;
const QUEUE_BATCHES: usize = 1;
const MAX_CONSECUTIVE_DECODE_ERRORS: u32 = 100;

/// Decodes `input`, blends the overlay `overlays` gives for each frame's presentation time, and
/// encodes H.264 (libx264) into `output`, keeping size, timing (each frame's timestamp, so
/// variable frame rate survives), rotation, aspect ratio and colour tags. The audio is copied
/// when the output container accepts its codec and re-encoded to AAC otherwise.
///
/// The container follows `output`'s extension (`.mp4`, `.mov`, `.mkv`, ...). The output is
/// written to a temporary file beside it and renamed at the end: on any error, or when
/// cancelled, nothing is left behind.
///
/// # Errors
/// [`Error::NotFound`] (missing input), [`Error::Unreadable`] (corrupt, truncated input),
/// [`Error::NoVideo`] (audio-only), [`Error::StillImage`] (an image),
/// [`Error::UnsupportedOutput`] (an extension with no H.264-capable container),
/// [`Error::Decode`], [`Error::Encode`], [`Error::Io`], [`Error::Cancelled`].
pub fn burn(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    overlays: &dyn OverlaySource,
    options: &BurnOptions,
) -> Result<BurnReport> {
    let started = Instant::now();
    let input = input.as_ref();
    let output = output.as_ref();
    let ictx = ff::open_input(input)?;
    let muxer = output_muxer(output)?;
    let partial = PartialFile::beside(output)?;
    let mut report = Burner::new(input, ictx, &muxer, partial.path(), overlays, options)?.run()?;
    partial.commit(output)?;
    report.elapsed_s = started.elapsed().as_secs_f64();
    tracing::info!(
        input = %input.display(),
        output = %output.display(),
        frames = report.frames,
        elapsed_s = report.elapsed_s,
        "burned"
    );
    Ok(report)
}

/// The muxer FFmpeg picks for `output`'s name, if it can hold H.264.
pub(crate) fn output_muxer(output: &Path) -> Result<String> {
    ff::init();
    let unsupported = |reason: String| Error::UnsupportedOutput {
        path: output.to_owned(),
        reason,
    };
    let name = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let c_name =
        CString::new(name).map_err(|_| unsupported("the file name has a NUL byte".into()))?;
    // SAFETY: av_guess_format reads the NUL-terminated name and returns a pointer to a static
    // muxer description or NULL; avformat_query_codec only reads that description.
    unsafe {
        let format =
            ffmpeg::ffi::av_guess_format(std::ptr::null(), c_name.as_ptr(), std::ptr::null());
        if format.is_null() {
            return Err(unsupported(
                "no container is known for this file extension".into(),
            ));
        }
        let muxer = std::ffi::CStr::from_ptr((*format).name)
            .to_string_lossy()
            .into_owned();
        let h264 = ffmpeg::ffi::avformat_query_codec(
            format,
            ffmpeg::ffi::AVCodecID::AV_CODEC_ID_H264,
            ffmpeg::ffi::FF_COMPLIANCE_NORMAL,
        );
        if h264 != 1 {
            return Err(unsupported(format!(
                "the {muxer} container cannot hold H.264 video"
            )));
        }
        Ok(muxer)
    }
}

/// The output while it is written: a hidden file beside the final path (same file system, so
/// the final rename is atomic), removed on drop unless committed.
struct PartialFile {
    path: PathBuf,
    committed: bool,
}

impl PartialFile {
    fn beside(output: &Path) -> Result<Self> {
        let name = output
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("output.mp4");
        let ext = output.extension().and_then(|e| e.to_str()).unwrap_or("mp4");
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let file = format!(".{name}.partial-{}-{n}.{ext}", std::process::id());
        let path = output.with_file_name(file);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            return Err(Error::Io {
                path: output.to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the output folder does not exist",
                ),
            });
        }
        Ok(Self {
            path,
            committed: false,
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn commit(mut self, output: &Path) -> Result<()> {
        std::fs::rename(&self.path, output).map_err(|source| Error::Io {
            path: output.to_owned(),
            source,
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.committed
            && let Err(err) = std::fs::remove_file(&self.path)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), %err, "cannot remove a partial output");
        }
    }
}

/// Messages to the writer thread, in output order per stream.
enum Msg {
    Video(Vec<VideoFrame>),
    AudioPacket(Packet),
    AudioFrame(frame::Audio),
    /// Everything was sent: flush the encoders and finish the file. A writer that sees its
    /// channel close without this abandons the file instead.
    Finish,
}

/// A decoded frame on its way to the encoder: its duration in the stream's time base, and the
/// overlay to blend into it.
struct VideoFrame {
    frame: frame::Video,
    duration: i64,
    overlay: Option<(PlaneLayout, Arc<PreparedOverlay>)>,
}

enum AudioPlan {
    None,
    Copy {
        codec: String,
    },
    Encode {
        codec: String,
        decoder: ffmpeg::decoder::Audio,
    },
}

struct Burner<'a> {
    input_path: &'a Path,
    output_path: &'a Path,
    muxer: &'a str,
    ictx: Input,
    overlays: &'a dyn OverlaySource,
    options: &'a BurnOptions,
    video_index: usize,
    video_tb: Rational,
    avg_rate: Rational,
    nominal_duration: i64,
    start_s: f64,
    duration_s: f64,
    rotation_cw_deg: u32,
    display_matrix: Option<Vec<u8>>,
    vdec: ffmpeg::decoder::Video,
    audio_index: Option<usize>,
    audio: AudioPlan,
    /// Converts frames whose pixel format the blender or x264 does not take to yuv420p.
    scaler: Option<ffmpeg::software::scaling::Context>,
    writer: Option<WriterHandle>,
    early_audio: Vec<Msg>,
    batch: Vec<(frame::Video, i64)>,
    last_pts: Option<i64>,
    frame_size: Option<(u32, u32, Pixel)>,
    frames: u64,
    overlaid: Arc<AtomicU64>,
    cache: OverlayCache,
    consecutive_errors: u32,
    video_end_ts: i64,
}

struct WriterHandle {
    tx: SyncSender<Msg>,
    thread: JoinHandle<Result<()>>,
}

impl<'a> Burner<'a> {
    fn new(
        input_path: &'a Path,
        ictx: Input,
        muxer: &'a str,
        output_path: &'a Path,
        overlays: &'a dyn OverlaySource,
        options: &'a BurnOptions,
    ) -> Result<Self> {
        let path = || input_path.to_owned();
        let Some(video_stream) = ictx.streams().best(media::Type::Video) else {
            return Err(Error::NoVideo { path: path() });
        };
        if ff::is_still_image(&ictx, &video_stream) {
            return Err(Error::StillImage { path: path() });
        }
        let video_index = video_stream.index();
        let video_tb = video_stream.time_base();
        let mut avg_rate = video_stream.avg_frame_rate();
        if avg_rate.numerator() <= 0 || avg_rate.denominator() <= 0 {
            avg_rate = video_stream.rate();
        }
        if avg_rate.numerator() <= 0 || avg_rate.denominator() <= 0 {
            avg_rate = Rational::new(30, 1);
        }
        let nominal_duration = (i64::from(video_tb.denominator())
            * i64::from(avg_rate.denominator()))
        .checked_div(i64::from(video_tb.numerator()) * i64::from(avg_rate.numerator()))
        .unwrap_or(1)
        .max(1);
        let rotation_cw_deg = ff::stream_rotation_cw_deg(&video_stream);
        let display_matrix = video_stream
            .side_data()
            .find(|sd| sd.kind() == codec::packet::side_data::Type::DisplayMatrix)
            .map(|sd| sd.data().to_vec());
        let vdec = open_video_decoder(&video_stream, video_tb).map_err(|err| Error::Decode {
            path: path(),
            stream: "video",
            reason: ff::describe(&err),
        })?;

        let audio_index = ff::best_stream(&ictx, media::Type::Audio);
        let audio = match audio_index.and_then(|i| ictx.stream(i)) {
            None => AudioPlan::None,
            Some(stream) => {
                let id = stream.parameters().id();
                let codec = ffmpeg::decoder::find(id)
                    .map_or_else(|| format!("{id:?}"), |c| c.name().to_owned());
                if muxer_accepts(muxer, id) {
                    AudioPlan::Copy { codec }
                } else {
                    let decoder = open_audio_decoder(&stream).map_err(|err| Error::Decode {
                        path: path(),
                        stream: "audio",
                        reason: ff::describe(&err),
                    })?;
                    AudioPlan::Encode { codec, decoder }
                }
            }
        };
        // SAFETY: reading a plain field of the open input's AVFormatContext.
        let start_ts = unsafe { (*ictx.as_ptr()).start_time };
        let start_s = if start_ts == ffmpeg::ffi::AV_NOPTS_VALUE {
            0.0
        } else {
            start_ts as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE)
        };
        let duration_s = ff::input_duration_s(&ictx);
        Ok(Self {
            input_path,
            output_path,
            muxer,
            ictx,
            overlays,
            options,
            video_index,
            video_tb,
            avg_rate,
            nominal_duration,
            start_s,
            duration_s,
            rotation_cw_deg,
            display_matrix,
            vdec,
            audio_index,
            audio,
            scaler: None,
            writer: None,
            early_audio: Vec::new(),
            batch: Vec::with_capacity(BATCH_FRAMES),
            last_pts: None,
            frame_size: None,
            frames: 0,
            overlaid: Arc::new(AtomicU64::new(0)),
            cache: OverlayCache::default(),
            consecutive_errors: 0,
            video_end_ts: 0,
        })
    }

    fn run(mut self) -> Result<BurnReport> {
        let result = self.pump();
        let writer = self.writer.take();
        match (result, writer) {
            (Ok(()), Some(writer)) => {
                let sent = writer.tx.send(Msg::Finish);
                drop(writer.tx);
                // A failed send means the writer stopped early; its own error explains why.
                join_writer(writer.thread, self.output_path)??;
                if sent.is_err() {
                    return Err(Error::Encode {
                        path: self.output_path.to_owned(),
                        reason: "the encoder stopped before the end".to_owned(),
                    });
                }
            }
            (Ok(()), None) => {
                return Err(Error::Unreadable {
                    path: self.input_path.to_owned(),
                    reason: "no video frame could be decoded".to_owned(),
                });
            }
            (Err(err), Some(writer)) => {
                drop(writer.tx);
                // The writer's own error, if any, is the consequence; the first cause wins.
                let _ = join_writer(writer.thread, self.output_path);
                return Err(err);
            }
            (Err(err), None) => return Err(err),
        }
        if let Some(progress) = &self.options.progress {
            progress(1.0);
        }
        let (width, height, format) = self.frame_size.unwrap_or((0, 0, Pixel::None));
        let (display_width, display_height) = if self.rotation_cw_deg % 180 == 90 {
            (height, width)
        } else {
            (width, height)
        };
        let audio = match &self.audio {
            AudioPlan::None => AudioOutcome::None,
            AudioPlan::Copy { codec } => AudioOutcome::Copied {
                codec: codec.clone(),
            },
            AudioPlan::Encode { codec, .. } => AudioOutcome::Reencoded {
                from_codec: codec.clone(),
            },
        };
        Ok(BurnReport {
            frames: self.frames,
            frames_with_overlay: self.overlaid.load(Ordering::Relaxed),
            video_end_s: ff::ts_to_s(self.video_end_ts, self.video_tb) - self.start_s,
            display_width,
            display_height,
            pixel_format: format
                .descriptor()
                .map_or_else(String::new, |d| d.name().to_owned()),
            audio,
            elapsed_s: 0.0,
        })
    }

    fn cancelled(&self) -> bool {
        self.options
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    fn pump(&mut self) -> Result<()> {
        loop {
            if self.cancelled() {
                return Err(Error::Cancelled {
                    path: self.output_path.to_owned(),
                });
            }
            let mut packet = Packet::empty();
            match packet.read(&mut self.ictx) {
                Ok(()) => {}
                Err(ffmpeg::Error::Eof) => break,
                Err(err) => {
                    return Err(Error::Unreadable {
                        path: self.input_path.to_owned(),
                        reason: ff::describe(&err),
                    });
                }
            }
            let index = packet.stream();
            if index == self.video_index {
                match self.vdec.send_packet(&packet) {
                    Ok(()) => self.consecutive_errors = 0,
                    Err(err) => self.note_decode_error("video", &err)?,
                }
                self.drain_video()?;
            } else if Some(index) == self.audio_index {
                self.on_audio_packet(packet)?;
            }
        }
        // Flushing decoders that saw no valid packet may fail; there is nothing left then.
        if self.vdec.send_eof().is_ok() {
            self.drain_video()?;
        }
        if let AudioPlan::Encode { decoder, .. } = &mut self.audio
            && decoder.send_eof().is_ok()
        {
            self.drain_audio()?;
        }
        self.flush_batch()
    }

    fn note_decode_error(&mut self, stream: &'static str, err: &ffmpeg::Error) -> Result<()> {
        self.consecutive_errors += 1;
        tracing::warn!(path = %self.input_path.display(), stream, %err, "skipping a packet that does not decode");
        if self.consecutive_errors > MAX_CONSECUTIVE_DECODE_ERRORS {
            return Err(Error::Unreadable {
                path: self.input_path.to_owned(),
                reason: format!("the {stream} stream does not decode: {}", ff::describe(err)),
            });
        }
        Ok(())
    }

    fn drain_video(&mut self) -> Result<()> {
        loop {
            let mut decoded = frame::Video::empty();
            match self.vdec.receive_frame(&mut decoded) {
                Ok(()) => self.on_video_frame(decoded)?,
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == ffmpeg::ffi::EAGAIN => {
                    return Ok(());
                }
                Err(err) => {
                    self.note_decode_error("video", &err)?;
                    return Ok(());
                }
            }
        }
    }

    fn on_audio_packet(&mut self, packet: Packet) -> Result<()> {
        match &mut self.audio {
            AudioPlan::None => Ok(()),
            AudioPlan::Copy { .. } => self.send_audio(Msg::AudioPacket(packet)),
            AudioPlan::Encode { decoder, .. } => {
                if let Err(err) = decoder.send_packet(&packet) {
                    tracing::warn!(path = %self.input_path.display(), %err, "skipping an audio packet that does not decode");
                }
                self.drain_audio()
            }
        }
    }

    fn drain_audio(&mut self) -> Result<()> {
        loop {
            let AudioPlan::Encode { decoder, .. } = &mut self.audio else {
                return Ok(());
            };
            let mut decoded = frame::Audio::empty();
            match decoder.receive_frame(&mut decoded) {
                Ok(()) => self.send_audio(Msg::AudioFrame(decoded))?,
                Err(_) => return Ok(()),
            }
        }
    }

    /// Audio goes straight to the writer; before the writer exists (it opens on the first
    /// video frame, whose format decides the encoder) it waits here.
    fn send_audio(&mut self, msg: Msg) -> Result<()> {
        match &self.writer {
            Some(writer) => self.send(&writer.tx, msg),
            None => {
                self.early_audio.push(msg);
                Ok(())
            }
        }
    }

    fn send(&self, tx: &SyncSender<Msg>, msg: Msg) -> Result<()> {
        // A closed channel means the writer failed; `run` joins it and reports its error.
        tx.send(msg).map_err(|_| Error::Encode {
            path: self.output_path.to_owned(),
            reason: "the encoder stopped".to_owned(),
        })
    }

    fn on_video_frame(&mut self, decoded: frame::Video) -> Result<()> {
        let Some(pts) = decoded
            .timestamp()
            .or(decoded.pts())
            .or_else(|| self.last_pts.map(|p| p + self.nominal_duration))
        else {
            return Ok(());
        };
        if self.last_pts.is_some_and(|last| pts <= last) {
            tracing::warn!(pts, "dropping a frame whose timestamp does not increase");
            return Ok(());
        }
        self.last_pts = Some(pts);
        let mut duration = decoded.packet().duration;
        if duration <= 0 {
            duration = self.nominal_duration;
        }
        let mut frame = match encode_format(decoded.format(), decoded.width(), decoded.height()) {
            None => decoded,
            Some(target) => self.convert(&decoded, target)?,
        };
        frame.set_pts(Some(pts));
        // Keep x264 free to choose frame types: a decoded frame's type would force them.
        frame.set_kind(picture::Type::None);
        match self.frame_size {
            None => self.frame_size = Some((frame.width(), frame.height(), frame.format())),
            Some(size) if size != (frame.width(), frame.height(), frame.format()) => {
                return Err(Error::Decode {
                    path: self.input_path.to_owned(),
                    stream: "video",
                    reason: format!(
                        "the picture changes size or format mid-stream ({}x{} to {}x{}), which is not supported",
                        size.0,
                        size.1,
                        frame.width(),
                        frame.height()
                    ),
                });
            }
            Some(_) => {}
        }
        if self.writer.is_none() {
            self.open_writer(&frame)?;
            for msg in std::mem::take(&mut self.early_audio) {
                self.send_audio(msg)?;
            }
        }
        self.video_end_ts = pts + duration;
        self.frames += 1;
        self.batch.push((frame, duration));
        if self.batch.len() >= BATCH_FRAMES {
            self.flush_batch()?;
        }
        Ok(())
    }

    /// Converts a frame the blender or x264 cannot take as it is (see [`encode_format`]).
    fn convert(&mut self, decoded: &frame::Video, target: Pixel) -> Result<frame::Video> {
        let (w, h, format) = (decoded.width(), decoded.height(), decoded.format());
        let stale = self.scaler.as_ref().is_none_or(|s| {
            s.input().format != format || s.input().width != w || s.input().height != h
        });
        if stale {
            let scaler = ffmpeg::software::scaling::Context::get(
                format,
                w,
                h,
                target,
                w,
                h,
                ffmpeg::software::scaling::Flags::BILINEAR,
            )
            .map_err(|err| self.decode_error(&err))?;
            self.scaler = Some(scaler);
        }
        let mut converted = frame::Video::empty();
        if let Some(scaler) = self.scaler.as_mut() {
            scaler
                .run(decoded, &mut converted)
                .map_err(|err| Error::Decode {
                    path: self.input_path.to_owned(),
                    stream: "video",
                    reason: ff::describe(&err),
                })?;
        }
        // SAFETY: both frames are valid; this copies metadata (timing, aspect ratio, colour
        // tags), not pixels.
        unsafe {
            ffmpeg::ffi::av_frame_copy_props(converted.as_mut_ptr(), decoded.as_ptr());
        }
        let source_is_yuv = format.descriptor().is_some_and(|d| {
            // SAFETY: a descriptor points at libavutil's static table; reading its flags.
            let flags = unsafe { (*d.as_ptr()).flags };
            let rgb_or_palette =
                (ffmpeg::ffi::AV_PIX_FMT_FLAG_RGB | ffmpeg::ffi::AV_PIX_FMT_FLAG_PAL) as u64;
            d.nb_components() >= 3 && flags & rgb_or_palette == 0
        });
        if !source_is_yuv {
            // swscale writes RGB sources as BT.601 limited range.
            converted.set_color_space(ffmpeg::color::Space::BT470BG);
            converted.set_color_range(ffmpeg::color::Range::MPEG);
        }
        Ok(converted)
    }

    fn decode_error(&self, err: &ffmpeg::Error) -> Error {
        Error::Decode {
            path: self.input_path.to_owned(),
            stream: "video",
            reason: ff::describe(err),
        }
    }

    /// Renders and converts this batch's overlays in parallel, then hands the frames and their
    /// overlays to the writer in order. The blend itself happens on the writer thread, just
    /// before encoding: a frame the decoder still references must be copied first, and copying
    /// there keeps one copy in flight instead of one per queued frame.
    fn flush_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_FRAMES));
        let job = BlendJob {
            overlays: self.overlays,
            cache: &self.cache,
            video_tb: self.video_tb,
            start_s: self.start_s,
            rotation_cw_deg: self.rotation_cw_deg,
            overlaid: &self.overlaid,
        };
        let overlays = batch
            .par_iter()
            .map(|(frame, _)| job.prepare(frame))
            .collect::<Result<Vec<_>>>()?;
        let batch: Vec<VideoFrame> = batch
            .into_iter()
            .zip(overlays)
            .map(|((frame, duration), overlay)| VideoFrame {
                frame,
                duration,
                overlay,
            })
            .collect();
        if let Some(progress) = &self.options.progress
            && let Some(VideoFrame { frame, .. }) = batch.last()
            && self.duration_s > 0.0
        {
            let t_s = ff::ts_to_s(frame.pts().unwrap_or(0), self.video_tb) - self.start_s;
            progress((t_s / self.duration_s).clamp(0.0, 1.0));
        }
        let tx = match &self.writer {
            Some(writer) => writer.tx.clone(),
            None => return Ok(()),
        };
        self.send(&tx, Msg::Video(batch))
    }

    fn open_writer(&mut self, first: &frame::Video) -> Result<()> {
        let encode_err = |err: ffmpeg::Error| Error::Encode {
            path: self.output_path.to_owned(),
            reason: ff::describe(&err),
        };
        let mut octx =
            ffmpeg::format::output_as(self.output_path, self.muxer).map_err(|err| Error::Io {
                path: self.output_path.to_owned(),
                source: std::io::Error::other(ff::describe(&err)),
            })?;
        let global_header = octx
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);

        let x264 = encoder::find_by_name("libx264").ok_or_else(|| Error::Encode {
            path: self.output_path.to_owned(),
            reason: "this FFmpeg has no libx264 encoder".to_owned(),
        })?;
        let mut context = codec::context::Context::new_with_codec(x264);
        context.set_threading(codec::threading::Config {
            kind: codec::threading::Type::Frame,
            count: self.options.encoder_threads,
            ..Default::default()
        });
        let mut venc = context.encoder().video().map_err(encode_err)?;
        venc.set_width(first.width());
        venc.set_height(first.height());
        venc.set_format(first.format());
        venc.set_time_base(self.video_tb);
        venc.set_frame_rate(Some(self.avg_rate));
        let sar = self.vdec.aspect_ratio();
        if sar.numerator() > 0 && sar.denominator() > 0 {
            venc.set_aspect_ratio(sar);
        }
        venc.set_colorspace(first.color_space());
        venc.set_color_range(first.color_range());
        venc.set_color_primaries(first.color_primaries());
        venc.set_color_transfer_characteristic(first.color_transfer_characteristic());
        if global_header {
            venc.set_flags(codec::Flags::GLOBAL_HEADER);
        }
        let mut x264_options = ffmpeg::Dictionary::new();
        x264_options.set("preset", &self.options.x264_preset);
        x264_options.set("crf", &format!("{}", self.options.crf));
        let venc = venc.open_as_with(x264, x264_options).map_err(encode_err)?;
        let video_out = {
            let mut ost = octx.add_stream(x264).map_err(encode_err)?;
            ost.set_parameters(&venc);
            ost.set_time_base(self.video_tb);
            ost.set_avg_frame_rate(self.avg_rate);
            if let Some(matrix) = &self.display_matrix {
                // SAFETY: `ost` is a stream of `octx`, which is alive; av_stream_new_side_data
                // returns a buffer of exactly `matrix.len()` bytes (or NULL), which we fill.
                unsafe {
                    let buffer = ffmpeg::ffi::av_stream_new_side_data(
                        ost.as_mut_ptr(),
                        ffmpeg::ffi::AVPacketSideDataType::AV_PKT_DATA_DISPLAYMATRIX,
                        matrix.len(),
                    );
                    if !buffer.is_null() {
                        std::ptr::copy_nonoverlapping(matrix.as_ptr(), buffer, matrix.len());
                    }
                }
            }
            if sar.numerator() > 0 && sar.denominator() > 0 {
                // SAFETY: plain field write on a live stream of `octx`.
                unsafe {
                    (*ost.as_mut_ptr()).sample_aspect_ratio = sar.into();
                }
            }
            ost.index()
        };

        let audio = match (
            &self.audio,
            self.audio_index.and_then(|i| self.ictx.stream(i)),
        ) {
            (AudioPlan::Copy { .. }, Some(ist)) => {
                let mut ost = octx
                    .add_stream(encoder::find(codec::Id::None))
                    .map_err(encode_err)?;
                ost.set_parameters(ist.parameters());
                ost.set_time_base(ist.time_base());
                ost.set_metadata(ist.metadata().to_owned());
                // SAFETY: the copied parameters belong to `ost`; a codec tag from another
                // container would be wrong here, 0 lets the muxer pick its own.
                unsafe {
                    (*(*ost.as_mut_ptr()).codecpar).codec_tag = 0;
                }
                WriterAudio::Copy {
                    in_tb: ist.time_base(),
                    out_index: ost.index(),
                    out_tb: Rational::new(0, 1),
                }
            }
            (AudioPlan::Encode { decoder, .. }, Some(ist)) => {
                let aac = encoder::find(codec::Id::AAC).ok_or_else(|| Error::Encode {
                    path: self.output_path.to_owned(),
                    reason: "this FFmpeg has no AAC encoder".to_owned(),
                })?;
                let rate = aac_rate(decoder.rate());
                let channels = i32::from(decoder.channels().clamp(1, 8));
                let mut aenc = codec::context::Context::new_with_codec(aac)
                    .encoder()
                    .audio()
                    .map_err(encode_err)?;
                aenc.set_rate(rate as i32);
                aenc.set_format(ffmpeg::format::Sample::F32(
                    ffmpeg::format::sample::Type::Planar,
                ));
                aenc.set_time_base(Rational::new(1, rate as i32));
                aenc.set_bit_rate(usize::try_from(64_000 * channels.min(4)).unwrap_or(128_000));
                // SAFETY: the (not yet opened) encoder context is ours; av_channel_layout_default
                // initialises its ch_layout field, which exists in every FFmpeg from 5.1 on.
                unsafe {
                    ffmpeg::ffi::av_channel_layout_default(
                        &mut (*aenc.as_mut_ptr()).ch_layout,
                        channels,
                    );
                }
                if global_header {
                    aenc.set_flags(codec::Flags::GLOBAL_HEADER);
                }
                let aenc = aenc.open_as(aac).map_err(encode_err)?;
                let mut ost = octx.add_stream(aac).map_err(encode_err)?;
                ost.set_parameters(&aenc);
                ost.set_time_base(Rational::new(1, rate as i32));
                ost.set_metadata(ist.metadata().to_owned());
                let frame_size = aenc.frame_size().max(1) as usize;
                WriterAudio::Encode(Box::new(AudioEncoder {
                    encoder: aenc,
                    in_tb: ist.time_base(),
                    out_index: ost.index(),
                    out_tb: Rational::new(0, 1),
                    rate,
                    channels,
                    frame_size,
                    resampler: None,
                    fifo: vec![Vec::new(); channels as usize],
                    next_pts: None,
                }))
            }
            _ => WriterAudio::None,
        };
        octx.set_metadata(self.ictx.metadata().to_owned());
        octx.write_header().map_err(encode_err)?;

        let video_out_tb = octx
            .stream(video_out)
            .map_or(self.video_tb, |s| s.time_base());
        let mut audio = audio;
        match &mut audio {
            WriterAudio::Copy {
                out_index, out_tb, ..
            } => {
                *out_tb = octx
                    .stream(*out_index)
                    .map_or(Rational::new(1, 1000), |s| s.time_base());
            }
            WriterAudio::Encode(enc) => {
                enc.out_tb = octx
                    .stream(enc.out_index)
                    .map_or(Rational::new(1, 1000), |s| s.time_base());
            }
            WriterAudio::None => {}
        }
        let writer = Writer {
            path: self.output_path.to_owned(),
            octx,
            venc,
            video_out,
            video_tb: self.video_tb,
            video_out_tb,
            durations: HashMap::new(),
            audio,
            pool: FramePool::default(),
        };
        let (tx, rx) = sync_channel(QUEUE_BATCHES);
        let thread = std::thread::Builder::new()
            .name("caption-media-encode".to_owned())
            .spawn(move || writer.run(&rx))
            .map_err(|source| Error::Io {
                path: self.output_path.to_owned(),
                source,
            })?;
        self.writer = Some(WriterHandle { tx, thread });
        Ok(())
    }
}

fn join_writer(thread: JoinHandle<Result<()>>, output: &Path) -> Result<Result<()>> {
    thread.join().map_err(|_| Error::Encode {
        path: output.to_owned(),
        reason: "the encoder thread panicked".to_owned(),
    })
}

fn open_video_decoder(
    stream: &ffmpeg::format::stream::Stream<'_>,
    time_base: Rational,
) -> Result<ffmpeg::decoder::Video, ffmpeg::Error> {
    let mut context = codec::context::Context::from_parameters(stream.parameters())?;
    context.set_threading(codec::threading::Config {
        kind: codec::threading::Type::Frame,
        count: 0,
        ..Default::default()
    });
    // SAFETY: plain field write on the context we own, before it is opened; decoders use it to
    // interpret packet timestamps.
    unsafe {
        (*context.as_mut_ptr()).pkt_timebase = time_base.into();
    }
    context.decoder().video()
}

fn open_audio_decoder(
    stream: &ffmpeg::format::stream::Stream<'_>,
) -> Result<ffmpeg::decoder::Audio, ffmpeg::Error> {
    let mut context = codec::context::Context::from_parameters(stream.parameters())?;
    // SAFETY: as for the video decoder.
    unsafe {
        (*context.as_mut_ptr()).pkt_timebase = stream.time_base().into();
    }
    context.decoder().audio()
}

/// Whether the named muxer stores `id` as is, in a way players read.
///
/// FFmpeg's own answer is too generous for the MP4 family (it writes Vorbis into MP4, which
/// hardly any player plays), so there only the codecs players know are copied.
fn muxer_accepts(muxer: &str, id: codec::Id) -> bool {
    use codec::Id;
    if matches!(muxer, "mp4" | "mov" | "ipod" | "3gp" | "3g2" | "psp") {
        let playable = matches!(
            id,
            Id::AAC | Id::MP3 | Id::ALAC | Id::OPUS | Id::FLAC | Id::AC3 | Id::EAC3
        ) || (muxer == "mov"
            && matches!(
                id,
                Id::PCM_S16LE | Id::PCM_S16BE | Id::PCM_S24LE | Id::PCM_F32LE
            ));
        if !playable {
            return false;
        }
    }
    let Ok(name) = CString::new(muxer) else {
        return false;
    };
    // SAFETY: av_guess_format returns a static muxer description or NULL;
    // avformat_query_codec only reads it.
    unsafe {
        let format =
            ffmpeg::ffi::av_guess_format(name.as_ptr(), std::ptr::null(), std::ptr::null());
        !format.is_null()
            && ffmpeg::ffi::avformat_query_codec(
                format,
                id.into(),
                ffmpeg::ffi::FF_COMPLIANCE_NORMAL,
            ) == 1
    }
}

/// AAC's sampling rates; anything else is resampled to the nearest one above (or 48 kHz).
fn aac_rate(input_hz: u32) -> u32 {
    const RATES: [u32; 12] = [
        8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000,
    ];
    RATES
        .iter()
        .copied()
        .find(|&r| r >= input_hz)
        .unwrap_or(48_000)
}

/// The format a decoded frame is converted to before blending, or `None` to keep it.
///
/// Formats the blender and x264 both take stay as they are. H.264 cannot code an odd width
/// or height with subsampled chroma, so such frames become 4:4:4, which keeps the exact
/// size (at the cost of the High 4:4:4 profile); every other format becomes yuv420p.
fn encode_format(format: Pixel, width: u32, height: u32) -> Option<Pixel> {
    let odd = width % 2 == 1 || height % 2 == 1;
    match layout_of(format) {
        Some(PlaneLayout::Yuv444p | PlaneLayout::Yuv444p10) => None,
        Some(PlaneLayout::Yuv422p | PlaneLayout::Yuv422p10)
            if height.is_multiple_of(2) && width.is_multiple_of(2) =>
        {
            None
        }
        Some(_) if !odd => None,
        _ if odd => Some(Pixel::YUV444P),
        _ => Some(Pixel::YUV420P),
    }
}

fn layout_of(format: Pixel) -> Option<PlaneLayout> {
    Some(match format {
        Pixel::YUV420P | Pixel::YUVJ420P => PlaneLayout::Yuv420p,
        Pixel::YUV422P | Pixel::YUVJ422P => PlaneLayout::Yuv422p,
        Pixel::YUV444P | Pixel::YUVJ444P => PlaneLayout::Yuv444p,
        Pixel::NV12 => PlaneLayout::Nv12,
        Pixel::YUV420P10LE => PlaneLayout::Yuv420p10,
        Pixel::YUV422P10LE => PlaneLayout::Yuv422p10,
        Pixel::YUV444P10LE => PlaneLayout::Yuv444p10,
        _ => return None,
    })
}

fn colorimetry_of(frame: &frame::Video) -> Colorimetry {
    use ffmpeg::color::Space;
    let matrix = match frame.color_space() {
        Space::BT709 => YuvMatrix::Bt709,
        Space::BT470BG | Space::SMPTE170M | Space::FCC => YuvMatrix::Bt601,
        Space::BT2020NCL | Space::BT2020CL => YuvMatrix::Bt2020,
        _ => YuvMatrix::default_for_height(frame.height()),
    };
    let full_range = frame.color_range() == ffmpeg::color::Range::JPEG
        || matches!(
            frame.format(),
            Pixel::YUVJ420P | Pixel::YUVJ422P | Pixel::YUVJ444P
        );
    Colorimetry { matrix, full_range }
}

/// Converted overlays, kept while the source keeps returning the same `Arc`: captions change
/// a few times a second, frames come 30-60 times a second.
type CacheEntry = (Arc<Overlay>, Colorimetry, Arc<PreparedOverlay>);

#[derive(Default)]
struct OverlayCache {
    entries: Mutex<Vec<CacheEntry>>,
}

/// Frames reach the cache nearly in time order, a batch at a time, so the last few overlays are
/// all that can hit again; each entry holds a converted copy of a caption-sized box.
const CACHE_ENTRIES: usize = 3;

impl OverlayCache {
    fn prepared(
        &self,
        overlay: &Arc<Overlay>,
        colorimetry: Colorimetry,
        build: impl FnOnce() -> Option<PreparedOverlay>,
    ) -> Option<Arc<PreparedOverlay>> {
        let lookup = |entries: &Vec<CacheEntry>| {
            entries
                .iter()
                .find(|(o, c, _)| Arc::ptr_eq(o, overlay) && *c == colorimetry)
                .map(|(_, _, p)| Arc::clone(p))
        };
        if let Ok(entries) = self.entries.lock()
            && let Some(hit) = lookup(&entries)
        {
            return Some(hit);
        }
        // Built outside the lock: two threads may race to build the same one, which only
        // costs a duplicate conversion.
        let prepared = Arc::new(build()?);
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHE_ENTRIES {
                entries.remove(0);
            }
            entries.push((Arc::clone(overlay), colorimetry, Arc::clone(&prepared)));
        }
        Some(prepared)
    }
}

struct BlendJob<'a> {
    overlays: &'a dyn OverlaySource,
    cache: &'a OverlayCache,
    video_tb: Rational,
    start_s: f64,
    rotation_cw_deg: u32,
    overlaid: &'a AtomicU64,
}

impl BlendJob<'_> {
    /// The overlay of `frame`, converted for it (and cached for the frames that follow).
    fn prepare(&self, frame: &frame::Video) -> Result<Option<(PlaneLayout, Arc<PreparedOverlay>)>> {
        let (coded_w, coded_h) = (frame.width(), frame.height());
        let (display_w, display_h) = if self.rotation_cw_deg % 180 == 90 {
            (coded_h, coded_w)
        } else {
            (coded_w, coded_h)
        };
        let t_s = ff::ts_to_s(frame.pts().unwrap_or(0), self.video_tb) - self.start_s;
        let Some(overlay) = self.overlays.overlay_at(t_s, display_w, display_h) else {
            return Ok(None);
        };
        let expected = overlay.width() as usize * overlay.height() as usize * 4;
        if overlay.rgba().len() != expected {
            return Err(Error::InvalidOverlay {
                t_s,
                reason: "RGBA buffer size does not match".to_owned(),
            });
        }
        let Some(layout) = layout_of(frame.format()) else {
            return Ok(None);
        };
        let colorimetry = colorimetry_of(frame);
        let rotation = self.rotation_cw_deg;
        let prepared = self.cache.prepared(&overlay, colorimetry, || {
            if rotation == 0 {
                PreparedOverlay::new(&overlay, layout, colorimetry, coded_w, coded_h)
            } else {
                let coded = overlay.to_coded_orientation(rotation, coded_w, coded_h);
                PreparedOverlay::new(&coded, layout, colorimetry, coded_w, coded_h)
            }
        });
        if prepared.is_some() {
            self.overlaid.fetch_add(1, Ordering::Relaxed);
        }
        Ok(prepared.map(|p| (layout, p)))
    }
}

/// Blends `overlay` into `frame`, copying the frame first (into `pool`'s buffers) when the
/// decoder still references its pictures: the blend must never alter a picture the decoder
/// predicts later frames from.
fn blend_frame(
    frame: &mut frame::Video,
    layout: PlaneLayout,
    overlay: &PreparedOverlay,
    pool: &FramePool,
) -> bool {
    if !pool.make_writable(frame, plane_rows(layout, frame.height())) {
        return false;
    }
    if let Some(mut view) = frame_view(frame, layout) {
        overlay.blend_into(&mut view);
    }
    true
}

/// The height of each plane of a `layout` frame `height` rows high (0: no such plane).
fn plane_rows(layout: PlaneLayout, height: u32) -> [usize; 3] {
    let h = height as usize;
    let chroma = match layout {
        PlaneLayout::Yuv420p | PlaneLayout::Nv12 | PlaneLayout::Yuv420p10 => h.div_ceil(2),
        _ => h,
    };
    if layout == PlaneLayout::Nv12 {
        [h, chroma, 0]
    } else {
        [h, chroma, chroma]
    }
}

/// Borrows a writable frame's planes as a [`FrameMut`], or `None` for bottom-up (negative
/// stride) frames, which decoders do not produce.
fn frame_view(frame: &mut frame::Video, layout: PlaneLayout) -> Option<FrameMut<'_>> {
    let (w, h) = (frame.width(), frame.height());
    let rows = plane_rows(layout, h);
    // SAFETY: only the pointer is taken here; it is dereferenced below under the same borrow.
    let raw = unsafe { frame.as_mut_ptr() };
    let mut planes: [&mut [u8]; 3] = [&mut [], &mut [], &mut []];
    let mut strides = [0_usize; 3];
    for (i, slot) in planes.iter_mut().enumerate() {
        if rows[i] == 0 {
            continue;
        }
        // SAFETY: `raw` is a valid, writable AVFrame of this pixel format (checked by the
        // caller), so data[i] points at a plane of at least linesize[i] * rows bytes. The
        // planes are distinct allocations (or disjoint parts of one), and the returned view
        // borrows `frame` mutably, so nothing else touches them meanwhile.
        unsafe {
            let stride = usize::try_from((*raw).linesize[i]).ok()?;
            let data = (*raw).data[i];
            if data.is_null() {
                return None;
            }
            *slot = std::slice::from_raw_parts_mut(data, stride * rows[i]);
            strides[i] = stride;
        }
    }
    Some(FrameMut {
        layout,
        width: w,
        height: h,
        planes,
        strides,
    })
}

enum WriterAudio {
    None,
    Copy {
        in_tb: Rational,
        out_index: usize,
        out_tb: Rational,
    },
    Encode(Box<AudioEncoder>),
}

struct AudioEncoder {
    encoder: encoder::Audio,
    in_tb: Rational,
    out_index: usize,
    out_tb: Rational,
    rate: u32,
    channels: i32,
    frame_size: usize,
    resampler: Option<(
        ffmpeg::software::resampling::Context,
        (ffmpeg::format::Sample, u64, u32),
    )>,
    /// Planar f32 samples waiting for a whole encoder frame (1024 for AAC).
    fifo: Vec<Vec<f32>>,
    next_pts: Option<i64>,
}

/// Owns the output: encoders and muxer, on their own thread.
struct Writer {
    path: PathBuf,
    octx: Output,
    venc: encoder::Video,
    video_out: usize,
    video_tb: Rational,
    video_out_tb: Rational,
    /// Each frame's duration by its pts, for the packet x264 makes of it (x264 does not set
    /// durations, and the container needs the last one to keep the input's length).
    durations: HashMap<i64, i64>,
    audio: WriterAudio,
    pool: FramePool,
}

impl Writer {
    fn run(mut self, rx: &Receiver<Msg>) -> Result<()> {
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Video(frames) => {
                    for VideoFrame {
                        mut frame,
                        duration,
                        overlay,
                    } in frames
                    {
                        if let Some((layout, overlay)) = overlay
                            && !blend_frame(&mut frame, layout, &overlay, &self.pool)
                        {
                            return Err(Error::Encode {
                                path: self.path.clone(),
                                reason: "out of memory copying a frame to blend into".to_owned(),
                            });
                        }
                        if let Some(pts) = frame.pts() {
                            self.durations.insert(pts, duration);
                        }
                        self.venc.send_frame(&frame).map_err(|e| self.err(&e))?;
                        self.write_video_packets()?;
                    }
                }
                Msg::AudioPacket(packet) => self.write_audio_packet(packet)?,
                Msg::AudioFrame(frame) => self.encode_audio(frame)?,
                Msg::Finish => return self.finish(),
            }
        }
        // The reader gave up: leave the file unfinished, it is about to be removed.
        Ok(())
    }

    fn err(&self, err: &ffmpeg::Error) -> Error {
        Error::Encode {
            path: self.path.clone(),
            reason: ff::describe(err),
        }
    }

    fn write_video_packets(&mut self) -> Result<()> {
        let mut packet = Packet::empty();
        loop {
            match self.venc.receive_packet(&mut packet) {
                Ok(()) => {}
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == ffmpeg::ffi::EAGAIN => {
                    return Ok(());
                }
                Err(err) => return Err(self.err(&err)),
            }
            if let Some(duration) = packet.pts().and_then(|pts| self.durations.remove(&pts))
                && packet.duration() <= 0
            {
                packet.set_duration(duration);
            }
            packet.set_stream(self.video_out);
            packet.rescale_ts(self.video_tb, self.video_out_tb);
            packet
                .write_interleaved(&mut self.octx)
                .map_err(|e| self.err(&e))?;
        }
    }

    fn write_audio_packet(&mut self, mut packet: Packet) -> Result<()> {
        let WriterAudio::Copy {
            in_tb,
            out_index,
            out_tb,
        } = self.audio
        else {
            return Ok(());
        };
        packet.set_stream(out_index);
        packet.set_position(-1);
        packet.rescale_ts(in_tb, out_tb);
        packet
            .write_interleaved(&mut self.octx)
            .map_err(|e| self.err(&e))
    }

    fn encode_audio(&mut self, mut frame: frame::Audio) -> Result<()> {
        let WriterAudio::Encode(enc) = &mut self.audio else {
            return Ok(());
        };
        if frame.samples() == 0 {
            return Ok(());
        }
        let mut layout = frame.channel_layout();
        if layout.is_empty() {
            layout = ffmpeg::ChannelLayout::default(i32::from(frame.channels()));
            frame.set_channel_layout(layout);
        }
        if enc.next_pts.is_none() {
            let start = frame.timestamp().or(frame.pts()).unwrap_or(0);
            enc.next_pts = Some(start.rescale(enc.in_tb, Rational::new(1, enc.rate as i32)));
        }
        let from = (frame.format(), layout.bits(), frame.rate());
        if enc.resampler.as_ref().is_none_or(|(_, key)| *key != from) {
            let context = ffmpeg::software::resampling::Context::get(
                from.0,
                layout,
                from.2,
                ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar),
                ffmpeg::ChannelLayout::default(enc.channels),
                enc.rate,
            )
            .map_err(|e| Error::Encode {
                path: self.path.clone(),
                reason: ff::describe(&e),
            })?;
            enc.resampler = Some((context, from));
        }
        let capacity = (frame.samples() as u64 * u64::from(enc.rate))
            .div_ceil(u64::from(from.2.max(1))) as usize
            + 256;
        let mut out = frame::Audio::new(
            ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar),
            capacity,
            ffmpeg::ChannelLayout::default(enc.channels),
        );
        if let Some((resampler, _)) = enc.resampler.as_mut() {
            resampler.run(&frame, &mut out).map_err(|e| Error::Encode {
                path: self.path.clone(),
                reason: ff::describe(&e),
            })?;
        }
        let samples = out.samples();
        for (ch, fifo) in enc.fifo.iter_mut().enumerate() {
            let plane: &[f32] = out.plane(ch);
            fifo.extend_from_slice(&plane[..samples.min(plane.len())]);
        }
        self.drain_fifo(false)
    }

    /// Encodes whole frames from the FIFO; at the end (`last`) also the short remainder.
    fn drain_fifo(&mut self, last: bool) -> Result<()> {
        loop {
            {
                let WriterAudio::Encode(enc) = &mut self.audio else {
                    return Ok(());
                };
                let available = enc.fifo.first().map_or(0, Vec::len);
                let take = if available >= enc.frame_size {
                    enc.frame_size
                } else if last && available > 0 {
                    available
                } else {
                    return Ok(());
                };
                let mut chunk = frame::Audio::new(
                    ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar),
                    take,
                    ffmpeg::ChannelLayout::default(enc.channels),
                );
                chunk.set_rate(enc.rate);
                for (ch, fifo) in enc.fifo.iter_mut().enumerate() {
                    let plane: &mut [f32] = chunk.plane_mut(ch);
                    plane[..take].copy_from_slice(&fifo[..take]);
                    fifo.drain(..take);
                }
                let pts = enc.next_pts.unwrap_or(0);
                chunk.set_pts(Some(pts));
                enc.next_pts = Some(pts + take as i64);
                enc.encoder.send_frame(&chunk).map_err(|e| Error::Encode {
                    path: self.path.clone(),
                    reason: ff::describe(&e),
                })?;
            }
            self.write_audio_encoder_packets()?;
        }
    }

    fn write_audio_encoder_packets(&mut self) -> Result<()> {
        let WriterAudio::Encode(enc) = &mut self.audio else {
            return Ok(());
        };
        let mut packet = Packet::empty();
        while enc.encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(enc.out_index);
            packet.rescale_ts(Rational::new(1, enc.rate as i32), enc.out_tb);
            packet
                .write_interleaved(&mut self.octx)
                .map_err(|e| Error::Encode {
                    path: self.path.clone(),
                    reason: ff::describe(&e),
                })?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.venc.send_eof().map_err(|e| self.err(&e))?;
        self.write_video_packets()?;
        if matches!(self.audio, WriterAudio::Encode(_)) {
            self.drain_fifo(true)?;
            if let WriterAudio::Encode(enc) = &mut self.audio {
                enc.encoder.send_eof().map_err(|e| Error::Encode {
                    path: self.path.clone(),
                    reason: ff::describe(&e),
                })?;
            }
            self.write_audio_encoder_packets()?;
        }
        self.octx.write_trailer().map_err(|e| self.err(&e))
    }
}
