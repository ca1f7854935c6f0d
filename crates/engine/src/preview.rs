//! Preview: one caption frame as a PNG, for people choosing a style before a burn.

use std::sync::{Arc, OnceLock};

use caption_core::{Color, Config, Word};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};

use crate::generate::caption_error;
use crate::{Engine, Result};

/// The system's fonts, looked up once per process for previews: a studio asks for a dozen
/// frames at a time, and each lookup through fontconfig costs more than the frame itself.
/// (Burns make their own, so a font installed while the service runs reaches videos at once.)
static PREVIEW_FONTS: OnceLock<Arc<SystemFonts>> = OnceLock::new();

fn preview_fonts() -> Result<Arc<SystemFonts>> {
    if let Some(fonts) = PREVIEW_FONTS.get() {
        return Ok(fonts.clone());
    }
    let fonts = Arc::new(SystemFonts::new().map_err(caption_error)?);
    Ok(PREVIEW_FONTS.get_or_init(|| fonts).clone())
}

/// Size and moment of a preview frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviewFrame {
    pub width_px: u32,
    pub height_px: u32,
    /// The moment of the captions drawn, seconds.
    pub at_s: f64,
    /// What lies under the caption; `Color::rgba(0, 0, 0, 0)` leaves it transparent, to be
    /// laid over the video by the caller.
    pub background: Color,
}

impl Engine {
    /// The caption of `words` in `config` at `frame.at_s`, drawn as a burn would draw it on a
    /// video of that size, as PNG bytes (the same drawing as `captions preview`). Blocking:
    /// call it off the async runtime.
    pub fn preview_png(
        &self,
        words: &[Word],
        config: &Config,
        frame: PreviewFrame,
    ) -> Result<Vec<u8>> {
        let size = FrameSize::new(frame.width_px, frame.height_px);
        let renderer =
            CaptionRenderer::new(words, config, size, preview_fonts()?).map_err(caption_error)?;
        caption_render::frame_png(&renderer, frame.at_s, frame.background).map_err(caption_error)
    }
}
