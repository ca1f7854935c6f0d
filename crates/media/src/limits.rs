//! What an input may claim before any of it is decoded: a picture size within what the output
//! (H.264) can hold, and, when opening fails, whether an MP4's index is missing.

use std::io::Read as _;
use std::path::Path;

use ffmpeg_next as ffmpeg;

use crate::{Error, Result};

/// The most pixels a frame may have: H.264's largest level (6.2) holds 139,264 macroblocks of
/// 16x16 pixels (8192x4352), so no larger picture can be burned into a standard output. A
/// decoded 4:2:0 frame this size is 53 MB, and a burn keeps a few dozen in flight.
pub const MAX_PICTURE_PIXELS: u64 = 139_264 * 256;

/// The longest side a picture may have, pixels (x264's limit).
pub const MAX_PICTURE_SIDE_PX: u32 = 16_384;

/// Refuses a picture of `width` x `height` beyond [`MAX_PICTURE_PIXELS`] or
/// [`MAX_PICTURE_SIDE_PX`], naming the limit.
pub(crate) fn check_picture_size(path: &Path, width: u32, height: u32) -> Result<()> {
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_PICTURE_PIXELS || width > MAX_PICTURE_SIDE_PX || height > MAX_PICTURE_SIDE_PX {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            width,
            height,
        });
    }
    Ok(())
}

/// Checks the picture size every video stream of an open input states (in its header before
/// stream probing, from the stream itself after).
///
/// # Safety
/// `ctx` must point at an open `AVFormatContext`.
pub(crate) unsafe fn check_picture_sizes(
    ctx: *const ffmpeg::ffi::AVFormatContext,
    path: &Path,
) -> Result<()> {
    // SAFETY: the caller guarantees an open context; its `streams` array holds `nb_streams`
    // valid stream pointers, each with its codec parameters, which are only read here.
    unsafe {
        let streams = (*ctx).streams;
        for i in 0..(*ctx).nb_streams as usize {
            let stream = *streams.add(i);
            let params = (*stream).codecpar;
            // Cover art is one still picture that neither a burn nor a transcription uses.
            let cover_art = (*stream).disposition & ffmpeg::ffi::AV_DISPOSITION_ATTACHED_PIC != 0;
            if params.is_null()
                || cover_art
                || (*params).codec_type != ffmpeg::ffi::AVMediaType::AVMEDIA_TYPE_VIDEO
            {
                continue;
            }
            let (Ok(width), Ok(height)) = (
                u32::try_from((*params).width),
                u32::try_from((*params).height),
            ) else {
                continue;
            };
            check_picture_size(path, width, height)?;
        }
    }
    Ok(())
}

/// When a file FFmpeg cannot open is raw YUV4MPEG2 video, the size its header claims, refused
/// as [`Error::TooLarge`] when over the limit (FFmpeg refuses such a header with a bare
/// error code).
pub(crate) fn check_y4m_header(path: &Path) -> Result<()> {
    let mut header = [0u8; 256];
    let Ok(read) = std::fs::File::open(path).and_then(|mut f| f.read(&mut header)) else {
        return Ok(());
    };
    let line = header[..read]
        .split(|b| *b == b'\n')
        .next()
        .unwrap_or_default();
    let Some(params) = line.strip_prefix(b"YUV4MPEG2 ") else {
        return Ok(());
    };
    let (mut width, mut height) = (0u32, 0u32);
    for param in params.split(|b| *b == b' ') {
        let number = || std::str::from_utf8(&param[1..]).ok()?.parse::<u32>().ok();
        match param.first() {
            Some(b'W') => width = number().unwrap_or(0),
            Some(b'H') => height = number().unwrap_or(0),
            _ => {}
        }
    }
    check_picture_size(path, width, height)
}

