//! Small shared pieces over `ffmpeg-next`: one-time initialisation, opening inputs with errors
//! that carry the path, and stream facts that several modules need.

use std::ffi::CString;
use std::path::Path;
use std::sync::Once;

use ffmpeg::format::context::Input;
use ffmpeg::media;
use ffmpeg_next as ffmpeg;

use caption_core::ErrorCode;

use crate::{Error, Result, limits};

/// Initialises FFmpeg once per process and keeps libav's own stderr chatter to errors only:
/// problems reach the caller as [`Error`]s and `tracing` events instead.
pub(crate) fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        if let Err(err) = ffmpeg::init() {
            tracing::error!(%err, "FFmpeg initialisation failed");
        }
        ffmpeg::log::set_level(ffmpeg::log::Level::Fatal);
    });
}

pub(crate) fn open_input(path: &Path) -> Result<Input> {
    init();
    let unreadable = |reason: String| Error::Unreadable {
        path: path.to_owned(),
        reason,
    };
    match std::fs::metadata(path) {
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NotFound {
                path: path.to_owned(),
            });
        }
        Err(source) => return Err(unreadable(source.to_string())),
        Ok(meta) if meta.is_file() && meta.len() == 0 => {
            return Err(unreadable("the file is empty (0 bytes)".to_owned()));
        }
        Ok(_) => {}
    }
    let c_path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| unreadable("the path has a NUL byte".to_owned()))?;
    let mut ps = std::ptr::null_mut();
    // SAFETY: `c_path` is NUL-terminated; on success `ps` is an open AVFormatContext that we
    // close on every early return or hand to `Input::wrap`, which closes it on drop.
    unsafe {
        let opened = ffmpeg::ffi::avformat_open_input(
            &mut ps,
            c_path.as_ptr(),
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        if opened < 0 {
            limits::check_y4m_header(path)?;
            let err = ffmpeg::Error::from(opened);
            return Err(unreadable(
                limits::missing_mp4_index(path).unwrap_or_else(|| describe(&err)),
            ));
        }
        // Sizes the header states are checked before stream probing decodes a first frame.
        if let Err(err) = limits::check_picture_sizes(ps, path) {
            ffmpeg::ffi::avformat_close_input(&mut ps);
            return Err(err);
        }
        let probed = ffmpeg::ffi::avformat_find_stream_info(ps, std::ptr::null_mut());
        if probed < 0 {
            ffmpeg::ffi::avformat_close_input(&mut ps);
            return Err(unreadable(describe(&ffmpeg::Error::from(probed))));
        }
        // Formats that carry the size in the stream itself (raw H.264, MPEG-TS) know it now.
        if let Err(err) = limits::check_picture_sizes(ps, path) {
            ffmpeg::ffi::avformat_close_input(&mut ps);
            return Err(err);
        }
        let input = Input::wrap(ps);
        check_index_within_file(&input, path)?;
        Ok(input)
    }
}

/// FFmpeg's own words for an error, plus a hint for the few codes whose text means little to a
/// user of a captioning tool.
pub(crate) fn describe(err: &ffmpeg::Error) -> String {
    match err {
        ffmpeg::Error::InvalidData => {
            "invalid data found when processing input (corrupt or truncated file?)".to_owned()
        }
        other => other.to_string(),
    }
}

/// The display rotation of a video stream in degrees clockwise (0, 90, 180 or 270), read from
/// its display-matrix side data. Players rotate the coded picture by this much to show it.
pub(crate) fn stream_rotation_cw_deg(stream: &ffmpeg::format::stream::Stream<'_>) -> u32 {
    for side in stream.side_data() {
        if side.kind() == ffmpeg::codec::packet::side_data::Type::DisplayMatrix
            && let Some(deg) = display_matrix_rotation_cw_deg(side.data())
        {
            return deg;
        }
    }
    0
}

/// Decodes the 3x3 display matrix (nine native-endian i32, 16.16 fixed point for the 2x2 part)
/// the way FFmpeg's `av_display_rotation_get` does, negated to clockwise and snapped to a
/// quarter turn; odd angles and flips are rare enough in real files to be treated as upright.
pub(crate) fn display_matrix_rotation_cw_deg(data: &[u8]) -> Option<u32> {
    if data.len() < 36 {
        return None;
    }
    let m = |i: usize| -> f64 {
        let bytes = [
            data[4 * i],
            data[4 * i + 1],
            data[4 * i + 2],
            data[4 * i + 3],
        ];
        f64::from(i32::from_ne_bytes(bytes))
    };
    let scale0 = m(0).hypot(m(3));
    let scale1 = m(1).hypot(m(4));
    if scale0 == 0.0 || scale1 == 0.0 {
        return None;
    }
    let ccw_deg = -(m(1) / scale1).atan2(m(0) / scale0).to_degrees();
    let cw_deg = (-ccw_deg).rem_euclid(360.0);
    let quarter_turns = (cw_deg / 90.0).round() as u32 % 4;
    Some(quarter_turns * 90)
}

