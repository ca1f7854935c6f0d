use std::path::PathBuf;

use caption_core::ErrorCode;

/// Everything that can go wrong in `caption-media`. Each variant names the file it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// There is no file at this path.
    #[error("{path}: file not found")]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The file cannot be opened, is not a media file FFmpeg knows, or is damaged (truncated,
    /// corrupt) so that it cannot be read.
    #[error("{path}: unreadable media: {reason}")]
    Unreadable {
        /// The input.
        path: PathBuf,
        /// FFmpeg's complaint.
        reason: String,
    },
    /// The file is readable media but has no audio stream.
    #[error("{path}: has no audio stream")]
    NoAudio {
        /// The input.
        path: PathBuf,
    },
    /// The file is readable media but has no video stream (an audio-only file).
    #[error("{path}: has no video stream")]
    NoVideo {
        /// The input.
        path: PathBuf,
    },
    /// The file is a still image (or an audio file's cover art), not a video.
    #[error("{path}: is a still image, not a video")]
    StillImage {
        /// The input.
        path: PathBuf,
    },
    /// The video's picture is larger than a burn can handle (see
    /// [`MAX_PICTURE_PIXELS`](crate::MAX_PICTURE_PIXELS)); refused before any frame is decoded.
    #[error(
        "{path}: the picture is {width}x{height}, over the limit of {} pixels a frame (8192x4352) \
         and {} pixels a side",
        crate::MAX_PICTURE_PIXELS,
        crate::MAX_PICTURE_SIDE_PX
    )]
    TooLarge {
        /// The input.
        path: PathBuf,
        /// Width the file states, pixels.
        width: u32,
        /// Height the file states, pixels.
        height: u32,
    },
    /// The file ends before the point its own header says it lasts to: cut off while being
    /// copied, recorded or uploaded.
    #[error(
        "{path}: the file is truncated: its {stream} stops at {read_s:.1} s of the {stated_s:.1} s \
         its header states (cut off while copying or uploading?)"
    )]
    Truncated {
        /// The input.
        path: PathBuf,
        /// Which stream: `audio` or `video`.
        stream: &'static str,
        /// Where the data stops, seconds from the stream's start.
        read_s: f64,
        /// How long the header says the stream is, seconds.
        stated_s: f64,
    },
    /// The stream exists but holds nothing: an audio track with no samples, or a 0-second
    /// input.
    #[error("{path}: the {stream} stream is empty (no {}: a 0-second {stream} track)", if *stream == "audio" { "samples" } else { "frames" })]
    Empty {
        /// The input.
        path: PathBuf,
        /// Which stream: `audio` or `video`.
        stream: &'static str,
    },
    /// A stream could be opened but its decoder failed.
    #[error("{path}: cannot decode the {stream} stream: {reason}")]
    Decode {
        /// The input.
        path: PathBuf,
        /// Which stream: `audio` or `video`.
        stream: &'static str,
        /// FFmpeg's complaint.
        reason: String,
    },
    /// Encoding or writing the output failed.
    #[error("{path}: cannot encode the output: {reason}")]
    Encode {
        /// The output.
        path: PathBuf,
        /// FFmpeg's complaint.
        reason: String,
    },
    /// The output path names a container that cannot hold the output (for example `.webm` for
    /// H.264), or no container is known for its extension.
    #[error("{path}: unsupported output: {reason}")]
    UnsupportedOutput {
        /// The output path given.
        path: PathBuf,
        /// Why no container fits.
        reason: String,
    },
    /// An overlay handed in by the overlay source is malformed.
    #[error("invalid overlay at {t_s:.3} s: {reason}")]
    InvalidOverlay {
        /// The frame's presentation time, seconds (NaN when no frame was concerned).
        t_s: f64,
        /// What is wrong with it.
        reason: String,
    },
    /// A crop window handed in for a reframed burn is malformed.
    #[error("invalid crop window: {reason}")]
    InvalidCrop {
        /// What is wrong with it.
        reason: String,
    },
    /// A file-system operation on the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The output (or its temporary file).
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The caller's cancellation flag was raised; the partial output was removed.
    #[error("{path}: cancelled")]
    Cancelled {
        /// The output that was not written.
        path: PathBuf,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error. What is wrong with the input file is the caller's
    /// (`input_not_found`, `unreadable_input` also for a truncated file, `no_audio` and
    /// `no_video` also for an empty stream, `not_a_video`, `input_too_large`), as is an
    /// output path no container fits (`invalid_request`); a write that found the disk full is
    /// `disk_full`; failing to encode or write otherwise, and an overlay the program made
    /// wrong, are `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound { .. } => ErrorCode::InputNotFound,
            Self::Unreadable { .. } | Self::Decode { .. } | Self::Truncated { .. } => {
                ErrorCode::UnreadableInput
            }
            Self::TooLarge { .. } => ErrorCode::InputTooLarge,
            Self::Empty {
                stream: "audio", ..
            } => ErrorCode::NoAudio,
            Self::Empty { .. } => ErrorCode::NoVideo,
            Self::NoAudio { .. } => ErrorCode::NoAudio,
            Self::NoVideo { .. } => ErrorCode::NoVideo,
            Self::StillImage { .. } => ErrorCode::NotAVideo,
            Self::UnsupportedOutput { .. } => ErrorCode::InvalidRequest,
            Self::Cancelled { .. } => ErrorCode::Cancelled,
            Self::Io { source, .. } if ErrorCode::is_disk_full(source) => ErrorCode::DiskFull,
            Self::Encode { .. }
            | Self::InvalidOverlay { .. }
            | Self::InvalidCrop { .. }
            | Self::Io { .. } => ErrorCode::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_codes_name_what_is_wrong_with_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let missing = crate::probe(dir.path().join("missing.mp4")).unwrap_err();
        assert_eq!(missing.code(), ErrorCode::InputNotFound, "{missing}");

        let text = dir.path().join("notes.mp4");
        std::fs::write(&text, "these are not moving pictures\n".repeat(100)).unwrap();
        let unreadable = crate::probe(&text).unwrap_err();
        assert_eq!(
            unreadable.code(),
            ErrorCode::UnreadableInput,
            "{unreadable}"
        );
    }

    #[test]
    fn an_output_no_container_fits_is_the_callers_to_fix() {
        let error = crate::check_output(std::path::Path::new("out.unknown-extension")).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{error}");
    }
}
