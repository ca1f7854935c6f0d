/// Why captions could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("invalid config: {0}")]
    InvalidConfig(#[from] caption_core::ValidationErrors),
    #[error("fonts: {0}")]
    Fonts(#[from] caption_layout::Error),
    #[error("system fonts: {0}")]
    SystemFonts(#[from] caption_fonts::Error),
    #[error("frame size {width_px}x{height_px} is not drawable")]
    FrameSize { width_px: u32, height_px: u32 },
    #[error("cannot encode PNG: {0}")]
    Png(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
