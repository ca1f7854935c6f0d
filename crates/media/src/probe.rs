use std::path::Path;

use ffmpeg::media;
use ffmpeg_next as ffmpeg;

use crate::ff;
use crate::{Error, Result};

/// Checks, before any work, that [`crate::burn`] can write `output`: its extension names a
/// container that holds H.264 and its folder exists.
///
/// # Errors
/// [`Error::UnsupportedOutput`] for the extension, [`Error::Io`] for a missing folder.
pub fn check_output(output: impl AsRef<Path>) -> Result<()> {
    let output = output.as_ref();
    crate::burn::output_muxer(output)?;
    match output.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(Error::Io {
            path: output.to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the output folder does not exist",
            ),
        }),
        _ => Ok(()),
    }
}

/// What [`probe`] finds in a media file.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MediaInfo {
    /// The container's duration (or the longest stream's when the container has none).
    pub duration_s: f64,
    /// FFmpeg's name of the container (demuxer), for example `mov,mp4,m4a,3gp,3g2,mj2`.
    pub container: String,
    /// The main video stream, absent for audio-only files. A still image or cover art counts
    /// as video here, flagged by [`VideoInfo::is_still_image`].
    pub video: Option<VideoInfo>,
    /// The main audio stream.
    pub audio: Option<AudioInfo>,
}

/// Facts about the main video stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct VideoInfo {
    /// FFmpeg's codec name, for example `h264`, `vp9`.
    pub codec: String,
    /// Coded picture width, pixels, as the decoder outputs it.
    pub width: u32,
    /// Coded picture height, pixels.
    pub height: u32,
    /// Size as a player shows it after applying the rotation (width and height swapped for a
    /// quarter turn). Sample aspect ratio is not applied: see `sample_aspect_ratio`.
    pub display_width: u32,
    /// Height as a player shows it after rotation, pixels.
    pub display_height: u32,
    /// Clockwise rotation a player applies, from the display matrix: 0, 90, 180 or 270.
    pub rotation_cw_deg: u32,
    /// Average frame rate in frames per second (0 when unknown).
    pub frame_rate_fps: f64,
    /// The same as a fraction, `(numerator, denominator)`.
    pub frame_rate: (i32, i32),
    /// Sample (pixel) aspect ratio, `(1, 1)` for square pixels or when unknown.
    pub sample_aspect_ratio: (i32, i32),
    /// FFmpeg's pixel format name, for example `yuv420p`.
    pub pixel_format: String,
    /// A lone picture or an audio file's cover art rather than a moving video.
    pub is_still_image: bool,
}

/// Facts about the main audio stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AudioInfo {
    /// FFmpeg's codec name, for example `aac`, `opus`.
    pub codec: String,
    /// Samples a second per channel.
    pub sample_rate_hz: u32,
    /// Channel count (1 mono, 2 stereo, ...).
    pub channels: u16,
}

/// Reads the duration and the main video and audio streams' facts of any file FFmpeg reads.
///
/// # Errors
/// [`Error::NotFound`] when there is no file, [`Error::Unreadable`] when it is not media FFmpeg
/// can open (an empty file, an MP4 missing its index), [`Error::Truncated`] when its own index
/// places media past its end, [`Error::TooLarge`] when its header states a picture over
/// [`MAX_PICTURE_PIXELS`](crate::MAX_PICTURE_PIXELS).
pub fn probe(path: impl AsRef<Path>) -> Result<MediaInfo> {
    let path = path.as_ref();
    let input = ff::open_input(path)?;
    let video = match input.streams().best(media::Type::Video) {
        Some(stream) => Some(video_info(&input, &stream, path)?),
        None => None,
    };
    let audio = match input.streams().best(media::Type::Audio) {
        Some(stream) => {
            let params = stream.parameters();
            let codec = codec_name(params.id());
            // SAFETY: `params` wraps the stream's live AVCodecParameters, which the input
            // context owns and keeps alive while `input` is in scope; we only read plain fields.
            let (sample_rate, channels) = unsafe {
                let p = params.as_ptr();
                ((*p).sample_rate, (*p).ch_layout.nb_channels)
            };
            Some(AudioInfo {
                codec,
                sample_rate_hz: u32::try_from(sample_rate).unwrap_or(0),
                channels: u16::try_from(channels).unwrap_or(0),
            })
        }
        None => None,
    };
    Ok(MediaInfo {
        duration_s: ff::input_duration_s(&input),
        container: input.format().name().to_owned(),
        video,
        audio,
    })
}

fn video_info(
    input: &ffmpeg::format::context::Input,
    stream: &ffmpeg::format::stream::Stream<'_>,
    path: &Path,
) -> Result<VideoInfo> {
    let params = stream.parameters();
    // SAFETY: as above, the parameters belong to the open input and are only read.
    let (width, height, sar) = unsafe {
        let p = params.as_ptr();
        ((*p).width, (*p).height, (*p).sample_aspect_ratio)
    };
    let (Ok(width), Ok(height)) = (u32::try_from(width), u32::try_from(height)) else {
        return Err(Error::Unreadable {
            path: path.to_owned(),
            reason: format!("video stream has an invalid size {width}x{height}"),
        });
    };
    let rotation_cw_deg = ff::stream_rotation_cw_deg(stream);
    let (display_width, display_height) = if rotation_cw_deg % 180 == 90 {
        (height, width)
    } else {
        (width, height)
    };
    let rate = stream.avg_frame_rate();
    let rate = if rate.denominator() != 0 && rate.numerator() != 0 {
        rate
    } else {
        stream.rate()
    };
    let frame_rate_fps = if rate.denominator() == 0 {
        0.0
    } else {
        f64::from(rate)
    };
    let pixel_format = pixel_format_name(stream.parameters());
    let sample_aspect_ratio = if sar.num > 0 && sar.den > 0 {
        (sar.num, sar.den)
    } else {
        (1, 1)
    };
    Ok(VideoInfo {
        codec: codec_name(params.id()),
        width,
        height,
        display_width,
        display_height,
        rotation_cw_deg,
        frame_rate_fps,
        frame_rate: (rate.numerator(), rate.denominator()),
        sample_aspect_ratio,
        pixel_format,
        is_still_image: ff::is_still_image(input, stream),
    })
}

fn codec_name(id: ffmpeg::codec::Id) -> String {
    match ffmpeg::decoder::find(id) {
        Some(codec) => codec.name().to_owned(),
        None => format!("{id:?}").to_lowercase(),
    }
}

fn pixel_format_name(params: ffmpeg::codec::Parameters) -> String {
    // Going through a codec context (not opened) gives the format as a typed enum that
    // libavcodec itself wrote, instead of reinterpreting the parameters' raw integer.
    let Ok(context) = ffmpeg::codec::context::Context::from_parameters(params) else {
        return "unknown".to_owned();
    };
    // SAFETY: `context` is a valid, owned AVCodecContext; reading its pix_fmt field is sound.
    let raw = unsafe { (*context.as_ptr()).pix_fmt };
    ffmpeg::format::Pixel::from(raw)
        .descriptor()
        .map_or_else(|| "unknown".to_owned(), |d| d.name().to_owned())
}
