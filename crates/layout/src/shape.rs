//! Text shaping: rustybuzz (Arabic joining, Indic clusters, kerning, ligatures) over a chain
//! of faces picked per character (primary face, then fallback faces, then the emoji face).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use unicode_bidi::Direction;

use crate::fonts::{FontData, FontFile, FontSource};
use crate::timeline::Measure;
use crate::{Error, Result};

/// Index of a face in a [`Shaper`]'s face list.
pub type FaceId = u16;

/// One positioned glyph of a shaped text, in pixels from the text's left edge and baseline
/// (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacedGlyph {
    /// The face the glyph comes from, in the shaper's face list.
    pub face: FaceId,
    /// The glyph in that face.
    pub glyph_id: u16,
    /// Pen position from the text's left edge, pixels.
    pub x_px: f32,
    /// Offset from the baseline, pixels (down is positive).
    pub y_px: f32,
    /// Byte offset in the text of the first character this glyph draws.
    pub cluster: u32,
}

/// A shaped text at one font size; glyphs are in visual order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShapedText {
    /// The glyphs, left to right.
    pub glyphs: Vec<PlacedGlyph>,
    /// Advance width of the whole text, pixels.
    pub width_px: f32,
    /// The size it was shaped at, pixels per em.
    pub font_px: f32,
    /// The text runs right to left (Arabic, Hebrew).
    pub rtl: bool,
}

#[derive(Debug, Default)]
struct ShaperCache {
    faces: Vec<Arc<FontData>>,
    /// The color emoji face, loaded on first use (`None` inside: unusable or absent).
    emoji: Option<Option<FaceId>>,
    by_file: HashMap<FontFile, FaceId>,
    fallback: HashMap<char, Option<FaceId>>,
    shaped: HashMap<(String, u32), Arc<ShapedText>>,
}

/// Shapes and measures text with real fonts. Caches faces, fallback choices and shaped texts,
/// so measuring the same word twice costs a hash lookup.
#[derive(Debug)]
pub struct Shaper {
    source: Arc<dyn FontSource>,
    weight: u16,
    /// The color emoji font, read only when an emoji is drawn: it is the largest font there is
    /// (about 10 MB) and most captions have no emoji.
    emoji_file: Option<FontFile>,
    cache: Mutex<ShaperCache>,
}

/// The primary face is always id 0.
const PRIMARY: FaceId = 0;

impl Shaper {
    /// A shaper for `family` at `weight`; a family the source does not know falls back to the
    /// source's face for a Latin letter (so a request never fails on a font name).
    pub fn new(source: Arc<dyn FontSource>, family: &str, weight: u16) -> Result<Self> {
        let primary = match source.resolve(family, weight) {
            Ok(file) => file,
            Err(err) => {
                tracing::warn!(%err, "font family not found; using a fallback face");
                source
                    .fallback_for('A', weight)
                    .ok_or_else(|| Error::NoFont {
                        family: family.to_owned(),
                        weight,
                    })?
            }
        };
        let mut cache = ShaperCache::default();
        cache.faces.push(FontData::load(&primary)?);
        cache.by_file.insert(primary, PRIMARY);
        Ok(Self {
            emoji_file: source.emoji_font(),
            source,
            weight,
            cache: Mutex::new(cache),
        })
    }

    fn push_face(cache: &mut ShaperCache, file: FontFile, data: Arc<FontData>) -> FaceId {
        if let Some(&id) = cache.by_file.get(&file) {
            return id;
        }
        let id = FaceId::try_from(cache.faces.len()).unwrap_or(FaceId::MAX);
        cache.faces.push(data);
        cache.by_file.insert(file, id);
        id
    }

    /// Every face loaded so far, indexed by [`FaceId`].
    pub fn faces(&self) -> Vec<Arc<FontData>> {
        self.lock().faces.clone()
    }

    /// The face of the requested family and weight (or the fallback for a Latin letter).
    pub fn primary(&self) -> Arc<FontData> {
        self.lock().faces[usize::from(PRIMARY)].clone()
    }

    /// The color emoji face, if the source has one.
    pub fn emoji_face(&self) -> Option<(FaceId, Arc<FontData>)> {
        let mut cache = self.lock();
        let id = self.emoji_id(&mut cache)?;
        Some((id, cache.faces[usize::from(id)].clone()))
    }

