//! The render entry point: a laid-out video, and the overlay for any time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use caption_core::{Color, Config, Word};
use caption_layout::{
    FaceId, FontData, FontSource, FrameSize, FrameState, RectPx, ShapedText, Shaper, Timeline,
    q_to_px,
};
use rayon::prelude::*;
use tiny_skia::{PathBuilder, PixmapMut, PixmapPaint};

use crate::emoji::{ColorGlyph, EmojiCache, emoji_glyph};
use crate::overlay::Overlay;
use crate::raster::{AlphaCanvas, Canvas, GlyphCache, GlyphKey, GlyphMask, tint_into};
use crate::shadow::{GlyphCaster, ShadowStyle, SpriteCache, SpriteKey};
use crate::{Error, Result};

/// Distinct visual states kept; a page has a few dozen (one per word plus effect frames).
const OVERLAY_CACHE_LIMIT: usize = 256;
/// Drop shadows (the default black ones) sit this far below the text, in em.
const SHADOW_OFFSET_EM: f32 = 0.05;

/// Cache counters, for benches and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderStats {
    /// Frames whose overlay came from the cache.
    pub overlay_hits: u64,
    /// Frames that were drawn.
    pub overlay_misses: u64,
    /// Rasterized glyphs held.
    pub glyphs_cached: usize,
}

