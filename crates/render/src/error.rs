/// Why captions could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The style breaks a rule of the config (every problem, with its field path).
    #[error("invalid config: {0}")]
    InvalidConfig(#[from] caption_core::ValidationErrors),
    /// The style's font, or a fallback for its text, could not be loaded.
    #[error("fonts: {0}")]
    Fonts(#[from] caption_layout::Error),
    /// fontconfig could not be asked for the system's fonts.
    #[error("system fonts: {0}")]
    SystemFonts(#[from] caption_fonts::Error),
    /// A frame side is 0 or over 16,384 pixels.
    #[error("frame size {width_px}x{height_px} is not drawable")]
    FrameSize {
        /// The width asked for, pixels.
        width_px: u32,
        /// The height asked for, pixels.
        height_px: u32,
    },
    /// A picture could not be encoded as PNG.
    #[error("cannot encode PNG: {0}")]
    Png(String),
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
