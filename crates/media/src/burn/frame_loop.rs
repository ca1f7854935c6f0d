//! The frame loop on the calling thread: demux, decode, overlay each batch of frames in
//! parallel with rayon, and hand frames and audio to the writer thread in order.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;

use ffmpeg::format::Pixel;
use ffmpeg::format::context::Input;
use ffmpeg::{Packet, frame, picture};
use ffmpeg_next as ffmpeg;
use rayon::prelude::*;

use super::audio::AudioPlan;
use super::colour::Converter;
use super::cuts::Cuts;
use super::decode::{self, VideoInput};
use super::encode::OutputPlan;
use super::messages::{Msg, VideoFrame};
use super::options::{BurnOptions, BurnReport};
use super::overlays::{BlendJob, OverlayCache};
use super::writer::WriterHandle;
use crate::ff;
use crate::health::{FileReach, StreamHealth};
use crate::overlay::OverlaySource;
use crate::{Error, Result};

/// Frames whose overlays are rendered and converted together in one rayon batch (one per
/// core is enough: most frames reuse the previous overlay). Every frame in flight keeps a
/// decoded picture (3 MB at 1080x1920) alive, so this stays small.
const BATCH_FRAMES: usize = 2;
const MAX_CONSECUTIVE_DECODE_ERRORS: u32 = 100;

pub(super) struct Burner<'a> {
    input_path: &'a Path,
    output_path: &'a Path,
    muxer: &'a str,
    ictx: Input,
    overlays: &'a dyn OverlaySource,
    options: &'a BurnOptions,
    video: VideoInput,
    start_s: f64,
    duration_s: f64,
    audio_index: Option<usize>,
    audio: AudioPlan,
    cuts: Cuts,
    converter: Converter,
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
    video_health: StreamHealth,
    audio_health: Option<StreamHealth>,
    reach: FileReach,
}

impl<'a> Burner<'a> {
    pub(super) fn new(
        input_path: &'a Path,
        ictx: Input,
        muxer: &'a str,
        output_path: &'a Path,
        overlays: &'a dyn OverlaySource,
        options: &'a BurnOptions,
    ) -> Result<Self> {
        let video = VideoInput::open(&ictx, input_path)?;
        let cuts = Cuts::new(&options.cuts);
        let (audio_index, audio) =
            AudioPlan::for_input(&ictx, muxer, !cuts.is_empty(), input_path)?;
        let video_health = StreamHealth::new("video", video.time_base);
        let audio_health = audio_index
            .and_then(|i| ictx.stream(i))
            .map(|s| StreamHealth::new("audio", s.time_base()));
        Ok(Self {
            input_path,
            output_path,
            muxer,
            start_s: decode::start_s(&ictx),
            duration_s: ff::input_duration_s(&ictx),
            ictx,
            overlays,
            options,
            video,
            audio_index,
            audio,
            cuts,
            converter: Converter::new(options.keep_hdr),
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
            video_health,
            audio_health,
            reach: FileReach::default(),
        })
    }

    pub(super) fn run(mut self) -> Result<BurnReport> {
        let result = self.pump();
        self.finish_writer(result)?;
        if let Some(progress) = &self.options.progress {
            progress(1.0);
        }
        Ok(self.report())
    }

    /// Ends the writer after the frame loop's `result`: finished on success, abandoned on
    /// failure (the loop's error is the first cause and wins over the writer's).
    fn finish_writer(&mut self, result: Result<()>) -> Result<()> {
        match (result, self.writer.take()) {
            (Ok(()), Some(writer)) => {
                let sent = writer.tx.send(Msg::Finish);
                // A failed send means the writer stopped early; its own error explains why.
                writer.join(self.output_path)??;
                if sent.is_err() {
                    return Err(Error::Encode {
                        path: self.output_path.to_owned(),
                        reason: "the encoder stopped before the end".to_owned(),
                    });
                }
                Ok(())
            }
            (Ok(()), None) if self.video_health.packets == 0 => Err(Error::Empty {
                path: self.input_path.to_owned(),
                stream: "video",
            }),
            (Ok(()), None) => Err(Error::Unreadable {
                path: self.input_path.to_owned(),
                reason: "no video frame could be decoded".to_owned(),
            }),
            // The loop stopped because the writer had (its queue closed): the writer's own
            // error is the cause (a full disk, say).
            (Err(err), Some(writer)) => match writer.join(self.output_path) {
                Ok(Err(cause)) if is_writer_gone(&err) => Err(cause),
                _ => Err(err),
            },
            (Err(err), None) => Err(err),
        }
    }

    fn report(&self) -> BurnReport {
        let (width, height, format) = self.frame_size.unwrap_or((0, 0, Pixel::None));
        let (display_width, display_height) = if self.video.rotation_cw_deg % 180 == 90 {
            (height, width)
        } else {
            (width, height)
        };
        BurnReport {
            frames: self.frames,
            frames_with_overlay: self.overlaid.load(Ordering::Relaxed),
            video_end_s: ff::ts_to_s(self.video_end_ts, self.video.time_base) - self.start_s,
            cut_s: self.cuts.removed_before(self.duration_s),
            display_width,
            display_height,
            pixel_format: format
                .descriptor()
                .map_or_else(String::new, |d| d.name().to_owned()),
            audio: self.audio.outcome(),
            elapsed_s: 0.0,
            warnings: self.warnings(),
        }
    }

