use std::path::PathBuf;

use caption_core::ErrorCode;

/// Why fonts could not be found or loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A font file could not be read.
    #[error("cannot read font file {path}: {source}")]
    FontIo {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// A font file was read but the face is not one the shaper can use.
    #[error("font file {path} (face {index}) is not a usable font")]
    FontParse {
        /// The file.
        path: PathBuf,
        /// The face index in the file.
        index: u32,
    },
    /// No face of the family is known to the font source.
    #[error("no font found for family {family:?} at weight {weight}")]
    NoFont {
        /// The family asked for.
        family: String,
        /// The CSS weight asked for (100–900).
        weight: u16,
    },
    /// A fonts folder could not be listed.
    #[error("cannot list font folder {path}: {source}")]
    FontDir {
        /// The folder.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: no face of the family, or no fonts folder where one was
    /// named, is `not_found`; a font file that cannot be read or parsed is `internal` (font
    /// files are the machine's, not the request's).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NoFont { .. } => ErrorCode::NotFound,
            Self::FontDir { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorCode::NotFound
            }
            Self::FontIo { .. } | Self::FontParse { .. } | Self::FontDir { .. } => {
                ErrorCode::Internal
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DirFonts, FontData, FontFile, FontSource as _};

    #[test]
    fn a_family_or_folder_that_is_not_there_is_not_found() {
        let dir = std::env::temp_dir().join(format!("caption-layout-fonts-{}", std::process::id()));
        let missing = DirFonts::open(&dir.join("missing")).unwrap_err();
        assert_eq!(missing.code(), ErrorCode::NotFound, "{missing}");

        std::fs::create_dir_all(&dir).unwrap();
        let no_font = DirFonts::open(&dir).and_then(|fonts| fonts.resolve("Nowhere Sans", 700));
        let not_a_font = dir.join("notes.ttf");
        std::fs::write(&not_a_font, b"not a font").unwrap();
        let unparsable = FontData::load(&FontFile {
            path: not_a_font,
            index: 0,
        });
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(no_font.unwrap_err().code(), ErrorCode::NotFound);
        assert_eq!(unparsable.unwrap_err().code(), ErrorCode::Internal);
    }
}
