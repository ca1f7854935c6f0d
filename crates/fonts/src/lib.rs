//! Installed fonts, through fontconfig.
//!
//! - [`FontLibrary::families`]: family names, optionally only those that cover a language
//!   (ISO 639-1 codes like `ja`, or fontconfig tags like `zh-cn`), deduplicated and sorted.
//! - [`FontLibrary::resolve`]: a family and a CSS weight (100–900) to the file and face index
//!   of the closest upright face of exactly that family.
//! - [`FontLibrary::fallbacks_for`] and [`FontLibrary::emoji`]: faces to try for a character the
//!   chosen font lacks, and the color emoji face.

mod library;
mod weight;

pub use library::{FontFace, FontLibrary};
pub use weight::{css_from_fontconfig_weight, fontconfig_from_css_weight};

/// Why a font question could not be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("fontconfig could not be initialised")]
    Init,
    #[error(
        "unknown language code {code:?}: use an ISO 639-1 code such as \"en\" or \"ja\", or a tag such as \"zh-cn\""
    )]
    UnknownLanguage { code: String },
    #[error("font family {family:?} is not installed")]
    FamilyNotFound { family: String },
    #[error("fontconfig query failed: {context}")]
    Query { context: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
