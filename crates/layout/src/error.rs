use std::path::PathBuf;

/// Why fonts could not be found or loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("cannot read font file {path}: {source}")]
    FontIo {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("font file {path} (face {index}) is not a usable font")]
    FontParse { path: PathBuf, index: u32 },
    #[error("no font found for family {family:?} at weight {weight}")]
    NoFont { family: String, weight: u16 },
    #[error("cannot list font folder {path}: {source}")]
    FontDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
