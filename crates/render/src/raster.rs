//! Glyph masks from font outlines (tiny-skia), their cache, and coverage blits.

use std::sync::Arc;

use caption_core::Color;
use caption_layout::{FaceId, FontData};
use tiny_skia::{FillRule, LineCap, LineJoin, Mask, PathBuilder, Stroke, Transform};

use crate::cache::{ByteBoundedCache, Weigh};
use crate::overlay::div255;

/// Sizes and outline widths are cached in 1/16 px steps, positions in 1/4 px steps: finer
/// steps are invisible and would only fill the cache during zoom animations.
const SIZE_STEPS: f32 = 16.0;
const SUBPIXEL_STEPS: f32 = 4.0;
/// Bytes of glyph masks kept per cache generation (at most twice this is held): every glyph
/// of a page or two, even while a pop animation asks for each at a dozen sizes.
const GLYPH_CACHE_BYTES: usize = 8 << 20;

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
    pub fill_runs: Vec<Run>,
    pub ring_runs: Vec<Run>,
}

impl GlyphMask {
    pub fn fill(&self) -> Coverage<'_> {
        Coverage {
            data: &self.fill,
            width: self.width,
            runs: &self.fill_runs,
        }
    }

    pub fn ring(&self) -> Coverage<'_> {
        Coverage {
            data: &self.ring,
            width: self.width,
            runs: &self.ring_runs,
        }
    }

    pub fn fill_mask(&self) -> MaskRef<'_> {
        self.mask_of(&self.fill)
    }

    pub fn ring_mask(&self) -> MaskRef<'_> {
        self.mask_of(&self.ring)
    }

    fn mask_of<'a>(&self, data: &'a [u8]) -> MaskRef<'a> {
        MaskRef {
            data,
            width: self.width,
            height: self.height,
        }
    }
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
        for (r, f) in data.iter_mut().zip(fill.data()) {
            let union = (*r).max(*f);
            *r = union.saturating_sub(*f);
        }
        data
    } else {
        Vec::new()
    };
    let fill = fill.data().to_vec();
    Some(GlyphMask {
        left,
        top,
        width,
        height,
        fill_runs: runs_of(&fill, width),
        ring_runs: runs_of(&ring, width),
        fill,
        ring,
    })
}

/// Rasterized glyphs shared by every frame (and every rayon worker).
#[derive(Debug)]
pub(crate) struct GlyphCache {
    masks: ByteBoundedCache<GlyphKey, Option<Arc<GlyphMask>>>,
}

impl Default for GlyphCache {
    fn default() -> Self {
        Self {
            masks: ByteBoundedCache::new(GLYPH_CACHE_BYTES),
        }
    }
}

impl GlyphCache {
    pub fn get(&self, font: &FontData, key: GlyphKey) -> Option<Arc<GlyphMask>> {
        self.masks
            .get_or_make(key, || rasterize(font, key).map(Arc::new))
    }

    pub fn len(&self) -> usize {
        self.masks.len()
    }
}

impl Weigh for GlyphMask {
    fn bytes(&self) -> usize {
        self.fill.len()
            + self.ring.len()
            + (self.fill_runs.len() + self.ring_runs.len()) * size_of::<Run>()
    }
}

/// Pixels per block of a solid fill.
const SOLID_PIXELS: usize = 64;

/// A premultiplied RGBA8 canvas.
#[derive(Debug)]
pub(crate) struct Canvas<'a> {
    pub data: &'a mut [u8],
    pub width: u32,
    pub height: u32,
}

