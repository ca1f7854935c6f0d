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

impl Error {
    /// The stable code of this error: a style that breaks a rule, or a frame size that cannot
    /// be drawn, is `invalid_request`; font errors keep their own code; encoding PNG failing is
    /// `internal`.
    pub fn code(&self) -> caption_core::ErrorCode {
        use caption_core::ErrorCode;
        match self {
            Self::InvalidConfig(_) | Self::FrameSize { .. } => ErrorCode::InvalidRequest,
            Self::Fonts(error) => error.code(),
            Self::SystemFonts(error) => error.code(),
            Self::Png(_) => ErrorCode::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use caption_core::{Catalog, ErrorCode};

    use crate::{CaptionRenderer, DirFonts, FrameSize};

    #[test]
    fn a_style_or_frame_the_caller_got_wrong_is_an_invalid_request() {
        let fonts_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fonts");
        let fonts = Arc::new(DirFonts::open(&fonts_dir).unwrap());
        let catalog = Catalog::builtin().unwrap();
        let mut style = catalog.default_config().clone();
        // A renderer's Debug holds whole font files: only the codes are compared.
        let code = |result: crate::Result<CaptionRenderer>| result.err().map(|e| e.code());

        let empty = CaptionRenderer::new(&[], &style, FrameSize::new(0, 720), fonts.clone());
        assert_eq!(code(empty), Some(ErrorCode::InvalidRequest));

        style.font_weight = 1;
        let light = CaptionRenderer::new(&[], &style, FrameSize::new(1280, 720), fonts);
        assert_eq!(code(light), Some(ErrorCode::InvalidRequest));
    }
}
