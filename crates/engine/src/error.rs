use caption_core::{JobError, ValidationErrors};

/// Why an engine operation failed. [`Error::code`] gives the stable snake_case code the HTTP
/// layer and job records carry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Input broke a rule; every problem has its field path.
    #[error("{0}")]
    Invalid(ValidationErrors),
    #[error("unknown {what} {id:?}")]
    NotFound { what: &'static str, id: String },
    /// The job already ended (`COMPLETED` or `FAILED`); it cannot be cancelled.
    #[error("job {id:?} already ended ({status})")]
    Finished { id: String, status: &'static str },
    /// Too much work at once; try again later.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Media(#[from] caption_media::Error),
    #[error(transparent)]
    Transcribe(#[from] caption_transcribe::Error),
    #[error(transparent)]
    Storage(#[from] caption_store::Error),
    #[error(transparent)]
    Jobs(#[from] caption_jobs::Error),
    #[error(transparent)]
    Fonts(#[from] caption_fonts::Error),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn invalid(path: &str, rule: impl Into<String>) -> Self {
        Self::Invalid(ValidationErrors::one(path, rule))
    }

    /// The stable error code: `invalid_request`, `not_found`, `no_audio`, `unreadable_input`,
    /// `unsupported_language`, `input_not_found`, `busy`, `internal`, ...
    pub fn code(&self) -> &'static str {
        use caption_media::Error as M;
        use caption_transcribe::Error as T;
        match self {
            Self::Invalid(_) => "invalid_request",
            Self::NotFound { .. } => "not_found",
            Self::Finished { .. } => "already_finished",
            Self::Busy(_) => "busy",
            Self::Media(M::NoAudio { .. }) => "no_audio",
            Self::Media(M::NoVideo { .. }) => "no_video",
            Self::Media(M::StillImage { .. }) => "not_a_video",
            Self::Media(M::Unreadable { .. } | M::Decode { .. }) => "unreadable_input",
            Self::Media(M::NotFound { .. }) => "input_not_found",
            Self::Media(M::Cancelled { .. }) | Self::Transcribe(T::Cancelled) => "cancelled",
            Self::Transcribe(T::InvalidLanguage { .. } | T::LanguageNotSupported { .. }) => {
                "unsupported_language"
            }
            Self::Transcribe(T::ModelMissing { .. }) => "model_missing",
            Self::Storage(caption_store::Error::NotFound { .. }) => "input_not_found",
            Self::Fonts(caption_fonts::Error::UnknownLanguage { .. }) => "invalid_request",
            _ => "internal",
        }
    }

    /// A message safe to show a client: the error itself for the user's own mistakes, a generic
    /// sentence for internal failures (whose details go to the log).
    pub fn public_message(&self) -> String {
        match self.code() {
            "internal" => "the server could not complete the request".to_owned(),
            "model_missing" => "the speech model is not installed on the server".to_owned(),
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
            code: self.code().to_owned(),
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
        other => other.to_string(),
    }
}
