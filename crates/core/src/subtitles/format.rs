//! Which subtitle format a file is in.

use std::path::Path;

/// A subtitle file's format.
///
/// ```
/// use caption_core::SubtitleFormat;
///
/// assert_eq!(SubtitleFormat::from_path("talk.VTT".as_ref()), Some(SubtitleFormat::Vtt));
/// assert_eq!(SubtitleFormat::Ass.extension(), "ass");
/// assert_eq!(SubtitleFormat::from_extension("mp4"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SubtitleFormat {
    /// SubRip (`.srt`).
    Srt,
    /// WebVTT (`.vtt`).
    Vtt,
    /// Advanced SubStation Alpha (`.ass`, `.ssa`).
    Ass,
    /// Plain text: words without times (`.txt`).
    Text,
}

impl SubtitleFormat {
    /// Every format, in the order their extensions are listed to users.
    pub const ALL: [Self; 4] = [Self::Srt, Self::Vtt, Self::Ass, Self::Text];

    /// The format a file name's extension names (`srt`, `vtt`, `ass` or `ssa`, `txt`), in any
    /// case.
    pub fn from_extension(extension: &str) -> Option<Self> {
        match extension.to_ascii_lowercase().as_str() {
            "srt" => Some(Self::Srt),
            "vtt" => Some(Self::Vtt),
            "ass" | "ssa" => Some(Self::Ass),
            "txt" | "text" => Some(Self::Text),
            _ => None,
        }
    }

    /// The format a path's extension names.
    pub fn from_path(path: &Path) -> Option<Self> {
        Self::from_extension(path.extension()?.to_str()?)
    }

    /// The extension files of this format are written with, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Srt => "srt",
            Self::Vtt => "vtt",
            Self::Ass => "ass",
            Self::Text => "txt",
        }
    }

    /// Whether the format carries times (plain text does not).
    pub fn is_timed(self) -> bool {
        !matches!(self, Self::Text)
    }
}