/// Whether a video stream is really a still picture: a lone image file, or cover art attached
/// to an audio file.
pub(crate) fn is_still_image(input: &Input, stream: &ffmpeg::format::stream::Stream<'_>) -> bool {
    if stream
        .disposition()
        .contains(ffmpeg::format::stream::Disposition::ATTACHED_PIC)
    {
        return true;
    }
    let demuxer = input.format().name().to_owned();
    demuxer == "image2" || demuxer.ends_with("_pipe") || demuxer == "webp_pipe"
}

pub(crate) fn best_stream(input: &Input, kind: media::Type) -> Option<usize> {
    input.streams().best(kind).map(|s| s.index())
}

/// A time in seconds from a timestamp in `time_base` units.
pub(crate) fn ts_to_s(ts: i64, time_base: ffmpeg::Rational) -> f64 {
    if time_base.denominator() == 0 {
        return 0.0;
    }
    ts as f64 * f64::from(time_base.numerator()) / f64::from(time_base.denominator())
}

/// Where the input's timeline starts, in seconds (0 when the container does not say).
pub(crate) fn input_start_s(input: &Input) -> f64 {
    // SAFETY: reading a plain field of the open input's AVFormatContext.
    let start_ts = unsafe { (*input.as_ptr()).start_time };
    if start_ts == ffmpeg::ffi::AV_NOPTS_VALUE {
        0.0
    } else {
        start_ts as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE)
    }
}

/// The container's duration in seconds, or the longest stream's when the container has none.
pub(crate) fn input_duration_s(input: &Input) -> f64 {
    let container = input.duration();
    if container > 0 {
        return container as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE);
    }
    input
        .streams()
        .filter(|s| s.duration() > 0)
        .map(|s| ts_to_s(s.duration(), s.time_base()))
        .fold(0.0, f64::max)
}

/// Before any packet is read: an error when the input's own index (an MP4's sample table, an
/// AVI's or a Matroska file's cues) places media past the end of the file. A file cut off is
/// then known at once, not at the end of an hour-long transcription.
pub(crate) fn check_index_within_file(input: &Input, path: &Path) -> Result<()> {
    let Ok(len) = std::fs::metadata(path).map(|m| m.len()) else {
        return Ok(());
    };
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    for stream in input.streams() {
        let name = match stream.parameters().medium() {
            media::Type::Video => "video",
            media::Type::Audio => "audio",
            _ => continue,
        };
        let mut first_missing_ts: Option<i64> = None;
        // SAFETY: `st` is a stream of the open input; the index functions only read its
        // entries, and each entry is read before the next call.
        unsafe {
            let st = stream.as_ptr().cast_mut();
            for i in 0..ffmpeg::ffi::avformat_index_get_entries_count(st) {
                let entry = ffmpeg::ffi::avformat_index_get_entry(st, i);
                if entry.is_null() {
                    break;
                }
                if (*entry).pos >= len {
                    let ts = (*entry).timestamp;
                    first_missing_ts = Some(first_missing_ts.map_or(ts, |t| t.min(ts)));
                }
            }
        }
        let Some(missing_ts) = first_missing_ts else {
            continue;
        };
        let start_ts = match stream.start_time() {
            ffmpeg::ffi::AV_NOPTS_VALUE => 0,
            ts => ts,
        };
        let stated_s = if stream.duration() > 0 {
            ts_to_s(stream.duration(), stream.time_base())
        } else {
            input_duration_s(input)
        };
        return Err(Error::Truncated {
            path: path.to_owned(),
            stream: name,
            read_s: ts_to_s(missing_ts - start_ts, stream.time_base()).max(0.0),
            stated_s,
        });
    }
    Ok(())
}

/// An [`Error::Encode`] of the output at `path`, in FFmpeg's words; a write that found the
/// disk full (or over its quota) is the [`Error::Io`] of that, so that it reads as `disk_full`.
pub(crate) fn encode_error(path: &Path, err: &ffmpeg::Error) -> Error {
    if let ffmpeg::Error::Other { errno } = *err {
        let source = std::io::Error::from_raw_os_error(errno);
        if ErrorCode::is_disk_full(&source) {
            return Error::Io {
                path: path.to_owned(),
                source,
            };
        }
    }
    Error::Encode {
        path: path.to_owned(),
        reason: describe(err),
    }
}

/// An [`Error::Decode`] of `stream` in the input at `path`, in FFmpeg's words.
pub(crate) fn decode_error(path: &Path, stream: &'static str, err: &ffmpeg::Error) -> Error {
    Error::Decode {
        path: path.to_owned(),
        stream,
        reason: describe(err),
    }
}
