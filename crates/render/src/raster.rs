//! Glyph masks from font outlines (tiny-skia), their cache, and coverage blits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use caption_core::Color;
use caption_layout::{FaceId, FontData};
use tiny_skia::{FillRule, LineCap, LineJoin, Mask, PathBuilder, Stroke, Transform};

use crate::overlay::div255;

/// Sizes and outline widths are cached in 1/16 px steps, positions in 1/4 px steps: finer
/// steps are invisible and would only fill the cache during zoom animations.
const SIZE_STEPS: f32 = 16.0;
const SUBPIXEL_STEPS: f32 = 4.0;
/// Past this many glyphs the cache starts over (a long video in many scripts).
const GLYPH_CACHE_LIMIT: usize = 20_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct GlyphKey {
    pub face: FaceId,
    pub glyph: u16,
    pub size_q: u32,
    pub stroke_q: u32,
    pub sub_x: u8,
    pub sub_y: u8,
}

impl GlyphKey {
    /// The key for a glyph drawn at `size_px` whose origin falls at `(x, y)`; returns the key
    /// and the integer pixel the mask's origin goes to.
    pub fn new(
        face: FaceId,
        glyph: u16,
        size_px: f32,
        stroke_px: f32,
        x: f32,
        y: f32,
    ) -> (Self, i32, i32) {
        let fx = x.floor();
        let fy = y.floor();
        let key = Self {
            face,
            glyph,
            size_q: (size_px * SIZE_STEPS).round().max(0.0) as u32,
            stroke_q: (stroke_px * SIZE_STEPS).round().max(0.0) as u32,
            sub_x: (((x - fx) * SUBPIXEL_STEPS).floor() as u8).min(3),
            sub_y: (((y - fy) * SUBPIXEL_STEPS).floor() as u8).min(3),
        };
        (key, fx as i32, fy as i32)
    }
}

/// Coverage of one glyph: `fill` inside the outline, `ring` the outline band outside it.
#[derive(Debug)]
pub(crate) struct GlyphMask {
    /// Offset of the mask's top-left pixel from the glyph origin's pixel.
    pub left: i32,
    pub top: i32,
    pub width: u32,
    pub height: u32,
    pub fill: Vec<u8>,
    pub ring: Vec<u8>,
}

struct OutlineToPath {
    builder: PathBuilder,
    scale: f32,
    dx: f32,
    dy: f32,
}

impl ttf_parser::OutlineBuilder for OutlineToPath {
    fn move_to(&mut self, x: f32, y: f32) {
        self.builder
            .move_to(x * self.scale + self.dx, -y * self.scale + self.dy);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        self.builder
            .line_to(x * self.scale + self.dx, -y * self.scale + self.dy);
    }
    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        let s = self.scale;
        self.builder.quad_to(
            x1 * s + self.dx,
            -y1 * s + self.dy,
            x * s + self.dx,
            -y * s + self.dy,
        );
    }
    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        let s = self.scale;
        self.builder.cubic_to(
            x1 * s + self.dx,
            -y1 * s + self.dy,
            x2 * s + self.dx,
            -y2 * s + self.dy,
            x * s + self.dx,
            -y * s + self.dy,
        );
    }
    fn close(&mut self) {
        self.builder.close();
    }
}

