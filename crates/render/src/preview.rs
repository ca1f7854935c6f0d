//! Still images for people: one frame, or contact sheets of one labelled frame per word.

use std::sync::Arc;

use caption_core::{
    CapitalizationType, Color, ColorSet, DisplayEmojis, DisplayMode, EffectType, Position,
    SpokenMode, Word,
};
use caption_layout::{FontSource, FrameSize};
use tiny_skia::{FilterQuality, Pixmap, PixmapPaint, Transform};

use crate::{CaptionRenderer, Error, Result};

fn backdrop(width: u32, height: u32, background: Color) -> Result<Pixmap> {
    let mut pixmap = Pixmap::new(width, height).ok_or(Error::FrameSize {
        width_px: width,
        height_px: height,
    })?;
    pixmap.fill(tiny_skia::Color::from_rgba8(
        background.r,
        background.g,
        background.b,
        background.a,
    ));
    Ok(pixmap)
}

fn frame_pixmap(renderer: &CaptionRenderer, t_s: f64, background: Color) -> Result<Pixmap> {
    let frame = renderer.frame();
    let mut pixmap = backdrop(frame.width_px, frame.height_px, background)?;
    if let Some(overlay) = renderer.render_at(t_s) {
        overlay.blend_into(pixmap.data_mut(), frame.width_px);
    }
    Ok(pixmap)
}

/// The frame at `t_s` (seconds): the caption over a plain `background`, as PNG bytes of the
/// renderer's frame size.
///
/// ```
/// use std::sync::Arc;
///
/// use caption_core::{Catalog, Color, Word};
/// use caption_render::{CaptionRenderer, FrameSize, SystemFonts, frame_png};
///
/// let style = Catalog::builtin()?.default_config().clone();
/// let fonts = Arc::new(SystemFonts::new()?);
/// let renderer =
///     CaptionRenderer::new(&[Word::new(0.0, 1.0, "Hi")], &style, FrameSize::new(640, 360), fonts)?;
/// let png = frame_png(&renderer, 0.5, Color::rgb(0, 0, 0))?;
/// assert_eq!(&png[1..4], b"PNG");
/// assert_eq!(&png[16..24], &[0, 0, 2, 128, 0, 0, 1, 104], "640 x 360");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`Error::FrameSize`] and [`Error::Png`] (neither happens for a renderer that was built).
pub fn frame_png(renderer: &CaptionRenderer, t_s: f64, background: Color) -> Result<Vec<u8>> {
    frame_pixmap(renderer, t_s, background)?
        .encode_png()
        .map_err(|e| Error::Png(e.to_string()))
}

/// Height of the label strip under each tile of a contact sheet, pixels.
const LABEL_PX: u32 = 30;

/// How a contact sheet is laid out.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SheetOptions {
    /// Tiles per row (4 by default).
    pub columns: u32,
    /// Width of one tile, pixels (270 by default); its height follows the video's aspect.
    pub tile_width_px: u32,
    /// The most tiles one sheet holds; more words make more sheets.
    pub tiles_per_sheet: usize,
    /// Behind the caption in each tile.
    pub background: Color,
}

impl Default for SheetOptions {
    fn default() -> Self {
        Self {
            columns: 4,
            tile_width_px: 270,
            tiles_per_sheet: 100,
            background: Color::rgb(40, 44, 52),
        }
    }
}

impl SheetOptions {
    /// Tiles per row.
    #[must_use]
    pub fn columns(mut self, columns: u32) -> Self {
        self.columns = columns;
        self
    }

    /// Width of one tile, pixels.
    #[must_use]
    pub fn tile_width_px(mut self, tile_width_px: u32) -> Self {
        self.tile_width_px = tile_width_px;
        self
    }

    /// The most tiles one sheet holds.
    #[must_use]
    pub fn tiles_per_sheet(mut self, tiles_per_sheet: usize) -> Self {
        self.tiles_per_sheet = tiles_per_sheet;
        self
    }

    /// Behind the caption in each tile.
    #[must_use]
    pub fn background(mut self, background: Color) -> Self {
        self.background = background;
        self
    }
}

