//! The output file: which container its name asks for, and the hidden partial file it is
//! written to until the burn succeeds.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ffmpeg_next as ffmpeg;

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

/// The output while it is written: a hidden file beside the final path (same file system, so
/// the final rename is atomic), removed on drop unless committed.
pub(super) struct PartialFile {
    path: PathBuf,
    committed: bool,
}

impl PartialFile {
    pub(super) fn beside(output: &Path) -> Result<Self> {
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

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn commit(mut self, output: &Path) -> Result<()> {
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