fn rasterize(font: &FontData, key: GlyphKey) -> Option<GlyphMask> {
    let face = font.face()?;
    let size_px = key.size_q as f32 / SIZE_STEPS;
    let stroke_px = key.stroke_q as f32 / SIZE_STEPS;
    let mut sink = OutlineToPath {
        builder: PathBuilder::new(),
        scale: size_px / font.units_per_em,
        dx: f32::from(key.sub_x) / SUBPIXEL_STEPS,
        dy: f32::from(key.sub_y) / SUBPIXEL_STEPS,
    };
    face.outline_glyph(ttf_parser::GlyphId(key.glyph), &mut sink)?;
    let path = sink.builder.finish()?;
    let bounds = path.bounds();
    let margin = stroke_px + 1.0;
    let left = (bounds.left() - margin).floor() as i32;
    let top = (bounds.top() - margin).floor() as i32;
    let right = (bounds.right() + margin).ceil() as i32;
    let bottom = (bounds.bottom() + margin).ceil() as i32;
    let width = u32::try_from(right - left).ok()?.max(1);
    let height = u32::try_from(bottom - top).ok()?.max(1);
    let shift = Transform::from_translate(-left as f32, -top as f32);
    let mut fill = Mask::new(width, height)?;
    fill.fill_path(&path, FillRule::Winding, true, shift);
    let ring = if stroke_px > 0.0 {
        let stroke = Stroke {
            width: 2.0 * stroke_px,
            line_join: LineJoin::Round,
            line_cap: LineCap::Round,
            ..Stroke::default()
        };
        let outline = path.stroke(&stroke, 1.0)?;
        let mut ring = Mask::new(width, height)?;
        ring.fill_path(&outline, FillRule::Winding, true, shift);
        // Union of outline band and glyph, minus the glyph: the band outside the letter, so a
        // translucent fill does not show the outline through it.
        let mut data = ring.data().to_vec();
        let mut inside = Mask::new(width, height)?;
        inside.fill_path(&path, FillRule::Winding, true, shift);
        for (r, f) in data.iter_mut().zip(inside.data()) {
            let union = (*r).max(*f);
            *r = union.saturating_sub(*f);
        }
        data
    } else {
        Vec::new()
    };
    Some(GlyphMask {
        left,
        top,
        width,
        height,
        fill: fill.data().to_vec(),
        ring,
    })
}

/// Rasterized glyphs shared by every frame (and every rayon worker).
#[derive(Debug, Default)]
pub(crate) struct GlyphCache {
    map: Mutex<HashMap<GlyphKey, Option<Arc<GlyphMask>>>>,
}

impl GlyphCache {
    pub fn get(&self, font: &FontData, key: GlyphKey) -> Option<Arc<GlyphMask>> {
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        // Rasterize outside the lock so workers do not wait on each other.
        let mask = rasterize(font, key).map(Arc::new);
        let mut map = self.lock();
        if map.len() >= GLYPH_CACHE_LIMIT {
            map.clear();
        }
        map.insert(key, mask.clone());
        mask
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<GlyphKey, Option<Arc<GlyphMask>>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A premultiplied RGBA8 canvas.
#[derive(Debug)]
pub(crate) struct Canvas<'a> {
    pub data: &'a mut [u8],
    pub width: u32,
    pub height: u32,
}

impl Canvas<'_> {
    /// Paints `color` (straight alpha) through `mask` at `(x, y)`, scaled by `opacity`.
    pub fn blit_mask(&mut self, mask: MaskRef<'_>, x: i32, y: i32, color: Color, opacity: u8) {
        let alpha = div255(u32::from(color.a) * u32::from(opacity));
        if alpha == 0 {
            return;
        }
        let Some((x0, y0, x1, y1)) = clip(self.width, self.height, &mask, x, y) else {
            return;
        };
        let (r, g, b) = (u32::from(color.r), u32::from(color.g), u32::from(color.b));
        for py in y0..y1 {
            let mrow = ((py - y) as u32 * mask.width) as usize;
            let crow = (py as u32 * self.width) as usize;
            for px in x0..x1 {
                let cov = u32::from(mask.data[mrow + (px - x) as usize]);
                if cov == 0 {
                    continue;
                }
                let a = div255(cov * alpha);
                let i = (crow + px as usize) * 4;
                let d = &mut self.data[i..i + 4];
                let inv = 255 - a;
                d[0] = (div255(r * a) + div255(u32::from(d[0]) * inv)) as u8;
                d[1] = (div255(g * a) + div255(u32::from(d[1]) * inv)) as u8;
                d[2] = (div255(b * a) + div255(u32::from(d[2]) * inv)) as u8;
                d[3] = (a + div255(u32::from(d[3]) * inv)) as u8;
            }
        }
    }
}