/// A label per word: `word · 1.23 s`, one label per second of a timeline of its own, drawn in
/// the caption's font by the same renderer.
fn label_renderer(
    renderer: &CaptionRenderer,
    fonts: Arc<dyn FontSource>,
    tile_w: u32,
) -> Result<CaptionRenderer> {
    let labels: Vec<Word> = renderer
        .timeline()
        .words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let text = format!("{} · {:.2} s", w.text, w.start_s);
            Word::new(i as f64, i as f64 + 1.0, text)
        })
        .collect();
    let mut config = renderer.timeline().config.clone();
    config.modes.display_mode = DisplayMode::Word;
    config.modes.effect_type = EffectType::Disabled;
    config.modes.display_emojis = DisplayEmojis::None;
    config.modes.spoken_mode = SpokenMode::None;
    config.capitalization_type = CapitalizationType::None;
    config.word_has_background = false;
    config.word_has_shadow = false;
    config.word_has_punctuation = true;
    config.sizes.stroke_px = 0.0;
    config.font_weight = 400;
    config.colors.hilight_color = ColorSet::one(Color::rgb(230, 230, 230));
    config.colors.default_color = ColorSet::one(Color::rgb(230, 230, 230));
    config.position = Position { x: 0.5, y: 0.5 };
    config.max_width = 0.96;
    // Sizes are on a frame whose shorter side is 1080: 60 % of the strip's height.
    config.sizes.font_px = 0.6 * caption_core::REFERENCE_SHORT_SIDE_PX;
    CaptionRenderer::new(&labels, &config, FrameSize::new(tile_w, LABEL_PX), fonts)
}

/// Contact sheets: a frame in the middle of each word, scaled to `tile_width_px` wide, each
/// with its word and start time written under it, at most `tiles_per_sheet` to a sheet; as
/// PNG bytes, one per sheet, in word order.
///
/// ```
/// use std::sync::Arc;
///
/// use caption_core::{Catalog, Word};
/// use caption_render::{CaptionRenderer, FrameSize, SheetOptions, SystemFonts, contact_sheets_png};
///
/// let fonts = Arc::new(SystemFonts::new()?);
/// let words: Vec<Word> =
///     ["one", "two", "three"].iter().enumerate().map(|(i, w)| Word::new(i as f64, i as f64 + 0.9, *w)).collect();
/// let style = Catalog::builtin()?.default_config().clone();
/// let renderer = CaptionRenderer::new(&words, &style, FrameSize::new(640, 360), fonts.clone())?;
/// let sheets = contact_sheets_png(&renderer, fonts, &SheetOptions::default().tiles_per_sheet(2))?;
/// assert_eq!(sheets.len(), 2, "three words, two to a sheet");
/// assert!(sheets.iter().all(|png| png.starts_with(b"\x89PNG")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn contact_sheets_png(
    renderer: &CaptionRenderer,
    fonts: Arc<dyn FontSource>,
    options: &SheetOptions,
) -> Result<Vec<Vec<u8>>> {
    let frame = renderer.frame();
    let times: Vec<f64> = renderer
        .timeline()
        .words
        .iter()
        .map(|w| (w.start_s + w.end_s) / 2.0)
        .collect();
    let columns = options.columns.max(1);
    let tile_w = options.tile_width_px.clamp(16, frame.width_px.max(16));
    let scale = tile_w as f32 / frame.width_px as f32;
    let tile_h = ((frame.height_px as f32 * scale).round() as u32).max(1);
    let cell_h = tile_h + LABEL_PX;
    let labels = label_renderer(renderer, fonts, tile_w)?;
    let gap = 4;
    let per_sheet = options.tiles_per_sheet.max(1);
    let mut sheets = Vec::new();
    for (s, chunk) in times.chunks(per_sheet).enumerate() {
        let rows = (chunk.len() as u32).div_ceil(columns).max(1);
        let mut sheet = backdrop(
            columns * (tile_w + gap) + gap,
            rows * (cell_h + gap) + gap,
            Color::rgb(16, 16, 16),
        )?;
        for (k, &t) in chunk.iter().enumerate() {
            let i = s * per_sheet + k;
            let tile = frame_pixmap(renderer, t, options.background)?;
            let (col, row) = (k as u32 % columns, k as u32 / columns);
            let x = gap + col * (tile_w + gap);
            let y = gap + row * (cell_h + gap);
            sheet.draw_pixmap(
                0,
                0,
                tile.as_ref(),
                &PixmapPaint {
                    quality: FilterQuality::Bilinear,
                    ..PixmapPaint::default()
                },
                Transform::from_scale(scale, scale).post_translate(x as f32, y as f32),
                None,
            );
            let label = frame_pixmap(&labels, i as f64 + 0.5, Color::rgb(16, 16, 16))?;
            sheet.draw_pixmap(
                x as i32,
                (y + tile_h) as i32,
                label.as_ref(),
                &PixmapPaint::default(),
                Transform::identity(),
                None,
            );
        }
        sheets.push(sheet.encode_png().map_err(|e| Error::Png(e.to_string()))?);
    }
    if sheets.is_empty() {
        sheets.push(
            backdrop(tile_w + 2 * gap, cell_h + 2 * gap, Color::rgb(16, 16, 16))?
                .encode_png()
                .map_err(|e| Error::Png(e.to_string()))?,
        );
    }
    Ok(sheets)
}
