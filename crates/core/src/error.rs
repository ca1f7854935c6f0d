use serde::{Deserialize, Serialize};

/// The JSON body of every non-200 response: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The code and message.
    pub error: ErrorDetail,
}

/// A machine-readable `code` (snake_case, stable) and a human-readable `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Stable snake_case code (the spelling of an [`ErrorCode`]).
    pub code: String,
    /// A sentence for people; may change between versions.
    pub message: String,
}

impl ErrorBody {
    /// A body of `code` and `message`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: ErrorDetail {
                code: code.into(),
                message: message.into(),
            },
        }
    }
}

/// Why a call failed, as a stable code: what a program branches on, what the HTTP service sends
/// as `error.code` and what a failed job records. New codes may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A field broke a rule; the error lists every field path and rule.
    InvalidRequest,
    /// The template, job or other named thing does not exist.
    NotFound,
    /// The job already ended and cannot be cancelled.
    AlreadyFinished,
    /// Too much work at once; try again in a moment.
    Busy,
    /// The input file does not exist.
    InputNotFound,
    /// The input cannot be read as audio or video.
    UnreadableInput,
    /// The input has no audio stream to transcribe.
    NoAudio,
    /// The input has no video stream to burn captions into.
    NoVideo,
    /// The input is a still image, not a video.
    NotAVideo,
    /// The input's picture is larger than the engine handles (the limit is in the message).
    InputTooLarge,
    /// The language is unknown, or the model does not transcribe it.
    UnsupportedLanguage,
    /// The speech model is not installed.
    ModelMissing,
    /// The input holds no speech (silence, music, noise), and words were required.
    NoSpeech,
    /// The call was cancelled.
    Cancelled,
    /// The object store (disk or bucket) is unreachable or failing; the call may work later.
    StorageUnavailable,
    /// The disk of the service's data folder (stored files, scratch space, the embedded job
    /// database) is full; the call may work once space is freed.
    DiskFull,
    /// Anything else: a fault of the machine or of the engine, not of the input.
    Internal,
}

impl ErrorCode {
    /// The code in snake case, as the HTTP service writes it: `invalid_request`, `not_found`,
    /// `no_audio`, ...
    ///
    /// ```
    /// assert_eq!(caption_core::ErrorCode::NoAudio.as_str(), "no_audio");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::NotFound => "not_found",
            Self::AlreadyFinished => "already_finished",
            Self::Busy => "busy",
            Self::InputNotFound => "input_not_found",
            Self::UnreadableInput => "unreadable_input",
            Self::NoAudio => "no_audio",
            Self::NoVideo => "no_video",
            Self::NotAVideo => "not_a_video",
            Self::InputTooLarge => "input_too_large",
            Self::UnsupportedLanguage => "unsupported_language",
            Self::ModelMissing => "model_missing",
            Self::NoSpeech => "no_speech",
            Self::Cancelled => "cancelled",
            Self::StorageUnavailable => "storage_unavailable",
            Self::DiskFull => "disk_full",
            Self::Internal => "internal",
        }
    }
}

impl ErrorCode {
    /// Whether `error`, or an error it wraps, is the system's "no space left on device" (or a
    /// disk quota reached): what makes a failed write [`ErrorCode::DiskFull`].
    ///
    /// ```
    /// use caption_core::ErrorCode;
    ///
    /// let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
    /// assert!(ErrorCode::is_disk_full(&full));
    /// assert!(!ErrorCode::is_disk_full(&std::io::Error::other("refused")));
    /// ```
    pub fn is_disk_full(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(io) = error.downcast_ref::<std::io::Error>()
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
                )
            {
                return true;
            }
            next = error.source();
        }
        false
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SubtitleFormat, import_words};

    #[test]
    fn codes_are_unique_snake_case() {
        let all = [
            ErrorCode::InvalidRequest,
            ErrorCode::NotFound,
            ErrorCode::AlreadyFinished,
            ErrorCode::Busy,
            ErrorCode::InputNotFound,
            ErrorCode::UnreadableInput,
            ErrorCode::NoAudio,
            ErrorCode::NoVideo,
            ErrorCode::NotAVideo,
            ErrorCode::InputTooLarge,
            ErrorCode::UnsupportedLanguage,
            ErrorCode::ModelMissing,
            ErrorCode::NoSpeech,
            ErrorCode::Cancelled,
            ErrorCode::StorageUnavailable,
            ErrorCode::DiskFull,
            ErrorCode::Internal,
        ];
        let names: std::collections::BTreeSet<&str> = all.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), all.len());
        for name in names {
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name}"
            );
        }
    }

    #[test]
    fn a_subtitle_file_the_caller_must_fix_is_an_invalid_request() {
        let error = import_words(
            "1\n00:00:0x,000 --> 00:00:01,000\nhello\n",
            SubtitleFormat::Srt,
        )
        .unwrap_err();
        assert_eq!(ErrorCode::from(error.code()), ErrorCode::InvalidRequest);
        let error = import_words("hello", SubtitleFormat::Text).unwrap_err();
        assert_eq!(ErrorCode::from(error.code()), ErrorCode::InvalidRequest);
    }
}
