//! Color emoji: CBDT/sbix bitmaps from the color font (through ttf-parser), PNG-decoded and
//! scaled by tiny-skia, cached per emoji and size.

use std::sync::Arc;

use caption_layout::FontData;
use tiny_skia::{FilterQuality, Pixmap, PixmapPaint, Transform};

use crate::cache::{ByteBoundedCache, Weigh};

/// Bytes of emoji pixmaps kept per cache generation; they are cached per whole-pixel size, and
/// an animated emoji passes through dozens of sizes.
const EMOJI_CACHE_BYTES: usize = 4 << 20;

/// The glyph that draws `text` in the color face: shaping applies the font's ligatures, so
/// ZWJ sequences, flags and skin tones resolve to their single glyph.
pub(crate) fn emoji_glyph(font: &FontData, text: &str) -> Option<u16> {
    let face = rustybuzz::Face::from_slice(font.bytes(), font.file.index)?;
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(text);
    buffer.guess_segment_properties();
    let shaped = rustybuzz::shape(&face, &[], buffer);
    let gid = shaped.glyph_infos().first()?.glyph_id;
    u16::try_from(gid).ok().filter(|&g| g != 0)
}

/// A color glyph's bitmap scaled so its em is `size_px` tall, with the offset of its top-left
/// corner from the glyph origin (baseline, y down).
#[derive(Debug)]
pub(crate) struct ColorGlyph {
    pub pixmap: Pixmap,
    pub left: i32,
    pub top: i32,
}

/// `size_px` is the em size, or the bitmap's height when `by_height` (standalone emoji, whose
/// size is their height).
fn render_color_glyph(
    font: &FontData,
    glyph: u16,
    size_px: u32,
    by_height: bool,
) -> Option<ColorGlyph> {
    let face = font.face()?;
    let image = face.glyph_raster_image(ttf_parser::GlyphId(glyph), u16::MAX)?;
    if image.format != ttf_parser::RasterImageFormat::PNG {
        return None;
    }
    let source = Pixmap::decode_png(image.data).ok()?;
    let scale = if by_height {
        size_px as f32 / f32::from(image.height.max(1))
    } else {
        size_px as f32 / f32::from(image.pixels_per_em.max(1))
    };
    let width = (source.width() as f32 * scale).round().max(1.0) as u32;
    let height = (source.height() as f32 * scale).round().max(1.0) as u32;
    let mut pixmap = Pixmap::new(width, height)?;
    pixmap.draw_pixmap(
        0,
        0,
        source.as_ref(),
        &PixmapPaint {
            quality: FilterQuality::Bicubic,
            ..PixmapPaint::default()
        },
        Transform::from_scale(
            width as f32 / source.width() as f32,
            height as f32 / source.height() as f32,
        ),
        None,
    );
    // Raster image offsets are in font units of the strike, y up from the baseline.
    let left = (f32::from(image.x) * scale).round() as i32;
    let top = -((f32::from(image.y) + f32::from(image.height)) * scale).round() as i32;
    Some(ColorGlyph { pixmap, left, top })
}

/// A color glyph at one size.
type EmojiKey = (u16, u32, bool);

#[derive(Debug)]
pub(crate) struct EmojiCache {
    bitmaps: ByteBoundedCache<EmojiKey, Option<Arc<ColorGlyph>>>,
}

impl Default for EmojiCache {
    fn default() -> Self {
        Self {
            bitmaps: ByteBoundedCache::new(EMOJI_CACHE_BYTES),
        }
    }
}

impl Weigh for ColorGlyph {
    fn bytes(&self) -> usize {
        self.pixmap.data().len()
    }
}

impl EmojiCache {
    pub fn get(
        &self,
        font: &FontData,
        glyph: u16,
        size_px: u32,
        by_height: bool,
    ) -> Option<Arc<ColorGlyph>> {
        let key = (glyph, size_px.clamp(1, 2048), by_height);
        self.bitmaps.get_or_make(key, || {
            render_color_glyph(font, glyph, key.1, by_height).map(Arc::new)
        })
    }
}
