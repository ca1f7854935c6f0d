use std::path::PathBuf;

use caption_core::ErrorCode;

/// Everything that can go wrong while loading the aligner's models or aligning.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model file could not be read.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, such as "reading".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },

    /// A model file was read but is not a model the aligner understands.
    #[error("model file {path}: {detail}")]
    Model {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// A model file is not installed (`scripts/setup-pocketsphinx` installs them).
    #[error("model file {path} is missing; run scripts/setup-pocketsphinx (make setup does)")]
    ModelMissing {
        /// Where it was looked for.
        path: PathBuf,
    },

    /// Neither `$CAPTIONS_MODELS` nor `$HOME` is set, so there is no models folder.
    #[error("cannot determine the models folder: set CAPTIONS_MODELS or HOME")]
    NoModelsDir,

    /// PocketSphinx refused the models or the audio.
    #[error("PocketSphinx: {detail}")]
    Decoder {
        /// PocketSphinx's complaint.
        detail: String,
    },

    /// A word is in neither the dictionary nor within reach of the grapheme-to-phoneme
    /// network (or that network is not installed).
    #[error(
        "no pronunciation for {word:?}: not in the dictionary, and the g2p network (or espeak-ng) gave none"
    )]
    Unpronounceable {
        /// The word as given.
        word: String,
    },

    /// espeak-ng, which says the words of languages other than English, cannot start or has no
    /// voice for the language.
    #[error("espeak-ng: {detail}")]
    Phonemizer {
        /// What went wrong.
        detail: String,
    },

    /// Every word given is punctuation or a symbol with no spoken form.
    #[error("none of the words is spoken (only symbols or punctuation)")]
    NothingToAlign,

    /// The audio is shorter than the words' phones take at the least (one 10 ms frame for each
    /// of a phone's three states): they cannot all have been said in it.
    #[error("{phones} phones take at least {needed_s:.2} s; the audio is {audio_s:.2} s")]
    TooShort {
        /// How many phones the words have.
        phones: usize,
        /// The least time they take.
        needed_s: f64,
        /// How long the audio is.
        audio_s: f64,
    },
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: a model file that is not there is `model_missing` (the
    /// files the aligner opens are all models); words with nothing to say, or a word no
    /// pronunciation can be found for, are the caller's (`invalid_request`); the rest is
    /// `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::ModelMissing { .. } => ErrorCode::ModelMissing,
            Self::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorCode::ModelMissing
            }
            Self::Unpronounceable { .. } | Self::NothingToAlign => ErrorCode::InvalidRequest,
            Self::Io { .. }
            | Self::Model { .. }
            | Self::NoModelsDir
            | Self::Decoder { .. }
            | Self::Phonemizer { .. }
            | Self::TooShort { .. } => ErrorCode::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_files_are_model_missing() {
        let dir = tempfile::tempdir().unwrap();
        let error = crate::Aligner::open(&crate::AlignerModels::in_folder(dir.path())).unwrap_err();
        assert!(matches!(error, Error::ModelMissing { .. }), "{error:?}");
        assert_eq!(error.code(), ErrorCode::ModelMissing);

        let error = crate::G2p::open(&dir.path().join("g2p.npz")).unwrap_err();
        assert_eq!(error.code(), ErrorCode::ModelMissing, "{error}");
    }

    #[test]
    fn a_model_file_that_is_not_one_is_internal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g2p.npz");
        std::fs::write(&path, b"not a zip").unwrap();
        let error = crate::G2p::open(&path).unwrap_err();
        assert_eq!(error.code(), ErrorCode::Internal, "{error}");
    }
}
