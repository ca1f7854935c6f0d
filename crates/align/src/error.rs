use std::path::PathBuf;

/// Everything that can go wrong while loading the aligner's models or aligning.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("model file {path}: {detail}")]
    Model { path: PathBuf, detail: String },

    #[error("cannot determine the models folder: set CAPTIONS_MODELS or HOME")]
    NoModelsDir,

    #[error("PocketSphinx: {detail}")]
    Decoder { detail: String },

    #[error("no pronunciation for {word:?}: not in the dictionary, and the g2p network gave none")]
    Unpronounceable { word: String },

    #[error("none of the words is spoken (only symbols or punctuation)")]
    NothingToAlign,
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
