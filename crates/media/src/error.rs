use std::path::PathBuf;

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
