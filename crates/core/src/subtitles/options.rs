//! How words are written as subtitles.

use crate::Config;

/// Options of [`export_words`](crate::export_words): what an ASS file is styled from. SRT,
/// WebVTT and text take no style.
///
/// ```
/// use caption_core::{Catalog, ExportOptions};
///
/// let catalog = Catalog::builtin()?;
/// let options = ExportOptions::default()
///     .with_frame_size(1920, 1080)
///     .with_config(catalog.get("karaoke").expect("a built-in template").config.clone());
/// assert_eq!(options.frame_size_px, Some((1920, 1080)));
/// # Ok::<(), caption_core::CatalogError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The video's display size, width and height in pixels (an ASS file's `PlayResX`,
    /// `PlayResY`, which its sizes and position are measured on); a portrait 1080x1920 when
    /// `None`.
    pub frame_size_px: Option<(u32, u32)>,
    /// The caption style an ASS file takes its font, size, colours, outline or box, shadow,
    /// capitalisation and position from; the built-in default template when `None`.
    pub config: Option<Config>,
}

impl ExportOptions {
    /// The video's display size in pixels.
    pub fn with_frame_size(mut self, width_px: u32, height_px: u32) -> Self {
        self.frame_size_px = Some((width_px, height_px));
        self
    }

    /// The caption style of an ASS file.
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }
}