impl Canvas<'_> {
    /// Paints `color` (straight alpha) through `coverage` at `(x, y)`, scaled by `opacity`.
    /// Only the coverage's runs are visited: fully covered stretches of an opaque color are
    /// plain stores, and only the anti-aliased edges are blended pixel by pixel.
    pub fn blit(&mut self, coverage: Coverage<'_>, x: i32, y: i32, color: Color, opacity: u8) {
        let alpha = div255(u32::from(color.a) * u32::from(opacity)) as u16;
        if alpha == 0 {
            return;
        }
        let source = [
            u16::from(color.r),
            u16::from(color.g),
            u16::from(color.b),
            255,
        ];
        // Pixels of the opaque color, copied into full stretches a block at a time.
        let mut solid = [0u8; 4 * SOLID_PIXELS];
        for px in solid.chunks_exact_mut(4) {
            px.copy_from_slice(&[color.r, color.g, color.b, 255]);
        }
        let (width, height) = (self.width as i32, self.height as i32);
        for run in coverage.runs {
            let py = y + run.row as i32;
            if py < 0 {
                continue;
            }
            if py >= height {
                break;
            }
            let x0 = (x + run.start as i32).max(0);
            let x1 = (x + run.end as i32).min(width);
            if x0 >= x1 {
                continue;
            }
            let span = (x1 - x0) as usize;
            let c = (py * width + x0) as usize;
            let pixels = &mut self.data[c * 4..(c + span) * 4];
            if run.opaque && alpha == 255 {
                for block in pixels.chunks_mut(solid.len()) {
                    block.copy_from_slice(&solid[..block.len()]);
                }
            } else if run.opaque {
                blend_span(pixels, source, |_| alpha);
            } else {
                let m = (run.row * coverage.width) as usize + (x0 - x) as usize;
                let cov = &coverage.data[m..m + span];
                blend_span(pixels, source, |i| div255_u16(u16::from(cov[i]) * alpha));
            }
        }
    }
}

/// Source over of `source` (straight, 0-255 per channel) at the alpha `alpha_at(i)` of each
/// pixel `i` of `pixels`.
#[inline]
fn blend_span(pixels: &mut [u8], source: [u16; 4], alpha_at: impl Fn(usize) -> u16) {
    for (i, d) in pixels.chunks_exact_mut(4).enumerate() {
        let a = alpha_at(i);
        let inv = 255 - a;
        for (d, s) in d.iter_mut().zip(source) {
            // s * a + d * (255 - a) <= 255 * 255: the whole blend fits 16-bit lanes.
            *d = div255_u16(s * a + u16::from(*d) * inv) as u8;
        }
    }
}

/// A stretch `[start, end)` of one mask row with coverage: all full (`opaque`) or mixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub row: u32,
    pub start: u32,
    pub end: u32,
    pub opaque: bool,
}

/// The runs of a `width`-wide coverage mask, row by row, left to right. Full stretches shorter
/// than a few pixels stay in the mixed run around them.
pub(crate) fn runs_of(data: &[u8], width: u32) -> Vec<Run> {
    const MIN_OPAQUE: usize = 4;
    let mut runs = Vec::new();
    if width == 0 {
        return runs;
    }
    for (row, line) in data.chunks_exact(width as usize).enumerate() {
        let row = row as u32;
        let mut push = |start: usize, end: usize, opaque: bool| {
            runs.push(Run {
                row,
                start: start as u32,
                end: end as u32,
                opaque,
            });
        };
        let same_until = |from: usize, value: u8| {
            line[from..]
                .iter()
                .position(|&v| v != value)
                .map_or(line.len(), |n| from + n)
        };
        let mut x = 0;
        let mut mixed_from: Option<usize> = None;
        while x < line.len() {
            match line[x] {
                0 => {
                    if let Some(from) = mixed_from.take() {
                        push(from, x, false);
                    }
                    x = same_until(x, 0);
                }
                255 => {
                    let end = same_until(x, 255);
                    if end - x >= MIN_OPAQUE {
                        if let Some(from) = mixed_from.take() {
                            push(from, x, false);
                        }
                        push(x, end, true);
                    } else {
                        mixed_from.get_or_insert(x);
                    }
                    x = end;
                }
                _ => {
                    mixed_from.get_or_insert(x);
                    x += 1;
                }
            }
        }
        if let Some(from) = mixed_from {
            push(from, line.len(), false);
        }
    }
    runs
}