    /// What the report says about damage met on the way.
    fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        warnings.extend(self.video_health.warning(
            self.start_s,
            "captions are burned over the frames that decoded",
        ));
        if let Some(audio) = &self.audio_health {
            if audio.packets == 0 {
                warnings.push(
                    "the audio stream is empty (no samples): the output is silent".to_owned(),
                );
            }
            warnings.extend(audio.warning(self.start_s, "the sound may skip there"));
        }
        warnings
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
            self.reach.packet(&packet, &self.ictx);
            let index = packet.stream();
            if index == self.video.index {
                self.video_health.packet(&packet);
                match self.video.decoder.send_packet(&packet) {
                    Ok(()) => self.consecutive_errors = 0,
                    Err(err) => self.note_decode_error("video", &err)?,
                }
                self.drain_video()?;
            } else if Some(index) == self.audio_index {
                self.on_audio_packet(packet)?;
            }
        }
        self.video_health.check_complete(
            &self.ictx,
            self.video.index,
            self.input_path,
            &self.reach,
        )?;
        // Flushing decoders that saw no valid packet may fail; there is nothing left then.
        if self.video.decoder.send_eof().is_ok() {
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
        self.video_health.damage();
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
            match self.video.decoder.receive_frame(&mut decoded) {
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
        if let Some(health) = &mut self.audio_health {
            health.packet(&packet);
        }
        match &mut self.audio {
            AudioPlan::None => Ok(()),
            AudioPlan::Copy { .. } => self.send_audio(Msg::AudioPacket(packet)),
            AudioPlan::Encode { decoder, .. } => {
                if let Err(err) = decoder.send_packet(&packet) {
                    if let Some(health) = &mut self.audio_health {
                        health.damage();
                    }
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
            reason: WRITER_GONE.to_owned(),
        })
    }

    fn on_video_frame(&mut self, decoded: frame::Video) -> Result<()> {
        if decoded.is_corrupt() {
            self.video_health.damage();
        }
        let Some(pts) = decoded
            .timestamp()
            .or(decoded.pts())
            .or_else(|| self.last_pts.map(|p| p + self.video.nominal_duration))
        else {
            return Ok(());
        };
        if self.last_pts.is_some_and(|last| pts <= last) {
            tracing::warn!(pts, "dropping a frame whose timestamp does not increase");
            return Ok(());
        }
        self.last_pts = Some(pts);
        let t_s = ff::ts_to_s(pts, self.video.time_base) - self.start_s;
        let Some(moved_s) = self.cuts.frame(t_s) else {
            return Ok(());
        };
        let pts = pts - (moved_s / f64::from(self.video.time_base)).round() as i64;
        let mut duration = decoded.packet().duration;
        if duration <= 0 {
            duration = self.video.nominal_duration;
        }
        let mut frame = self.converter.convert(decoded, self.input_path)?;
        if let Some(crop) = &self.options.crop {
            // The window is planned on the input's timeline, before any cut moves it.
            crop.apply(&mut frame, t_s, self.video.rotation_cw_deg)?;
        }
        frame.set_pts(Some(pts));
        // Keep x264 free to choose frame types: a decoded frame's type would force them.
        frame.set_kind(picture::Type::None);
        self.check_frame_size(&frame)?;
        if self.writer.is_none() {
            self.open_writer(&frame)?;
        }
        self.video_end_ts = pts + duration;
        self.frames += 1;
        self.batch.push((frame, duration));
        if self.batch.len() >= BATCH_FRAMES {
            self.flush_batch()?;
        }
        Ok(())
    }

    /// Every frame must have the first one's size and format: the encoder is set up for it.
    fn check_frame_size(&mut self, frame: &frame::Video) -> Result<()> {
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
        Ok(())
    }

    /// Opens the output on the first frame (whose format decides the encoder's), starts the
    /// writer and sends it the audio that came before.
    fn open_writer(&mut self, first: &frame::Video) -> Result<()> {
        let writer = OutputPlan {
            path: self.output_path,
            muxer: self.muxer,
            options: self.options,
            ictx: &self.ictx,
            video: &self.video,
            audio_index: self.audio_index,
            audio: &self.audio,
            cuts: &self.cuts,
        }
        .open(first)?;
        self.writer = Some(writer.spawn()?);
        for msg in std::mem::take(&mut self.early_audio) {
            self.send_audio(msg)?;
        }
        Ok(())
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
            video_tb: self.video.time_base,
            start_s: self.start_s,
            rotation_cw_deg: self.video.rotation_cw_deg,
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
            let t_s = ff::ts_to_s(frame.pts().unwrap_or(0), self.video.time_base) - self.start_s;
            let total_s = self.duration_s - self.cuts.removed_before(self.duration_s);
            progress((t_s / total_s.max(1e-3)).clamp(0.0, 1.0));
        }
        let tx = match &self.writer {
            Some(writer) => writer.tx.clone(),
            None => return Ok(()),
        };
        self.send(&tx, Msg::Video(batch))
    }
}

/// What the frame loop says when the writer's queue closed under it.
const WRITER_GONE: &str = "the encoder stopped";

/// Whether `err` is the frame loop's [`WRITER_GONE`], which the writer's own error explains.
fn is_writer_gone(err: &Error) -> bool {
    matches!(err, Error::Encode { reason, .. } if reason == WRITER_GONE)
}
