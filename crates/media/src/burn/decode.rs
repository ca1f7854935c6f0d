//! The reading side's FFmpeg pieces: the input's video stream and its decoder, and the audio
//! decoder.

use std::path::Path;

use ffmpeg::format::context::Input;
use ffmpeg::{Rational, codec, media};
use ffmpeg_next as ffmpeg;

use crate::ff;
use crate::{Error, Result};

/// The input's video stream: what the burn needs to know of it, and its decoder.
pub(crate) struct VideoInput {
    pub(crate) index: usize,
    pub(crate) time_base: Rational,
    pub(crate) avg_rate: Rational,
    /// One frame's duration in `time_base` units at `avg_rate`, for frames that carry none.
    pub(crate) nominal_duration: i64,
    pub(crate) rotation_cw_deg: u32,
    pub(crate) display_matrix: Option<Vec<u8>>,
    pub(crate) decoder: ffmpeg::decoder::Video,
}

impl VideoInput {
    /// The best video stream of `ictx`, refused when there is none or it is a still image.
    pub(crate) fn open(ictx: &Input, input_path: &Path) -> Result<Self> {
        let path = || input_path.to_owned();
        let Some(stream) = ictx.streams().best(media::Type::Video) else {
            return Err(Error::NoVideo { path: path() });
        };
        if ff::is_still_image(ictx, &stream) {
            return Err(Error::StillImage { path: path() });
        }
        let time_base = stream.time_base();
        let mut avg_rate = stream.avg_frame_rate();
        if avg_rate.numerator() <= 0 || avg_rate.denominator() <= 0 {
            avg_rate = stream.rate();
        }
        if avg_rate.numerator() <= 0 || avg_rate.denominator() <= 0 {
            avg_rate = Rational::new(30, 1);
        }
        let nominal_duration = (i64::from(time_base.denominator())
            * i64::from(avg_rate.denominator()))
        .checked_div(i64::from(time_base.numerator()) * i64::from(avg_rate.numerator()))
        .unwrap_or(1)
        .max(1);
        let display_matrix = stream
            .side_data()
            .find(|sd| sd.kind() == codec::packet::side_data::Type::DisplayMatrix)
            .map(|sd| sd.data().to_vec());
        let decoder = open_video_decoder(&stream, time_base)
            .map_err(|err| ff::decode_error(input_path, "video", &err))?;
        Ok(Self {
            index: stream.index(),
            time_base,
            avg_rate,
            nominal_duration,
            rotation_cw_deg: ff::stream_rotation_cw_deg(&stream),
            display_matrix,
            decoder,
        })
    }
}

/// Where the input's timeline starts, in seconds (frames' times are reported from there).
pub(super) fn start_s(ictx: &Input) -> f64 {
    ff::input_start_s(ictx)
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

pub(super) fn open_audio_decoder(
    stream: &ffmpeg::format::stream::Stream<'_>,
) -> Result<ffmpeg::decoder::Audio, ffmpeg::Error> {
    let mut context = codec::context::Context::from_parameters(stream.parameters())?;
    // SAFETY: as for the video decoder.
    unsafe {
        (*context.as_mut_ptr()).pkt_timebase = stream.time_base().into();
    }
    context.decoder().audio()
}