/// Captions of one video, ready to draw at any time. `Sync`: share it across rayon workers.
#[derive(Debug)]
pub struct CaptionRenderer {
    timeline: Timeline,
    faces: Vec<Arc<FontData>>,
    emoji_face: Option<Arc<FontData>>,
    /// Each word shaped at the timeline's font size, by word index.
    runs: Vec<Arc<ShapedText>>,
    /// The color glyph of each emoji string the timeline uses.
    emoji_glyphs: HashMap<String, u16>,
    glyphs: GlyphCache,
    emojis: EmojiCache,
    shadows: SpriteCache,
    box_masks: SpriteCache,
    overlays: Mutex<HashMap<FrameState, Option<Arc<Overlay>>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// One glyph to draw, resolved and positioned.
struct GlyphDraw {
    key: GlyphKey,
    mask: Arc<GlyphMask>,
    x: i32,
    y: i32,
    fill: Color,
    stroke: Option<Color>,
    shadow: Option<Color>,
    opacity: u8,
}

struct BitmapDraw {
    glyph: Arc<ColorGlyph>,
    x: i32,
    y: i32,
    opacity: u8,
}

struct BoxDraw {
    rect: RectPx,
    radius: f32,
    color: Color,
    opacity: u8,
}

fn rounded_rect(r: &RectPx, radius: f32) -> Option<tiny_skia::Path> {
    let radius = radius.clamp(0.0, r.w.min(r.h) / 2.0);
    if radius <= 0.0 {
        return Some(PathBuilder::from_rect(tiny_skia::Rect::from_xywh(
            r.x, r.y, r.w, r.h,
        )?));
    }
    // Circular corners from cubic arcs (0.5523 is the standard quarter-circle handle length).
    let k = radius * 0.552_284_8;
    let (x0, y0, x1, y1) = (r.x, r.y, r.right(), r.bottom());
    let mut pb = PathBuilder::new();
    pb.move_to(x0 + radius, y0);
    pb.line_to(x1 - radius, y0);
    pb.cubic_to(x1 - radius + k, y0, x1, y0 + radius - k, x1, y0 + radius);
    pb.line_to(x1, y1 - radius);
    pb.cubic_to(x1, y1 - radius + k, x1 - radius + k, y1, x1 - radius, y1);
    pb.line_to(x0 + radius, y1);
    pb.cubic_to(x0 + radius - k, y1, x0, y1 - radius + k, x0, y1 - radius);
    pb.line_to(x0, y0 + radius);
    pb.cubic_to(x0, y0 + radius - k, x0 + radius - k, y0, x0 + radius, y0);
    pb.close();
    pb.finish()
}

impl CaptionRenderer {
    /// Lays out `words` in `config` for a `frame`-sized video with fonts from `fonts`. An invalid
    /// config is refused with every problem and its field path.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a style that breaks a rule, [`Error::FrameSize`] for a
    /// side of 0 or over 16,384 pixels, [`Error::Fonts`] when the style's font cannot be found.
    pub fn new(
        words: &[Word],
        config: &Config,
        frame: FrameSize,
        fonts: Arc<dyn FontSource>,
    ) -> Result<Self> {
        if frame.width_px == 0
            || frame.height_px == 0
            || frame.width_px > 16_384
            || frame.height_px > 16_384
        {
            return Err(Error::FrameSize {
                width_px: frame.width_px,
                height_px: frame.height_px,
            });
        }
        config.validate()?;
        let shaper = Shaper::new(fonts, &config.font, config.font_weight)?;
        let timeline = Timeline::build(words, config, frame, &shaper);
        let runs = timeline
            .words
            .iter()
            .map(|w| shaper.shape(&w.text, timeline.font_px))
            .collect();
        // The emoji face is read only when word emoji are shown (emoji inside the text are
        // drawn from `faces`, which shaping filled).
        let wants_emoji =
            timeline.emoji_px > 0.0 && timeline.words.iter().any(|w| w.emoji.is_some());
        let emoji_face = if wants_emoji {
            shaper.emoji_face().map(|(_, f)| f)
        } else {
            None
        };
        let mut emoji_glyphs = HashMap::new();
        if let Some(face) = &emoji_face {
            for e in timeline.words.iter().filter_map(|w| w.emoji.as_ref()) {
                if !emoji_glyphs.contains_key(e) {
                    match emoji_glyph(face, e) {
                        Some(g) => {
                            emoji_glyphs.insert(e.clone(), g);
                        }
                        None => tracing::debug!(emoji = %e, "no color glyph for emoji"),
                    }
                }
            }
        } else if wants_emoji {
            tracing::warn!("no color emoji font: emoji are not drawn");
        }
        Ok(Self {
            faces: shaper.faces(),
            timeline,
            emoji_face,
            runs,
            emoji_glyphs,
            glyphs: GlyphCache::default(),
            emojis: EmojiCache::default(),
            shadows: SpriteCache::default(),
            box_masks: SpriteCache::default(),
            overlays: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// The layout: pages, lines and word boxes, and what shows at any time.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The captions as the burn lays them out, with each word's look over time, sized for the
    /// style's font as ASS renderers size fonts: what
    /// [`caption_core::export_layout`] writes as an ASS file that a player (libass) draws as
    /// this renderer does, effects and emoji aside.
    pub fn caption_layout(&self) -> caption_core::CaptionLayout {
        let line_height_em = self.faces.first().map_or(1.0, |f| f.line_height_em());
        self.timeline.caption_layout(line_height_em)
    }

    /// The video frame size the captions are laid out for.
    pub fn frame(&self) -> FrameSize {
        self.timeline.frame
    }

    /// Drops the cached overlays and shadows (rasterized glyphs and emoji stay): memory back
    /// after a long video, or a cold start for benches.
    pub fn forget_frames(&self) {
        self.lock_overlays().clear();
        self.shadows.clear();
        self.box_masks.clear();
    }

    /// Cache counters since the renderer was made.
    pub fn stats(&self) -> RenderStats {
        RenderStats {
            overlay_hits: self.hits.load(Ordering::Relaxed),
            overlay_misses: self.misses.load(Ordering::Relaxed),
            glyphs_cached: self.glyphs.len(),
        }
    }

    /// The overlay at `t_s`, or `None` when no caption shows. Frames that look the same share
    /// one overlay (cached by visual state).
    pub fn render_at(&self, t_s: f64) -> Option<Arc<Overlay>> {
        let state = self.timeline.state_at(t_s);
        self.render_state_cached(&state)
    }

    /// Renders every time in `times_s` in parallel; equal, byte for byte, to calling
    /// [`Self::render_at`] on each in order.
    pub fn render_many(&self, times_s: &[f64]) -> Vec<Option<Arc<Overlay>>> {
        times_s.par_iter().map(|&t| self.render_at(t)).collect()
    }

    /// [`Self::render_state`] through the overlay cache: a state seen before costs a hash
    /// lookup. `None` for an empty state.
    pub fn render_state_cached(&self, state: &FrameState) -> Option<Arc<Overlay>> {
        if state.is_empty() {
            return None;
        }
        if let Some(hit) = self.lock_overlays().get(state) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return hit.clone();
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let overlay = self.render_state(state).map(Arc::new);
        let mut cache = self.lock_overlays();
        if cache.len() >= OVERLAY_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(state.clone(), overlay.clone());
        overlay
    }

    fn lock_overlays(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<FrameState, Option<Arc<Overlay>>>> {
        self.overlays.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Draws `state` without the overlay cache (glyphs still come from the glyph cache).
    pub fn render_state(&self, state: &FrameState) -> Option<Overlay> {
        let tl = &self.timeline;
        let mut glyph_draws: Vec<GlyphDraw> = Vec::new();
        let mut bitmaps: Vec<BitmapDraw> = Vec::new();
        let mut boxes: Vec<BoxDraw> = Vec::new();
        let mut bounds: Option<RectPx> = None;
        let mut grow = |r: RectPx| {
            bounds = Some(bounds.map_or(r, |b| b.union(&r)));
        };

        for b in &state.boxes {
            let rect = b.transform.apply_rect(&b.rect());
            grow(rect);
            boxes.push(BoxDraw {
                rect,
                radius: q_to_px(b.radius_q) * b.transform.scale(),
                color: b.color,
                opacity: b.transform.opacity,
            });
        }

        // The glyphs of each word, as a range of `glyph_draws`: a word's shadow is one sprite.
        let mut word_glyphs: Vec<std::ops::Range<usize>> = Vec::new();
        for ws in &state.words {
            let Some(word) = tl.words.get(ws.word) else {
                continue;
            };
            let first_glyph = glyph_draws.len();
            let Some(run) = self.runs.get(ws.word) else {
                continue;
            };
            let t = ws.transform;
            let size_px = tl.font_px * word.scale * t.scale();
            let stroke_px = if ws.stroke_color.is_some() {
                tl.stroke_px * word.scale * t.scale()
            } else {
                0.0
            };
            if size_px < 0.5 {
                continue;
            }
            for g in &run.glyphs {
                if ws.visible_bytes.is_some_and(|b| g.cluster >= b) {
                    continue;
                }
                let (x, y) = t.apply(
                    word.rect.x + g.x_px * word.scale,
                    word.baseline_y_px + g.y_px * word.scale,
                );
                let Some(font) = self.faces.get(usize::from(g.face)) else {
                    continue;
                };
                if font.is_color {
                    if let Some(glyph) =
                        self.emojis
                            .get(font, g.glyph_id, size_px.round() as u32, false)
                    {
                        let (bx, by) =
                            (x.round() as i32 + glyph.left, y.round() as i32 + glyph.top);
                        grow(RectPx {
                            x: bx as f32,
                            y: by as f32,
                            w: glyph.pixmap.width() as f32,
                            h: glyph.pixmap.height() as f32,
                        });
                        bitmaps.push(BitmapDraw {
                            glyph,
                            x: bx,
                            y: by,
                            opacity: t.opacity,
                        });
                    }
                    continue;
                }
                let (key, px, py) =
                    GlyphKey::new(g.face as FaceId, g.glyph_id, size_px, stroke_px, x, y);
                let Some(mask) = self.glyphs.get(font, key) else {
                    continue;
                };
                let (mx, my) = (px + mask.left, py + mask.top);
                grow(RectPx {
                    x: mx as f32,
                    y: my as f32,
                    w: mask.width as f32,
                    h: mask.height as f32,
                });
                glyph_draws.push(GlyphDraw {
                    key,
                    mask,
                    x: mx,
                    y: my,
                    fill: ws.text_color,
                    stroke: ws.stroke_color,
                    shadow: ws.shadow_color,
                    opacity: t.opacity,
                });
            }
            if glyph_draws.len() > first_glyph {
                word_glyphs.push(first_glyph..glyph_draws.len());
            }
        }

        if let Some(face) = &self.emoji_face {
            for e in &state.emojis {
                let Some(&glyph_id) = self.emoji_glyphs.get(&e.emoji) else {
                    continue;
                };
                let t = e.transform;
                let size = q_to_px(e.size_q) * t.scale();
                if size < 1.0 {
                    continue;
                }
                let Some(glyph) = self.emojis.get(face, glyph_id, size.round() as u32, true) else {
                    continue;
                };
                let (cx, cy) = t.apply(q_to_px(e.center_x_q), q_to_px(e.center_y_q));
                let x = (cx - glyph.pixmap.width() as f32 / 2.0).round() as i32;
                let y = (cy - glyph.pixmap.height() as f32 / 2.0).round() as i32;
                grow(RectPx {
                    x: x as f32,
                    y: y as f32,
                    w: glyph.pixmap.width() as f32,
                    h: glyph.pixmap.height() as f32,
                });
                bitmaps.push(BitmapDraw {
                    glyph,
                    x,
                    y,
                    opacity: t.opacity,
                });
            }
        }

        // Shadows: a blurred sprite per word and per box (cached), combined and tinted once.
        let shadow = glyph_draws.iter().find_map(|g| g.shadow);
        let mut sprites = Vec::new();
        if shadow.is_some() {
            let style = ShadowStyle {
                radius: (tl.blur_px / 2.0).round() as u32,
                offset_y: if tl.config.word_has_custom_shadow_color {
                    0
                } else {
                    (SHADOW_OFFSET_EM * tl.font_px).round() as i32
                },
            };
            for b in &boxes {
                let key = SpriteKey::of_box(&b.rect, b.radius, b.opacity);
                sprites.extend(self.shadows.get_or_make(key, state.page, || {
                    style.of_box(&b.rect, b.radius, b.opacity, rounded_rect)
                }));
            }
            for range in &word_glyphs {
                let casters: Vec<&GlyphDraw> = glyph_draws[range.clone()]
                    .iter()
                    .filter(|g| g.shadow.is_some())
                    .collect();
                if casters.is_empty() {
                    continue;
                }
                let with_ring = |g: &GlyphDraw| g.stroke.is_some() && !g.mask.ring.is_empty();
                let key = SpriteKey::Glyphs(
                    casters
                        .iter()
                        .map(|g| GlyphCaster {
                            key: g.key,
                            x: g.x,
                            y: g.y,
                            opacity: g.opacity,
                            with_ring: with_ring(g),
                        })
                        .collect(),
                );
                sprites.extend(self.shadows.get_or_make(key, state.page, || {
                    let mut parts = Vec::with_capacity(casters.len() * 2);
                    for g in &casters {
                        parts.push((g.mask.fill_mask(), g.x, g.y, g.opacity));
                        if with_ring(g) {
                            parts.push((g.mask.ring_mask(), g.x, g.y, g.opacity));
                        }
                    }
                    style.of_glyphs(&parts)
                }));
            }
        }
        let mut bounds = bounds?;
        for sprite in &sprites {
            bounds = bounds.union(&sprite.rect());
        }
        // The overlay is the drawn area clipped to the frame, in whole pixels.
        let x0 = bounds.x.floor().max(0.0) as i32;
        let y0 = bounds.y.floor().max(0.0) as i32;
        let x1 = (bounds.right().ceil() as i32).min(tl.frame.width_px as i32);
        let y1 = (bounds.bottom().ceil() as i32).min(tl.frame.height_px as i32);
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        let (width, height) = ((x1 - x0) as u32, (y1 - y0) as u32);
        let mut data = vec![0u8; width as usize * height as usize * 4];

        if let (Some(shadow_color), false) = (shadow, sprites.is_empty()) {
            let mut alpha = vec![0u8; width as usize * height as usize];
            let mut shadow_canvas = AlphaCanvas {
                data: &mut alpha,
                width,
                height,
            };
            for sprite in &sprites {
                shadow_canvas.max_into(sprite.mask(), sprite.x - x0, sprite.y - y0, 255);
            }
            let mut canvas = Canvas {
                data: &mut data,
                width,
                height,
            };
            tint_into(&mut canvas, &alpha, shadow_color);
        }

        let mut canvas = Canvas {
            data: &mut data,
            width,
            height,
        };
        let plain = ShadowStyle {
            radius: 0,
            offset_y: 0,
        };
        for b in &boxes {
            let key = SpriteKey::of_box(&b.rect, b.radius, 255);
            let coverage = self.box_masks.get_or_make(key, state.page, || {
                plain.of_box(&b.rect, b.radius, 255, rounded_rect)
            });
            if let Some(m) = coverage {
                canvas.blit(m.coverage(), m.x - x0, m.y - y0, b.color, b.opacity);
            }
        }
        // Every outline first, then every fill, so a neighbour's outline never covers a letter.
        for g in &glyph_draws {
            if let (Some(color), false) = (g.stroke, g.mask.ring.is_empty()) {
                let m = &g.mask;
                canvas.blit(m.ring(), g.x - x0, g.y - y0, color, g.opacity);
            }
        }
        for g in &glyph_draws {
            canvas.blit(g.mask.fill(), g.x - x0, g.y - y0, g.fill, g.opacity);
        }

        if !bitmaps.is_empty()
            && let Some(mut pixmap) = PixmapMut::from_bytes(&mut data, width, height)
        {
            for b in &bitmaps {
                let paint = PixmapPaint {
                    opacity: f32::from(b.opacity) / 255.0,
                    ..PixmapPaint::default()
                };
                pixmap.draw_pixmap(
                    b.x - x0,
                    b.y - y0,
                    b.glyph.pixmap.as_ref(),
                    &paint,
                    tiny_skia::Transform::identity(),
                    None,
                );
            }
        }

        Some(Overlay {
            x: x0,
            y: y0,
            width,
            height,
            rgba: data,
        })
    }
}
