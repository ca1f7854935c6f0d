//! Drop shadows as blurred sprites, one per word and one per box, cached by what casts them;
//! box coverage (a sprite without blur) is cached the same way.
//!
//! A new frame usually changes one word (it lights up or pops); the other words' shadows are
//! reused, so only the word that moved is blurred again. Sprites are combined by maximum
//! coverage and tinted once, so overlapping shadows do not darken each other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use caption_layout::RectPx;
use tiny_skia::{FillRule, Mask, Transform};

use crate::raster::{AlphaCanvas, Coverage, GlyphKey, MaskRef, Run, blurred, runs_of};

/// Sprites kept: the words and boxes of a page in each step of their animation. When full, the
/// sprites of other pages go first: a page never comes back once gone.
const SPRITE_CACHE_LIMIT: usize = 64;

/// Coverage (blurred, for a shadow) placed on the frame.
#[derive(Debug)]
pub(crate) struct Sprite {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub alpha: Vec<u8>,
    /// The runs of `alpha`, for painting through it (plain coverage only, not shadows).
    pub runs: Vec<Run>,
}

impl Sprite {
    pub fn rect(&self) -> RectPx {
        RectPx {
            x: self.x as f32,
            y: self.y as f32,
            w: self.width as f32,
            h: self.height as f32,
        }
    }

    pub fn coverage(&self) -> Coverage<'_> {
        Coverage {
            data: &self.alpha,
            width: self.width,
            runs: &self.runs,
        }
    }

    pub fn mask(&self) -> MaskRef<'_> {
        MaskRef {
            data: &self.alpha,
            width: self.width,
            height: self.height,
        }
    }
}

/// One glyph casting a shadow: its mask, where it goes, its opacity and whether its outline
/// casts too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct GlyphCaster {
    pub key: GlyphKey,
    pub x: i32,
    pub y: i32,
    pub opacity: u8,
    pub with_ring: bool,
}

/// What a sprite is the coverage or the shadow of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum SpriteKey {
    Glyphs(Vec<GlyphCaster>),
    Box {
        /// The rectangle's x, y, width, height and corner radius, as f32 bits.
        geometry: [u32; 5],
        opacity: u8,
    },
}

impl SpriteKey {
    pub fn of_box(rect: &RectPx, radius: f32, opacity: u8) -> Self {
        Self::Box {
            geometry: [rect.x, rect.y, rect.w, rect.h, radius].map(f32::to_bits),
            opacity,
        }
    }
}

/// How shadows are blurred and placed (one setting per video); `radius` 0 and `offset_y` 0
/// give plain coverage.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShadowStyle {
    pub radius: u32,
    pub offset_y: i32,
}

impl ShadowStyle {
    fn spread(self) -> i32 {
        3 * self.radius as i32
    }

    /// Blurs coverage drawn by `draw` into a canvas covering `[x0, x1) x [y0, y1)` plus the
    /// blur's spread.
    fn sprite(
        self,
        (x0, y0, x1, y1): (i32, i32, i32, i32),
        draw: impl FnOnce(&mut AlphaCanvas<'_>, i32, i32),
    ) -> Option<Sprite> {
        let spread = self.spread();
        let (left, top) = (x0 - spread, y0 - spread);
        let width = u32::try_from(x1 - x0 + 2 * spread).ok()?;
        let height = u32::try_from(y1 - y0 + 2 * spread).ok()?;
        if width == 0 || height == 0 {
            return None;
        }
        let mut alpha = vec![0u8; width as usize * height as usize];
        draw(
            &mut AlphaCanvas {
                data: &mut alpha,
                width,
                height,
            },
            left,
            top,
        );
        let alpha = blurred(&alpha, width, height, self.radius);
        let runs = if self.radius == 0 {
            runs_of(&alpha, width)
        } else {
            Vec::new()
        };
        Some(Sprite {
            x: left,
            y: top + self.offset_y,
            width,
            height,
            alpha,
            runs,
        })
    }

    /// The shadow of glyph masks placed at their `(x, y)`, each with its opacity.
    pub fn of_glyphs(self, parts: &[(MaskRef<'_>, i32, i32, u8)]) -> Option<Sprite> {
        let x0 = parts.iter().map(|p| p.1).min()?;
        let y0 = parts.iter().map(|p| p.2).min()?;
        let x1 = parts.iter().map(|p| p.1 + p.0.width as i32).max()?;
        let y1 = parts.iter().map(|p| p.2 + p.0.height as i32).max()?;
        self.sprite((x0, y0, x1, y1), |canvas, left, top| {
            for (mask, x, y, opacity) in parts {
                canvas.max_into(*mask, x - left, y - top, *opacity);
            }
        })
    }

    /// The shadow of a rounded rectangle.
    pub fn of_box(
        self,
        rect: &RectPx,
        radius: f32,
        opacity: u8,
        path: impl Fn(&RectPx, f32) -> Option<tiny_skia::Path>,
    ) -> Option<Sprite> {
        let bounds = (
            rect.x.floor() as i32,
            rect.y.floor() as i32,
            rect.right().ceil() as i32,
            rect.bottom().ceil() as i32,
        );
        self.sprite(bounds, |canvas, left, top| {
            let local = RectPx {
                x: rect.x - left as f32,
                y: rect.y - top as f32,
                ..*rect
            };
            let (Some(path), Some(mut mask)) =
                (path(&local, radius), Mask::new(canvas.width, canvas.height))
            else {
                return;
            };
            mask.fill_path(&path, FillRule::Winding, true, Transform::identity());
            let full = MaskRef {
                data: mask.data(),
                width: canvas.width,
                height: canvas.height,
            };
            canvas.max_into(full, 0, 0, opacity);
        })
    }
}

/// Sprites shared by every frame (and every rayon worker).
#[derive(Debug, Default)]
pub(crate) struct SpriteCache {
    /// Each sprite with the page it was drawn for.
    map: Mutex<SpriteMap>,
}

type SpriteMap = HashMap<SpriteKey, (Option<usize>, Option<Arc<Sprite>>)>;

impl SpriteCache {
    /// The sprite of `key`, made by `make` unless cached; `page` is the page being drawn.
    pub fn get_or_make(
        &self,
        key: SpriteKey,
        page: Option<usize>,
        make: impl FnOnce() -> Option<Sprite>,
    ) -> Option<Arc<Sprite>> {
        if let Some((_, hit)) = self.lock().get(&key) {
            return hit.clone();
        }
        // Blur outside the lock so workers do not wait on each other.
        let sprite = make().map(Arc::new);
        let mut map = self.lock();
        if map.len() >= SPRITE_CACHE_LIMIT {
            map.retain(|_, (p, _)| *p == page);
            if map.len() >= SPRITE_CACHE_LIMIT {
                map.clear();
            }
        }
        map.insert(key, (page, sprite.clone()));
        sprite
    }

    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SpriteMap> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
