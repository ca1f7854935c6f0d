use std::path::PathBuf;

/// Everything that can go wrong while installing a model or transcribing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown model {name:?}; known models: {known}")]
    UnknownModel { name: String, known: String },

    #[error(
        "model file {path} is missing; install it with `captions model install {name}` (or scripts/setup-models)"
    )]
    ModelMissing { name: String, path: PathBuf },

    #[error("cannot determine the models folder: set CAPTIONS_MODELS or HOME")]
    NoModelsDir,

    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("`{command}` failed: {detail}")]
    Command { command: String, detail: String },

    #[error("wheel {path}: {detail}")]
    Wheel { path: PathBuf, detail: String },

    #[error("CTranslate2 model {what}: {detail}")]
    Ct2Format { what: String, detail: String },

    #[error("converted model {path} failed its check: {detail}")]
    Check { path: PathBuf, detail: String },

    #[error("model {path} could not be loaded by whisper.cpp: {detail}")]
    ModelLoad { path: PathBuf, detail: String },

    #[error(
        "invalid language {language:?}: expected `auto` or an ISO 639-1 code whisper knows (en, es, de, ...)"
    )]
    InvalidLanguage { language: String },

    #[error(
        "language {language:?} needs a multilingual model, but {model} is English-only; install and use `base`"
    )]
    LanguageNotSupported { language: String, model: String },

    #[error("audio contains non-finite samples (first at index {index})")]
    NonFiniteAudio { index: usize },

    #[error("reading the audio: {detail}")]
    AudioSource { detail: String },

    #[error("transcription cancelled")]
    Cancelled,

    #[error("whisper.cpp failed while {action}: {detail}")]
    Whisper {
        action: &'static str,
        detail: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
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

    pub(crate) fn whisper(action: &'static str) -> impl FnOnce(whisper_rs::WhisperError) -> Error {
        move |e| Error::Whisper {
            action,
            detail: e.to_string(),
        }
    }
}
