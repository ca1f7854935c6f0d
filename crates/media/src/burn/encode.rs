//! Opening the output: the container, the video encoder (libx264, or libx265 when HDR is
//! kept) set up like the first frame (size, format, colour tags) and the input's video
//! (timing, aspect ratio, rotation), the audio stream, the header (`faststart` for MP4/MOV).

use std::collections::HashMap;
use std::path::Path;

use ffmpeg::format::context::{Input, Output};
use ffmpeg::{Codec, Rational, codec, encoder, frame};
use ffmpeg_next as ffmpeg;

use super::audio::{AudioPlan, WriterAudio};
use super::colour::is_hdr;
use super::cuts::Cuts;
use super::decode::VideoInput;
use super::options::BurnOptions;
use super::writer::Writer;
use crate::ff;
use crate::pool::FramePool;
use crate::{Error, Result};

/// Everything the output is made from, but the first frame.
pub(super) struct OutputPlan<'a> {
    pub(super) path: &'a Path,
    pub(super) muxer: &'a str,
    pub(super) options: &'a BurnOptions,
    pub(super) ictx: &'a Input,
    pub(super) video: &'a VideoInput,
    pub(super) audio_index: Option<usize>,
    pub(super) audio: &'a AudioPlan,
    pub(super) cuts: &'a Cuts,
}

impl OutputPlan<'_> {
    /// Creates the output file and writes its header; the encoder takes `first`'s size,
    /// format and colour tags.
    pub(super) fn open(&self, first: &frame::Video) -> Result<Writer> {
        let mut octx =
            ffmpeg::format::output_as(self.path, self.muxer).map_err(|err| Error::Io {
                path: self.path.to_owned(),
                source: std::io::Error::other(ff::describe(&err)),
            })?;
        let global_header = octx
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let sample_aspect = self.video.decoder.aspect_ratio();
        let (vcodec, venc) = self.open_video_encoder(first, sample_aspect, global_header)?;
        let video_out = self.add_video_stream(&mut octx, vcodec, &venc, sample_aspect)?;
        let audio_in = self.audio_index.and_then(|i| self.ictx.stream(i));
        let mut audio = WriterAudio::add_stream(
            self.audio,
            audio_in,
            &mut octx,
            global_header,
            (self.cuts, ff::input_start_s(self.ictx)),
            self.path,
        )?;
        octx.set_metadata(self.ictx.metadata().to_owned());
        let mut muxer_options = ffmpeg::Dictionary::new();
        if matches!(self.muxer, "mp4" | "mov") {
            // The index goes before the media (a second pass at the end), so players and
            // browsers start before the whole file has arrived.
            muxer_options.set("movflags", "+faststart");
        }
        octx.write_header_with(muxer_options)
            .map_err(|e| self.err(&e))?;

        let video_out_tb = octx
            .stream(video_out)
            .map_or(self.video.time_base, |s| s.time_base());
        audio.header_written(&octx);
        Ok(Writer {
            path: self.path.to_owned(),
            octx,
            venc,
            video_out,
            video_tb: self.video.time_base,
            video_out_tb,
            durations: HashMap::new(),
            audio,
            pool: FramePool::default(),
        })
    }

    fn err(&self, err: &ffmpeg::Error) -> Error {
        ff::encode_error(self.path, err)
    }

    fn open_video_encoder(
        &self,
        first: &frame::Video,
        sample_aspect: Rational,
        global_header: bool,
    ) -> Result<(Codec, encoder::Video)> {
        // Only frames of a kept HDR input still carry an HDR transfer here (the others were
        // tone-mapped to BT.709 on the way).
        let hevc = is_hdr(first.color_transfer_characteristic());
        let name = if hevc { "libx265" } else { "libx264" };
        let vcodec = encoder::find_by_name(name).ok_or_else(|| Error::Encode {
            path: self.path.to_owned(),
            reason: format!("this FFmpeg has no {name} encoder"),
        })?;
        let mut context = codec::context::Context::new_with_codec(vcodec);
        context.set_threading(codec::threading::Config {
            kind: codec::threading::Type::Frame,
            count: self.options.encoder_threads,
            ..Default::default()
        });
        let mut venc = context.encoder().video().map_err(|e| self.err(&e))?;
        venc.set_width(first.width());
        venc.set_height(first.height());
        venc.set_format(first.format());
        venc.set_time_base(self.video.time_base);
        venc.set_frame_rate(Some(self.video.avg_rate));
        if is_set(sample_aspect) {
            venc.set_aspect_ratio(sample_aspect);
        }
        venc.set_colorspace(first.color_space());
        venc.set_color_range(first.color_range());
        venc.set_color_primaries(first.color_primaries());
        venc.set_color_transfer_characteristic(first.color_transfer_characteristic());
        if global_header {
            venc.set_flags(codec::Flags::GLOBAL_HEADER);
        }
        let mut encoder_options = ffmpeg::Dictionary::new();
        encoder_options.set("preset", &self.options.x264_preset);
        encoder_options.set("crf", &format!("{}", self.options.crf));
        if hevc {
            encoder_options.set("x265-params", "log-level=error");
        }
        let venc = venc
            .open_as_with(vcodec, encoder_options)
            .map_err(|e| self.err(&e))?;
        Ok((vcodec, venc))
    }

    /// Adds the video stream, with the input's rotation and aspect ratio; returns its index.
    fn add_video_stream(
        &self,
        octx: &mut Output,
        vcodec: Codec,
        venc: &encoder::Video,
        sample_aspect: Rational,
    ) -> Result<usize> {
        let mut ost = octx.add_stream(vcodec).map_err(|e| self.err(&e))?;
        ost.set_parameters(venc);
        if venc.id() == codec::Id::HEVC && matches!(self.muxer, "mp4" | "mov") {
            // `hvc1` (parameter sets in the sample description) is the tag QuickTime and
            // Apple's players require; FFmpeg's default `hev1` does not play there.
            // SAFETY: plain field write on a live stream's codec parameters, before the header.
            unsafe {
                (*(*ost.as_mut_ptr()).codecpar).codec_tag = u32::from_le_bytes(*b"hvc1");
            }
        }
        ost.set_time_base(self.video.time_base);
        ost.set_avg_frame_rate(self.video.avg_rate);
        if let Some(matrix) = &self.video.display_matrix {
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
        if is_set(sample_aspect) {
            // SAFETY: plain field write on a live stream of `octx`.
            unsafe {
                (*ost.as_mut_ptr()).sample_aspect_ratio = sample_aspect.into();
            }
        }
        Ok(ost.index())
    }
}

/// Whether a sample aspect ratio is known (FFmpeg says 0/1 or 0/0 when it is not).
fn is_set(ratio: Rational) -> bool {
    ratio.numerator() > 0 && ratio.denominator() > 0
}