    /// Loads the emoji face the first time it is asked for.
    fn emoji_id(&self, cache: &mut ShaperCache) -> Option<FaceId> {
        if let Some(known) = cache.emoji {
            return known;
        }
        let loaded = self
            .emoji_file
            .as_ref()
            .and_then(|file| match FontData::load(file) {
                Ok(data) => Some(Self::push_face(cache, file.clone(), data)),
                Err(err) => {
                    tracing::warn!(%err, "color emoji font unusable");
                    None
                }
            });
        cache.emoji = Some(loaded);
        loaded
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ShaperCache> {
        // A panic while holding the lock leaves only caches behind; they stay consistent.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Shapes `text` at `font_px`, each character from the primary face when it has the glyph,
    /// else from the source's fallback face for it.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use caption_layout::{DirFonts, Shaper};
    ///
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/fonts");
    /// let shaper = Shaper::new(Arc::new(DirFonts::open(dir.as_ref())?), "Inter", 700)?;
    /// let hello = shaper.shape("Hello", 64.0);
    /// assert_eq!(hello.glyphs.len(), 5);
    /// assert!(hello.width_px > 64.0 && hello.width_px < 5.0 * 64.0, "{}", hello.width_px);
    /// let mixed = shaper.shape("Hiかな", 64.0);
    /// assert!(mixed.glyphs[2].face != mixed.glyphs[0].face, "kana from a fallback face");
    /// # Ok::<(), caption_layout::Error>(())
    /// ```
    pub fn shape(&self, text: &str, font_px: f32) -> Arc<ShapedText> {
        let key = (text.to_owned(), font_px.to_bits());
        if let Some(hit) = self.lock().shaped.get(&key) {
            return hit.clone();
        }
        let shaped = Arc::new(self.shape_uncached(text, font_px));
        self.lock().shaped.insert(key, shaped.clone());
        shaped
    }

    /// The face that draws `ch` when the previous character used `prev`.
    fn face_for(&self, ch: char, prev: Option<FaceId>) -> FaceId {
        let joiner = matches!(ch as u32,
            0x200C | 0x200D | 0xFE00..=0xFE0F | 0x1F3FB..=0x1F3FF | 0xE0020..=0xE007F | 0x20E3);
        if joiner || ch.is_whitespace() {
            return prev.unwrap_or(PRIMARY);
        }
        let mut cache = self.lock();
        let primary_has = cache.faces[usize::from(PRIMARY)].has_char(ch);
        // Emoji-presentation characters go to the color face even when a text face has a
        // monochrome glyph, the way browsers do.
        if is_emoji_presentation(ch)
            && let Some(emoji) = self.emoji_id(&mut cache)
            && cache.faces[usize::from(emoji)].has_char(ch)
        {
            return emoji;
        }
        if primary_has {
            return PRIMARY;
        }
        if let Some(found) = cache.fallback.get(&ch) {
            return found.unwrap_or(PRIMARY);
        }
        let found = self.source.fallback_for(ch, self.weight).and_then(|file| {
            if let Some(&id) = cache.by_file.get(&file) {
                return Some(id);
            }
            match FontData::load(&file) {
                Ok(data) => Some(Self::push_face(&mut cache, file, data)),
                Err(err) => {
                    tracing::warn!(%err, "fallback font unusable");
                    None
                }
            }
        });
        cache.fallback.insert(ch, found);
        found.unwrap_or(PRIMARY)
    }

    fn shape_uncached(&self, text: &str, font_px: f32) -> ShapedText {
        // Runs of consecutive characters drawn by the same face.
        let mut runs: Vec<(FaceId, usize, usize)> = Vec::new();
        for (offset, ch) in text.char_indices() {
            let prev = runs.last().map(|r| r.0);
            let face = self.face_for(ch, prev);
            match runs.last_mut() {
                Some(run) if run.0 == face => run.2 = offset + ch.len_utf8(),
                _ => runs.push((face, offset, offset + ch.len_utf8())),
            }
        }
        let rtl = unicode_bidi::get_base_direction(text) == Direction::Rtl;
        if rtl {
            runs.reverse();
        }
        let faces = self.faces();
        let mut glyphs = Vec::new();
        let mut pen_x = 0.0_f32;
        for (face_id, start, end) in runs {
            let Some(data) = faces.get(usize::from(face_id)) else {
                continue;
            };
            let Some(face) = rustybuzz::Face::from_slice(data.bytes(), data.file.index) else {
                continue;
            };
            let scale = font_px / data.units_per_em;
            let mut buffer = rustybuzz::UnicodeBuffer::new();
            buffer.push_str(&text[start..end]);
            buffer.guess_segment_properties();
            let out = rustybuzz::shape(&face, &[], buffer);
            for (info, pos) in out.glyph_infos().iter().zip(out.glyph_positions()) {
                glyphs.push(PlacedGlyph {
                    face: face_id,
                    glyph_id: u16::try_from(info.glyph_id).unwrap_or(0),
                    x_px: pen_x + pos.x_offset as f32 * scale,
                    y_px: -(pos.y_offset as f32) * scale,
                    cluster: u32::try_from(start).unwrap_or(u32::MAX) + info.cluster,
                });
                pen_x += pos.x_advance as f32 * scale;
            }
        }
        ShapedText {
            glyphs,
            width_px: pen_x.max(0.0),
            font_px,
            rtl,
        }
    }
}

/// Characters shown as emoji by default (Unicode's Emoji_Presentation, approximated by the
/// pictographic blocks; text-default symbols such as © stay with the text face).
fn is_emoji_presentation(ch: char) -> bool {
    matches!(ch as u32,
        0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x231A..=0x23FF)
}

impl Measure for Shaper {
    fn width_px(&self, text: &str, font_px: f32) -> f32 {
        self.shape(text, font_px).width_px
    }

    fn ascent_descent_px(&self, font_px: f32) -> (f32, f32) {
        let p = self.primary();
        let scale = font_px / p.units_per_em;
        (p.ascender * scale, -p.descender * scale)
    }
}
