use caption_core::{ErrorCode, JobError, ValidationErrors};

/// Why an engine call failed. [`Error::code`] gives the stable code a program branches on (and
/// that the HTTP layer and job records carry as snake case).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Input broke a rule; every problem has its field path.
    #[error("{0}")]
    Invalid(ValidationErrors),
    /// A named thing does not exist.
    #[error("unknown {what} {id:?}")]
    NotFound {
        /// What was looked for: `template`, `job`, `file`.
        what: &'static str,
        /// Its name.
        id: String,
    },
    /// The job already ended (`COMPLETED` or `FAILED`); it cannot be cancelled.
    #[error("job {id:?} already ended ({status})")]
    Finished {
        /// The job.
        id: String,
        /// How it ended.
        status: &'static str,
    },
    /// Too much work at once; try again later.
    #[error("{message}")]
    Busy {
        /// What is busy, for people.
        message: String,
        /// About how many seconds until it may not be.
        retry_after_s: u64,
    },
    /// Reading, decoding or encoding media.
    #[error(transparent)]
    Media(#[from] caption_media::Error),
    /// Speech recognition or alignment.
    #[error(transparent)]
    Transcribe(#[from] caption_transcribe::Error),
    /// Telling speakers apart.
    #[error(transparent)]
    Speakers(#[from] caption_speakers::Error),
    /// Finding faces and planning a reframe.
    #[error(transparent)]
    Faces(#[from] caption_faces::Error),
    /// Object storage.
    #[cfg(feature = "service")]
    #[error(transparent)]
    Storage(#[from] caption_store::Error),
    /// The job store.
    #[cfg(feature = "service")]
    #[error(transparent)]
    Jobs(#[from] caption_jobs::Error),
    /// A subtitle file that cannot be read or written.
    #[error(transparent)]
    Subtitles(#[from] caption_core::SubtitleError),
    /// The installed fonts.
    #[error(transparent)]
    Fonts(#[from] caption_fonts::Error),
    /// A file operation, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// A fault of the engine, not of the input.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(path: &str, rule: impl Into<String>) -> Self {
        Self::Invalid(ValidationErrors::one(path, rule))
    }

    /// The stable code of this error.
    ///
    /// ```
    /// use caption_engine::{Error, ErrorCode};
    ///
    /// let error = Error::Busy {
    ///     message: "every slot is taken".to_owned(),
    ///     retry_after_s: 5,
    /// };
    /// assert_eq!(error.code(), ErrorCode::Busy);
    /// assert_eq!(error.code().as_str(), "busy");
    /// ```
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Invalid(_) => ErrorCode::InvalidRequest,
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::Finished { .. } => ErrorCode::AlreadyFinished,
            Self::Busy { .. } => ErrorCode::Busy,
            Self::Media(e) => e.code(),
            Self::Transcribe(e) => e.code(),
            Self::Speakers(caption_speakers::Error::ModelMissing { .. }) => ErrorCode::ModelMissing,
            Self::Speakers(_) => ErrorCode::Internal,
            Self::Faces(caption_faces::Error::ModelMissing { .. }) => ErrorCode::ModelMissing,
            Self::Faces(caption_faces::Error::BadFraming { .. }) => ErrorCode::InvalidRequest,
            Self::Faces(_) => ErrorCode::Internal,
            // What the engine reads from storage is the caller's input (an upload, a job's
            // words), so a missing object is a missing input.
            #[cfg(feature = "service")]
            Self::Storage(e) => match e.code() {
                ErrorCode::NotFound => ErrorCode::InputNotFound,
                code => code,
            },
            #[cfg(feature = "service")]
            Self::Jobs(e) => e.code(),
            Self::Subtitles(e) => e.code().into(),
            Self::Fonts(e) => e.code(),
            // Scratch files (a fetched input, a burned output) are written to the data folder.
            Self::Io { source, .. } if ErrorCode::is_disk_full(source) => ErrorCode::DiskFull,
            Self::Io { .. } | Self::Internal(_) => ErrorCode::Internal,
        }
    }

    /// A message safe to show a client: the error itself for the user's own mistakes, a generic
    /// sentence for internal failures (whose details go to the log).
    pub fn public_message(&self) -> String {
        match self.code() {
            ErrorCode::Internal => "the server could not complete the request".to_owned(),
            // Backend details (hosts, addresses) go to the log.
            ErrorCode::StorageUnavailable => "storage is unavailable; retry later".to_owned(),
            ErrorCode::DiskFull => "the server's disk is full; retry later".to_owned(),
            ErrorCode::ModelMissing if matches!(self, Self::Faces(_)) => {
                "the face detector is not installed on the server".to_owned()
            }
            ErrorCode::ModelMissing => "the speech model is not installed on the server".to_owned(),
            _ => match self {
                // Paths of server-side temporary files mean nothing to the client.
                Self::Media(e) => media_message(e),
                other => other.to_string(),
            },
        }
    }

    /// This error as a failed job's record.
    pub fn to_job_error(&self) -> JobError {
        JobError {
            code: self.code().as_str().to_owned(),
            message: self.public_message(),
        }
    }
}

fn media_message(e: &caption_media::Error) -> String {
    use caption_media::Error as M;
    match e {
        M::NoAudio { .. } => "the input has no audio stream".to_owned(),
        M::NoVideo { .. } => "the input has no video stream".to_owned(),
        M::StillImage { .. } => "the input is a still image, not a video".to_owned(),
        M::NotFound { .. } => "the input file was not found".to_owned(),
        M::Unreadable { reason, .. } => format!("the input cannot be read as media: {reason}"),
        M::Decode { stream, reason, .. } => {
            format!("the input's {stream} stream cannot be decoded: {reason}")
        }
        M::Truncated {
            stream,
            read_s,
            stated_s,
            ..
        } => format!(
            "the input is truncated: its {stream} stops at {read_s:.1} s of the {stated_s:.1} s its header states"
        ),
        M::Empty { stream, .. } => format!("the input's {stream} stream is empty (0 s long)"),
        M::TooLarge { width, height, .. } => format!(
            "the input's picture is {width}x{height}, over the limit of {} pixels a frame and {} a side",
            caption_media::MAX_PICTURE_PIXELS,
            caption_media::MAX_PICTURE_SIDE_PX
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_come_from_the_inner_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Error::from(caption_media::probe(dir.path().join("none.mp4")).unwrap_err());
        assert_eq!(missing.code(), ErrorCode::InputNotFound);

        let untimed = caption_core::import_words("hello", caption_core::SubtitleFormat::Text);
        assert_eq!(
            Error::from(untimed.unwrap_err()).code(),
            ErrorCode::InvalidRequest
        );
    }

    #[cfg(feature = "service")]
    #[test]
    fn a_missing_object_is_a_missing_input_and_a_failing_store_unavailable() {
        let missing = Error::from(caption_store::Error::NotFound {
            key: "uploads/x/clip.mp4".into(),
        });
        assert_eq!(missing.code(), ErrorCode::InputNotFound);

        let failing = Error::from(caption_store::Error::Backend {
            key: "uploads/x/clip.mp4".into(),
            source: "connection refused to 10.0.0.7:9000".into(),
        });
        assert_eq!(failing.code(), ErrorCode::StorageUnavailable);
        assert!(!failing.public_message().contains("10.0.0.7"));
        assert_eq!(failing.to_job_error().code, "storage_unavailable");
    }
}
