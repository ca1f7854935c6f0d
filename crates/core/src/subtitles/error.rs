//! What can go wrong reading or writing subtitles.

/// A subtitle file that cannot be read, or words that cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubtitleError {
    /// A cue's start or end time cannot be read.
    #[error("line {line}: cannot read the {which} time in {text:?}")]
    BadTime {
        /// 1-based line of the time.
        line: usize,
        /// `start` or `end`.
        which: &'static str,
        /// The line as written.
        text: String,
    },
    /// A cue ends before it starts.
    #[error("line {line}: the cue ends ({end}) before it starts ({start})")]
    EndsBeforeStart {
        /// 1-based line of the times.
        line: usize,
        /// The start time as written.
        start: String,
        /// The end time as written.
        end: String,
    },
    /// Plain text has words but no times, so it cannot become timed words.
    #[error("plain text has no times: its words cannot be timed without the audio (align them)")]
    Untimed,
    /// No style was given for an ASS file and the built-in default template cannot be loaded.
    #[error("no style for the ASS file: {message}")]
    NoStyle {
        /// Why the default template could not be loaded.
        message: String,
    },
}

/// A stable, machine-readable kind of [`SubtitleError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SubtitleErrorCode {
    /// [`SubtitleError::BadTime`].
    BadTime,
    /// [`SubtitleError::EndsBeforeStart`].
    EndsBeforeStart,
    /// [`SubtitleError::Untimed`].
    Untimed,
    /// [`SubtitleError::NoStyle`].
    NoStyle,
}

impl SubtitleErrorCode {
    /// The code in snake_case, as an HTTP error body carries it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadTime => "bad_time",
            Self::EndsBeforeStart => "ends_before_start",
            Self::Untimed => "untimed",
            Self::NoStyle => "no_style",
        }
    }
}

impl From<SubtitleErrorCode> for crate::ErrorCode {
    /// A file that cannot be read or has no times is the caller's to fix
    /// ([`InvalidRequest`](crate::ErrorCode::InvalidRequest)); a built-in style that cannot be
    /// loaded is not ([`Internal`](crate::ErrorCode::Internal)).
    fn from(code: SubtitleErrorCode) -> Self {
        match code {
            SubtitleErrorCode::BadTime
            | SubtitleErrorCode::EndsBeforeStart
            | SubtitleErrorCode::Untimed => Self::InvalidRequest,
            SubtitleErrorCode::NoStyle => Self::Internal,
        }
    }
}

impl SubtitleError {
    /// What kind of error this is.
    pub fn code(&self) -> SubtitleErrorCode {
        match self {
            Self::BadTime { .. } => SubtitleErrorCode::BadTime,
            Self::EndsBeforeStart { .. } => SubtitleErrorCode::EndsBeforeStart,
            Self::Untimed => SubtitleErrorCode::Untimed,
            Self::NoStyle { .. } => SubtitleErrorCode::NoStyle,
        }
    }

    /// The 1-based line of the file the error is about, when it is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::BadTime { line, .. } | Self::EndsBeforeStart { line, .. } => Some(*line),
            Self::Untimed | Self::NoStyle { .. } => None,
        }
    }
}
