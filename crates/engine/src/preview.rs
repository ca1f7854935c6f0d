//! Preview: one caption frame as a PNG, for people choosing a style before a burn.

use std::sync::{Arc, OnceLock};

use caption_core::{Color, Config, Word};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};

use crate::overlay::caption_error;
use crate::{Captioner, Result};

/// The system's fonts, looked up once per process for previews: a studio asks for a dozen
/// frames at a time, and each lookup through fontconfig costs more than the frame itself.
/// (Burns make their own, so a font installed while a service runs reaches videos at once.)
static PREVIEW_FONTS: OnceLock<Arc<SystemFonts>> = OnceLock::new();

fn preview_fonts() -> Result<Arc<SystemFonts>> {
    if let Some(fonts) = PREVIEW_FONTS.get() {
        return Ok(fonts.clone());
    }
    let fonts = Arc::new(SystemFonts::new().map_err(caption_error)?);
    Ok(PREVIEW_FONTS.get_or_init(|| fonts).clone())
}

/// Size and moment of a preview frame.
///
/// ```
/// use caption_engine::{Color, PreviewFrame};
///
/// let frame = PreviewFrame::new(1080, 1920, 1.5).background(Color::rgba(20, 20, 20, 255));
/// assert_eq!(frame.width_px, 1080);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PreviewFrame {
    /// Width of the video the caption is drawn for, pixels.
    pub width_px: u32,
    /// Its height, pixels.
    pub height_px: u32,
    /// The moment of the captions drawn, seconds.
    pub at_s: f64,
    /// What lies under the caption; `Color::rgba(0, 0, 0, 0)` (the default) leaves it
    /// transparent, to be laid over the video by the caller.
    pub background: Color,
}

impl PreviewFrame {
    /// A frame of `width_px` × `height_px` at `at_s` seconds, transparent around the caption.
    pub fn new(width_px: u32, height_px: u32, at_s: f64) -> Self {
        Self {
            width_px,
            height_px,
            at_s,
            background: Color::rgba(0, 0, 0, 0),
        }
    }

    /// What lies under the caption.
    #[must_use]
    pub fn background(mut self, background: Color) -> Self {
        self.background = background;
        self
    }
}

impl Captioner {
    /// The caption of `words` in `style` at `frame.at_s`, drawn as a burn would draw it on a
    /// video of that size, as PNG bytes (the same drawing as `captions preview`).
    ///
    /// ```
    /// use caption_engine::{Captioner, PreviewFrame, Word};
    ///
    /// let captioner = Captioner::builder().build()?;
    /// let words = vec![Word::new(0.0, 0.5, "Hello"), Word::new(0.5, 1.0, "world")];
    /// let style = captioner.template("karaoke")?.config;
    /// let png = captioner.preview_png(&words, &style, PreviewFrame::new(640, 360, 0.25))?;
    /// assert_eq!(&png[1..4], b"PNG");
    /// # Ok::<(), caption_engine::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) for a style that cannot
    /// be drawn (a font not installed, a rule broken).
    pub fn preview_png(
        &self,
        words: &[Word],
        style: &Config,
        frame: PreviewFrame,
    ) -> Result<Vec<u8>> {
        let size = FrameSize::new(frame.width_px, frame.height_px);
        let renderer =
            CaptionRenderer::new(words, style, size, preview_fonts()?).map_err(caption_error)?;
        caption_render::frame_png(&renderer, frame.at_s, frame.background).map_err(caption_error)
    }
}
