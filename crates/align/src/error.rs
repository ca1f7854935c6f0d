use std::path::PathBuf;

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
    #[error("no pronunciation for {word:?}: not in the dictionary, and the g2p network gave none")]
    Unpronounceable {
        /// The word as given.
        word: String,
    },

    /// Every word given is punctuation or a symbol with no spoken form.
    #[error("none of the words is spoken (only symbols or punctuation)")]
    NothingToAlign,
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
