//! The output file: which container its name asks for, and the hidden partial file it is
//! written to until the burn succeeds.

use std::ffi::CString;
use std::path::Path;

use ffmpeg_next as ffmpeg;
use tempfile::TempPath;

use crate::ff;
use crate::{Error, Result};

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

/// The output while it is written: a hidden temporary file beside the final path (same file
/// system, so persisting it is an atomic rename), removed on drop unless persisted.
pub(super) struct PartialFile {
    path: TempPath,
}

impl PartialFile {
    pub(super) fn beside(output: &Path) -> Result<Self> {
        let name = output
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("output.mp4");
        let ext = output.extension().and_then(|e| e.to_str()).unwrap_or("mp4");
        let dir = output
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let io = |source: std::io::Error| Error::Io {
            path: output.to_owned(),
            source,
        };
        if !dir.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the output folder does not exist",
            )));
        }
        let (prefix, suffix) = (format!(".{name}.partial-"), format!(".{ext}"));
        let file = crate::partial::builder(&prefix, &suffix, false)
            .tempfile_in(dir)
            .map_err(io)?;
        Ok(Self {
            path: file.into_temp_path(),
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn commit(self, output: &Path) -> Result<()> {
        self.path.persist(output).map_err(|e| Error::Io {
            path: output.to_owned(),
            source: e.error,
        })
    }
}
