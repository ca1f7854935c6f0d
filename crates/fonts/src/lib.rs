//! Installed fonts, through fontconfig.
//!
//! - [`FontLibrary::families`]: family names, optionally only those that cover a language
//!   (ISO 639-1 codes like `ja`, or fontconfig tags like `zh-cn`), deduplicated and sorted.
//! - [`FontLibrary::resolve`]: a family and a CSS weight (100–900) to the file and face index
//!   of the closest upright face of exactly that family.
//! - [`FontLibrary::fallbacks_for`] and [`FontLibrary::emoji`]: faces to try for a character the
//!   chosen font lacks, and the color emoji face.
//!
//! ```
//! use caption_fonts::FontLibrary;
//!
//! let fonts = FontLibrary::new()?;
//! assert!(fonts.families(Some("ja"))?.iter().any(|family| family.contains("CJK")));
//! let bold = fonts.resolve("Noto Sans CJK JP", 700)?;
//! assert!(bold.path.is_file());
//! assert_eq!(bold.weight, 700);
//! # Ok::<(), caption_fonts::Error>(())
//! ```

#![warn(missing_docs)]

mod library;
mod weight;

pub use library::{FontFace, FontLibrary};
pub use weight::{css_from_fontconfig_weight, fontconfig_from_css_weight};

/// Why a font question could not be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// fontconfig did not start (its configuration could not be loaded).
    #[error("fontconfig could not be initialised")]
    Init,
    /// fontconfig has no orthography for this language code or tag.
    #[error(
        "unknown language code {code:?}: use an ISO 639-1 code such as \"en\" or \"ja\", or a tag such as \"zh-cn\""
    )]
    UnknownLanguage {
        /// The code as given.
        code: String,
    },
    /// No installed face has this family name.
    #[error("font family {family:?} is not installed")]
    FamilyNotFound {
        /// The family as given.
        family: String,
    },
    /// A fontconfig call failed.
    #[error("fontconfig query failed: {context}")]
    Query {
        /// Which query, and fontconfig's error.
        context: String,
    },
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: a language code fontconfig does not know is the caller's
    /// (`invalid_request`), a family that is not installed `not_found`, fontconfig failing
    /// `internal`.
    pub fn code(&self) -> caption_core::ErrorCode {
        use caption_core::ErrorCode;
        match self {
            Self::UnknownLanguage { .. } => ErrorCode::InvalidRequest,
            Self::FamilyNotFound { .. } => ErrorCode::NotFound,
            Self::Init | Self::Query { .. } => ErrorCode::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use caption_core::ErrorCode;

    use super::*;

    #[test]
    fn codes_say_whose_mistake_it_is() {
        let fonts = FontLibrary::new().unwrap();
        let error = fonts.families(Some("not a language")).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidRequest, "{error}");
        let error = fonts.resolve("No Such Family Anywhere", 400).unwrap_err();
        assert_eq!(error.code(), ErrorCode::NotFound, "{error}");
    }
}