/// A one-channel coverage image.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MaskRef<'a> {
    pub data: &'a [u8],
    pub width: u32,
    pub height: u32,
}

/// The part of a mask placed at `(x, y)` that falls on a `width` x `height` canvas.
fn clip(
    width: u32,
    height: u32,
    mask: &MaskRef<'_>,
    x: i32,
    y: i32,
) -> Option<(i32, i32, i32, i32)> {
    let x0 = x.max(0);
    let y0 = y.max(0);
    let x1 = (x + mask.width as i32).min(width as i32);
    let y1 = (y + mask.height as i32).min(height as i32);
    (x0 < x1 && y0 < y1).then_some((x0, y0, x1, y1))
}

/// A one-channel canvas: the coverage of everything that casts a shadow.
#[derive(Debug)]
pub(crate) struct AlphaCanvas<'a> {
    pub data: &'a mut [u8],
    pub width: u32,
    pub height: u32,
}

impl AlphaCanvas<'_> {
    /// Adds `mask` (max) at `(x, y)`, scaled by `opacity`.
    pub fn max_into(&mut self, mask: MaskRef<'_>, x: i32, y: i32, opacity: u8) {
        let Some((x0, y0, x1, y1)) = clip(self.width, self.height, &mask, x, y) else {
            return;
        };
        for py in y0..y1 {
            let mrow = ((py - y) as u32 * mask.width) as usize;
            let trow = (py as u32 * self.width) as usize;
            for px in x0..x1 {
                let cov =
                    div255(u32::from(mask.data[mrow + (px - x) as usize]) * u32::from(opacity))
                        as u8;
                let t = &mut self.data[trow + px as usize];
                *t = (*t).max(cov);
            }
        }
    }
}

/// Three passes of a running-sum box blur approximate a Gaussian; integer maths keeps the
/// result identical on every thread. The vertical pass walks rows (one running sum per column)
/// so it reads memory in order.
pub(crate) fn blur_alpha(mask: &mut [u8], width: u32, height: u32, radius: u32) {
    if radius == 0 || width == 0 || height == 0 {
        return;
    }
    let (w, h, r) = (width as usize, height as usize, radius as usize);
    let window = (2 * r + 1) as u32;
    let mut line = vec![0u8; w];
    let mut out = vec![0u8; w * h];
    let mut sums = vec![0u32; w];
    for _ in 0..3 {
        for row in mask.chunks_exact_mut(w) {
            box_blur_line(row, &mut line, r, window);
            row.copy_from_slice(&line);
        }
        sums.fill(0);
        // Rows outside the image count as transparent.
        for row in mask.chunks_exact(w).take(r.min(h)) {
            for (s, &v) in sums.iter_mut().zip(row) {
                *s += u32::from(v);
            }
        }
        for y in 0..h {
            if y + r < h {
                let incoming = &mask[(y + r) * w..(y + r + 1) * w];
                for (s, &v) in sums.iter_mut().zip(incoming) {
                    *s += u32::from(v);
                }
            }
            let dst = &mut out[y * w..(y + 1) * w];
            for (d, &s) in dst.iter_mut().zip(&sums) {
                *d = ((s + window / 2) / window) as u8;
            }
            if y >= r {
                let outgoing = &mask[(y - r) * w..(y - r + 1) * w];
                for (s, &v) in sums.iter_mut().zip(outgoing) {
                    *s -= u32::from(v);
                }
            }
        }
        mask.copy_from_slice(&out);
    }
}