/// A coverage mask with its runs, ready to paint through.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coverage<'a> {
    pub data: &'a [u8],
    pub width: u32,
    pub runs: &'a [Run],
}

/// `v / 255` rounded, exact for `v <= 255 * 255`, in 16-bit arithmetic (8 lanes per SSE2 op).
#[inline]
fn div255_u16(v: u16) -> u16 {
    let v = v + 128;
    (v + (v >> 8)) >> 8
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
        let span = (x1 - x0) as usize;
        let opacity = u32::from(opacity);
        for py in y0..y1 {
            let m = ((py - y) as u32 * mask.width) as usize + (x0 - x) as usize;
            let t = (py as u32 * self.width) as usize + x0 as usize;
            let source = &mask.data[m..m + span];
            let target = &mut self.data[t..t + span];
            if opacity == 255 {
                for (t, &v) in target.iter_mut().zip(source) {
                    *t = (*t).max(v);
                }
            } else {
                for (t, &v) in target.iter_mut().zip(source) {
                    *t = (*t).max(div255(u32::from(v) * opacity) as u8);
                }
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
    let window = Window::new(2 * r as u32 + 1);
    let mut line = vec![0u8; w];
    let mut out = vec![0u8; w * h];
    let mut sums = vec![0u32; w];
    for _ in 0..3 {
        for row in mask.chunks_exact_mut(w) {
            if row.iter().all(|&v| v == 0) {
                continue;
            }
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
                *d = window.mean(s);
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

/// Division by a box's pixel count, as a multiply and a shift: exact while `sum * pixels`
/// stays under 2^40, i.e. for any box under 65,000 pixels wide.
#[derive(Debug, Clone, Copy)]
struct Window {
    half: u32,
    reciprocal: u64,
}

impl Window {
    const SHIFT: u32 = 40;

    fn new(pixels: u32) -> Self {
        Self {
            half: pixels / 2,
            reciprocal: (1u64 << Self::SHIFT).div_ceil(u64::from(pixels)),
        }
    }

    /// `(sum + pixels / 2) / pixels`, rounded to nearest.
    #[inline]
    fn mean(self, sum: u32) -> u8 {
        ((u64::from(sum + self.half) * self.reciprocal) >> Self::SHIFT) as u8
    }
}

fn box_blur_line(src: &[u8], dst: &mut [u8], r: usize, window: Window) {
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
        dst[i] = window.mean(sum);
        if i >= r {
            sum -= u32::from(src[i - r]);
        }
    }
}

/// The blurred copy of coverage `alpha` (`width` x `height`). Blurs wider than 1 px run at half
/// resolution and are scaled back up bilinearly: a quarter of the work, and invisible in a soft
/// shadow.
pub(crate) fn blurred(alpha: &[u8], width: u32, height: u32, radius: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    if radius < 2 {
        let mut full = alpha.to_vec();
        blur_alpha(&mut full, width, height, radius);
        return full;
    }
    let mut out = vec![0u8; w * h];
    let (hw, hh) = (w.div_ceil(2), h.div_ceil(2));
    // 2x2 means; pixels past the edge count as transparent.
    let mut half = vec![0u8; hw * hh];
    let blank = vec![0u8; w];
    for (hy, out) in half.chunks_exact_mut(hw).enumerate() {
        let top = &alpha[2 * hy * w..(2 * hy + 1) * w];
        let bottom = alpha
            .get((2 * hy + 1) * w..(2 * hy + 2) * w)
            .unwrap_or(&blank);
        let pairs = top.chunks_exact(2).zip(bottom.chunks_exact(2));
        for (o, (t, b)) in out.iter_mut().zip(pairs) {
            let sum = u16::from(t[0]) + u16::from(t[1]) + u16::from(b[0]) + u16::from(b[1]);
            *o = ((sum + 2) / 4) as u8;
        }
        if w % 2 == 1 {
            let sum = u16::from(top[w - 1]) + u16::from(bottom[w - 1]);
            out[hw - 1] = ((sum + 2) / 4) as u8;
        }
    }
    blur_alpha(&mut half, hw as u32, hh as u32, radius.div_ceil(2));
    // Pixel centres of a 2x upscale take 3/4 of the nearer source pixel and 1/4 of the next
    // one on each axis (the edge pixel itself past the edge).
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
        upscale_row(&column_mix, &mut out[y * w..(y + 1) * w]);
    }
    out
}

/// One output row of the 2x upscale from `mix` (3 near + 1 far row, per source column).
fn upscale_row(mix: &[u32], row: &mut [u8]) {
    let value = |near: u32, far: u32| ((3 * near + far + 8) / 16) as u8;
    let (w, last) = (row.len(), mix.len() - 1);
    row[0] = value(mix[0], mix[0]);
    if w > 1 {
        row[1] = value(mix[0], mix[1.min(last)]);
    }
    // Columns 2k and 2k + 1 for every k with both neighbours: no clamps, so it vectorises.
    for (pair, around) in row[2..].chunks_exact_mut(2).zip(mix.windows(3)) {
        pair[0] = value(around[1], around[0]);
        pair[1] = value(around[1], around[2]);
    }
    // The last column(s), whose right neighbour is past the edge.
    let done = 2 + 2 * mix.len().saturating_sub(2);
    for (x, out) in row.iter_mut().enumerate().skip(done) {
        let k = x / 2;
        let far = if x % 2 == 0 { k - 1 } else { (k + 1).min(last) };
        *out = value(mix[k], mix[far]);
    }
}

/// Paints coverage `alpha` (canvas-sized) into an empty canvas, tinted `color`.
pub(crate) fn tint_into(canvas: &mut Canvas<'_>, alpha: &[u8], color: Color) {
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
    // The canvas is empty: every pixel is written, without a branch.
    for (d, &a) in canvas.data.chunks_exact_mut(4).zip(alpha) {
        d.copy_from_slice(&lut[usize::from(a)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_rows_into_full_and_mixed_stretches() {
        #[rustfmt::skip]
        let mask = [
            0, 0, 0, 0, 0, 0, 0, 0,
            0, 9, 255, 255, 255, 255, 255, 7,
            255, 255, 0, 40, 255, 0, 0, 255,
        ];
        let run = |row, start, end, opaque| Run {
            row,
            start,
            end,
            opaque,
        };
        assert_eq!(
            runs_of(&mask, 8),
            vec![
                run(1, 1, 2, false),
                run(1, 2, 7, true),
                run(1, 7, 8, false),
                run(2, 0, 2, false),
                run(2, 3, 5, false),
                run(2, 7, 8, false),
            ]
        );
    }

    #[test]
    fn painting_through_runs_equals_blending_every_pixel() {
        let (w, h) = (8u32, 3u32);
        let mask: Vec<u8> = (0..w * h)
            .map(|i| [0, 255, 255, 255, 255, 128, 3][i as usize % 7])
            .collect();
        let runs = runs_of(&mask, w);
        let color = Color::rgba(200, 100, 50, 255);
        for opacity in [255, 100] {
            let mut painted = vec![30u8; (w * h * 4) as usize];
            Canvas {
                data: &mut painted,
                width: w,
                height: h,
            }
            .blit(
                Coverage {
                    data: &mask,
                    width: w,
                    runs: &runs,
                },
                0,
                0,
                color,
                opacity,
            );
            for (i, &cov) in mask.iter().enumerate() {
                let a = div255(u32::from(cov) * u32::from(opacity));
                let expect = |s: u32| div255(s * a + 30 * (255 - a)) as u8;
                let want = [expect(200), expect(100), expect(50), expect(255)];
                assert_eq!(
                    painted[i * 4..i * 4 + 4],
                    want,
                    "pixel {i}, opacity {opacity}"
                );
            }
        }
    }
}