/// When an ISO media file (MP4, MOV, M4A: its first box is `ftyp`) cannot be opened, whether
/// that is because its index (the `moov` box) is missing: a file recorded or uploaded with its
/// index at the end and cut off before it, or an index overwritten. A sentence saying so.
pub(crate) fn missing_mp4_index(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut offset = 0u64;
    let mut first = true;
    let mut saw_media_data = false;
    while offset + 8 <= len {
        let mut header = [0u8; 16];
        file.read_exact(&mut header[..8]).ok()?;
        let size32 = u64::from(u32::from_be_bytes([
            header[0], header[1], header[2], header[3],
        ]));
        let kind = [header[4], header[5], header[6], header[7]];
        if first && &kind != b"ftyp" {
            return None;
        }
        first = false;
        if &kind == b"moov" {
            return None;
        }
        saw_media_data |= &kind == b"mdat";
        let size = match size32 {
            0 => len - offset,
            1 => {
                file.read_exact(&mut header[8..16]).ok()?;
                let mut large = [0u8; 8];
                large.copy_from_slice(&header[8..16]);
                u64::from_be_bytes(large)
            }
            n => n,
        };
        let header_len = if size32 == 1 { 16 } else { 8 };
        if size < header_len {
            break;
        }
        offset = offset.saturating_add(size);
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset)).ok()?;
    }
    let cut = if offset > len {
        "the file is cut off before its end"
    } else if saw_media_data {
        "the file ends without it or it was overwritten"
    } else {
        "the file holds no media"
    };
    Some(format!(
        "the MP4/MOV index (moov atom) is missing: {cut} (truncated or damaged file)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_h264_frame_passes_and_one_more_row_or_a_longer_side_does_not() {
        let path = Path::new("in.mp4");
        assert!(check_picture_size(path, 8192, 4352).is_ok());
        assert!(check_picture_size(path, 4352, 8192).is_ok());
        assert!(check_picture_size(path, 16_384, 128).is_ok());
        for (w, h) in [(8192, 4353), (16_385, 16), (16, 16_385), (16_384, 16_384)] {
            let error = check_picture_size(path, w, h).unwrap_err();
            assert_eq!(error.code(), caption_core::ErrorCode::InputTooLarge);
            assert!(error.to_string().contains(&format!("{w}x{h}")), "{error}");
        }
    }

    fn boxes(list: &[(&[u8; 4], usize)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (kind, size) in list {
            bytes.extend_from_slice(&u32::try_from(*size).unwrap().to_be_bytes());
            bytes.extend_from_slice(*kind);
            bytes.resize(bytes.len() + size - 8, 0);
        }
        bytes
    }

    #[test]
    fn a_raw_yuv4mpeg_header_is_held_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("raw.y4m");
        std::fs::write(&file, b"YUV4MPEG2 W16384 H16384 F25:1 C420jpeg\nFRAME\n").unwrap();
        let error = check_y4m_header(&file).unwrap_err();
        assert!(error.to_string().contains("16384x16384"), "{error}");
        std::fs::write(&file, b"YUV4MPEG2 W1920 H1080 F25:1 C420jpeg\nFRAME\n").unwrap();
        assert!(check_y4m_header(&file).is_ok());
        std::fs::write(&file, b"not a y4m file").unwrap();
        assert!(check_y4m_header(&file).is_ok());
    }

    #[test]
    fn an_mp4_without_its_moov_is_told_apart_from_one_cut_off_and_from_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clip.mp4");
        let said = |bytes: &[u8]| {
            std::fs::write(&file, bytes).unwrap();
            missing_mp4_index(&file)
        };
        let whole = boxes(&[(b"ftyp", 24), (b"mdat", 1000), (b"moov", 200)]);
        assert_eq!(said(&whole), None);
        let moov_first = boxes(&[(b"ftyp", 24), (b"moov", 200), (b"mdat", 1000)]);
        assert_eq!(said(&moov_first[..600]), None, "the index came first");
        let cut = said(&whole[..600]).unwrap();
        assert!(
            cut.contains("moov atom) is missing: the file is cut off"),
            "{cut}"
        );
        let mut overwritten = whole.clone();
        overwritten[1024..].fill(0);
        let zeroed = said(&overwritten).unwrap();
        assert!(zeroed.contains("overwritten"), "{zeroed}");
        assert_eq!(said(b"RIFF\x00\x00\x00\x00WAVEfmt "), None, "not an MP4");
    }
}