fn box_blur_line(src: &[u8], dst: &mut [u8], r: usize, window: u32) {
    let n = src.len();
    let mut sum: u32 = 0;
    // Pixels outside the line count as transparent.
    for &v in src.iter().take(r.min(n)) {
        sum += u32::from(v);
    }
    for i in 0..n {
        if i + r < n {
            sum += u32::from(src[i + r]);
        }
        dst[i] = ((sum + window / 2) / window) as u8;
        if i >= r {
            sum -= u32::from(src[i - r]);
        }
    }
}

/// Paints a shadow from the coverage `alpha` (canvas-sized, before blur) into an empty canvas,
/// `offset_y` pixels lower, tinted `color`. Blurs wider than 1 px run at half resolution and
/// are scaled back up bilinearly: a quarter of the work, and invisible in a soft shadow.
pub(crate) fn paint_shadow(
    canvas: &mut Canvas<'_>,
    alpha: &[u8],
    radius: u32,
    color: Color,
    offset_y: i32,
) {
    let (w, h) = (canvas.width as usize, canvas.height as usize);
    // Premultiplied color for each coverage value: the canvas is empty, so no blending.
    let lut: Vec<[u8; 4]> = (0..=255u32)
        .map(|cov| {
            let a = div255(cov * u32::from(color.a));
            [
                div255(u32::from(color.r) * a) as u8,
                div255(u32::from(color.g) * a) as u8,
                div255(u32::from(color.b) * a) as u8,
                a as u8,
            ]
        })
        .collect();
    let mut put = |x: usize, y: usize, cov: u8| {
        let ty = y as i64 + i64::from(offset_y);
        if cov != 0 && ty >= 0 && (ty as usize) < h {
            let i = (ty as usize * w + x) * 4;
            canvas.data[i..i + 4].copy_from_slice(&lut[usize::from(cov)]);
        }
    };
    if radius < 2 {
        let mut full = alpha.to_vec();
        blur_alpha(&mut full, canvas.width, canvas.height, radius);
        for y in 0..h {
            for x in 0..w {
                put(x, y, full[y * w + x]);
            }
        }
        return;
    }
    let (hw, hh) = (w.div_ceil(2), h.div_ceil(2));
    let mut half = vec![0u8; hw * hh];
    for hy in 0..hh {
        for hx in 0..hw {
            let mut sum = 0u32;
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let (x, y) = (2 * hx + dx, 2 * hy + dy);
                if x < w && y < h {
                    sum += u32::from(alpha[y * w + x]);
                }
            }
            half[hy * hw + hx] = ((sum + 2) / 4) as u8;
        }
    }
    blur_alpha(&mut half, hw as u32, hh as u32, radius.div_ceil(2));
    // Neighbour index for each output column: pixel centres of a 2x upscale take 3/4 of the
    // nearer source pixel and 1/4 of the next one on each axis.
    let near_x: Vec<usize> = (0..w).map(|x| x / 2).collect();
    let far_x: Vec<usize> = (0..w)
        .map(|x| {
            if x % 2 == 0 {
                (x / 2).saturating_sub(1)
            } else {
                (x / 2 + 1).min(hw - 1)
            }
        })
        .collect();
    let mut column_mix = vec![0u32; hw];
    for y in 0..h {
        let sy = y / 2;
        let ny = if y % 2 == 0 {
            sy.saturating_sub(1)
        } else {
            (sy + 1).min(hh - 1)
        };
        let (near, far) = (&half[sy * hw..(sy + 1) * hw], &half[ny * hw..(ny + 1) * hw]);
        let mut any = false;
        for ((m, &a), &b) in column_mix.iter_mut().zip(near).zip(far) {
            *m = 3 * u32::from(a) + u32::from(b);
            any |= *m != 0;
        }
        if !any {
            continue;
        }
        for x in 0..w {
            let v = 3 * column_mix[near_x[x]] + column_mix[far_x[x]];
            put(x, y, ((v + 8) / 16) as u8);
        }
    }
}
