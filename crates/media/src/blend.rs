//! Blending a premultiplied RGBA overlay straight into a YUV frame's planes, inside the
//! overlay's box only: converting the whole frame to RGB and back costs ~8 ms a 1080p frame,
//! this costs a fraction of a millisecond for a caption-sized box.

use crate::overlay::Overlay;

/// The YUV plane layouts the blender writes natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PlaneLayout {
    /// Three planes, chroma halved both ways (`yuv420p`, `yuvj420p`).
    Yuv420p,
    /// Three planes, chroma halved horizontally (`yuv422p`, `yuvj422p`).
    Yuv422p,
    /// Three planes, full-size chroma (`yuv444p`, `yuvj444p`).
    Yuv444p,
    /// Luma plane plus one interleaved U/V plane, chroma halved both ways (`nv12`).
    Nv12,
    /// 10-bit little-endian samples in 16-bit words, otherwise as the 8-bit layouts.
    Yuv420p10,
    Yuv422p10,
    Yuv444p10,
}

impl PlaneLayout {
    /// log2 of the horizontal and vertical chroma subsampling.
    fn chroma_shift(self) -> (u32, u32) {
        match self {
            Self::Yuv420p | Self::Nv12 | Self::Yuv420p10 => (1, 1),
            Self::Yuv422p | Self::Yuv422p10 => (1, 0),
            Self::Yuv444p | Self::Yuv444p10 => (0, 0),
        }
    }

    fn bit_depth(self) -> u32 {
        match self {
            Self::Yuv420p10 | Self::Yuv422p10 | Self::Yuv444p10 => 10,
            _ => 8,
        }
    }
}

/// The YUV matrix (luma coefficients) of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum YuvMatrix {
    Bt601,
    Bt709,
    Bt2020,
}

impl YuvMatrix {
    /// What players assume for untagged video: BT.709 from 720 lines up, BT.601 below.
    pub fn default_for_height(height: u32) -> Self {
        if height >= 720 {
            Self::Bt709
        } else {
            Self::Bt601
        }
    }

    fn kr_kb(self) -> (f32, f32) {
        match self {
            Self::Bt601 => (0.299, 0.114),
            Self::Bt709 => (0.2126, 0.0722),
            Self::Bt2020 => (0.2627, 0.0593),
        }
    }
}

/// How a frame's YUV values relate to RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Colorimetry {
    pub matrix: YuvMatrix,
    /// Full range (0-255, "JPEG") instead of limited range (16-235 luma, 16-240 chroma).
    pub full_range: bool,
}

/// A mutable view of a YUV frame's planes.
///
/// `planes[i]` starts at the top-left sample of plane `i` and holds `strides[i]` bytes a row;
/// for [`PlaneLayout::Nv12`] plane 1 is the interleaved U/V plane and plane 2 is unused
/// (an empty slice).
#[derive(Debug)]
pub struct FrameMut<'a> {
    pub layout: PlaneLayout,
    pub width: u32,
    pub height: u32,
    pub planes: [&'a mut [u8]; 3],
    pub strides: [usize; 3],
}

/// An overlay converted to the frame's YUV space and clipped to the frame: premultiplied
/// sample values in the frame's bit depth and an inverse alpha on a 0-256 scale, for luma and
/// for the chroma grid (the average over the luma pixels each chroma sample covers). Only the
/// span of each row between its first and last visible pixel is kept, so neither the
/// conversion nor the blend spends time or memory on the empty parts of a caption's box.
#[derive(Debug)]
pub struct PreparedOverlay {
    layout: PlaneLayout,
    luma: Block,
    chroma: Block,
}

#[derive(Debug, Default)]
struct Block {
    x0: usize,
    y0: usize,
    /// Per row from `y0`: the columns `start..end` (from `x0`) kept, and where their samples
    /// begin in `values` and `inv`. Everything outside is fully transparent.
    rows: Vec<Span>,
    /// Premultiplied values: Y (luma), or U and V (chroma, `values[1]` for V).
    values: [Vec<u16>; 2],
    /// Inverse alpha per sample, 0 (opaque) to 256 (transparent).
    inv: Vec<u16>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
    offset: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.offset as usize..(self.offset + self.end - self.start) as usize
    }
}

/// Fixed-point fraction bits of [`Fixed`]'s coefficients: their rounding moves a result by
/// under 0.01 of a code value, far below the final rounding.
const FIXED_BITS: u32 = 16;

/// The conversion from premultiplied 8-bit R, G, B, A to premultiplied Y, U, V code values,
/// as integer dot products. The conversion is affine, and the offsets are scaled by alpha
/// like the colour itself, so it is linear in (R, G, B, A): sums of pixels convert like pixels,
/// which lets chroma convert the sum of the pixels it covers once instead of each pixel.
struct Fixed {
    y: [i32; 4],
    u: [i32; 4],
    v: [i32; 4],
    max: i32,
}

impl Fixed {
    fn new(colorimetry: Colorimetry, depth: u32) -> Self {
        let c = Coefficients::new(colorimetry, depth);
        let kg = 1.0 - c.kr - c.kb;
        let scale = (1_u32 << FIXED_BITS) as f32 / 255.0;
        let fix = |row: [f32; 4]| row.map(|k| (k * scale).round() as i32);
        let (db, dr) = (2.0 * (1.0 - c.kb), 2.0 * (1.0 - c.kr));
        Self {
            y: fix([
                c.y_scale * c.kr,
                c.y_scale * kg,
                c.y_scale * c.kb,
                c.y_offset,
            ]),
            u: fix([
                -c.c_scale * c.kr / db,
                -c.c_scale * kg / db,
                c.c_scale * 0.5,
                c.c_offset,
            ]),
            v: fix([
                c.c_scale * 0.5,
                -c.c_scale * kg / dr,
                -c.c_scale * c.kb / dr,
                c.c_offset,
            ]),
            max: (1_i32 << depth) - 1,
        }
    }

    /// `k . rgba`, divided by `2^FIXED_BITS * 2^count_log2` (the pixel count a sum covers),
    /// rounded and clamped to a code value.
    #[inline(always)]
    fn apply(&self, k: &[i32; 4], rgba: [i32; 4], count_log2: u32) -> u16 {
        let dot = k[0] * rgba[0] + k[1] * rgba[1] + k[2] * rgba[2] + k[3] * rgba[3];
        let shift = FIXED_BITS + count_log2;
        (((dot + (1 << (shift - 1))) >> shift).clamp(0, self.max)) as u16
    }
}

/// Inverse alpha on the blender's 0-256 scale for an alpha sum over `count` pixels:
/// `256 - round(sum * 256 / (255 * count))`.
#[inline]
fn inverse_alpha(alpha_sum: u32, count: u32) -> u16 {
    (256 - (alpha_sum * 512 + 255 * count) / (510 * count)) as u16
}

/// [`inverse_alpha`] of one pixel: round(a * 256 / 255) is a + 1 exactly when a >= 128.
#[inline(always)]
fn inverse_alpha_u8(alpha: u8) -> u16 {
    256 - u16::from(alpha) - u16::from(alpha >> 7)
}

/// Index range of the first and last pixel of `row` (RGBA8) that is not fully transparent.
fn visible_span(row: &[u8]) -> Option<(usize, usize)> {
    let clear = |p: &[u8]| p == [0, 0, 0, 0];
    // Whole 16-pixel blocks first: caption boxes are mostly empty, and comparing 64 bytes
    // with zero at once is what makes empty rows cheap.
    let block = |c: &[u8]| c.iter().fold(0_u8, |acc, &b| acc | b) == 0;
    let pixels = row.len() / 4;
    let mut first = 0;
    while first + 16 <= pixels && block(&row[first * 4..(first + 16) * 4]) {
        first += 16;
    }
    first += row[first * 4..].chunks_exact(4).position(|p| !clear(p))?;
    let mut end = pixels;
    while end >= first + 16 && block(&row[(end - 16) * 4..end * 4]) {
        end -= 16;
    }
    end -= row[first * 4..end * 4]
        .chunks_exact(4)
        .rev()
        .position(|p| !clear(p))
        .unwrap_or(0);
    Some((first, end))
}

#[inline(always)]
fn rgba_i32(p: &[u8; 4]) -> [i32; 4] {
    [
        i32::from(p[0]),
        i32::from(p[1]),
        i32::from(p[2]),
        i32::from(p[3]),
    ]
}

impl PreparedOverlay {
    /// Converts `overlay` (already in the frame's coded orientation) for a `width` x `height`
    /// frame of `layout` and `colorimetry`. Returns `None` when nothing of it is on the frame.
    ///
    /// Integer arithmetic over the visible span of each row only. Chroma converts the sum of
    /// the pixels each sample covers (positions inside the frame but outside the overlay count
    /// as transparent, positions past an odd frame edge do not count).
    pub fn new(
        overlay: &Overlay,
        layout: PlaneLayout,
        colorimetry: Colorimetry,
        width: u32,
        height: u32,
    ) -> Option<Self> {
        let (fw, fh) = (i64::from(width), i64::from(height));
        let (ox, oy) = (i64::from(overlay.x()), i64::from(overlay.y()));
        let x0 = ox.max(0);
        let y0 = oy.max(0);
        let x1 = (ox + i64::from(overlay.width())).min(fw);
        let y1 = (oy + i64::from(overlay.height())).min(fh);
        if x0 >= x1 || y0 >= y1 {
            return None;
        }
        // Every coordinate below is within the frame, so usize from here on.
        let (x0, y0, x1, y1) = (x0 as usize, y0 as usize, x1 as usize, y1 as usize);
        let (fw, fh) = (width as usize, height as usize);
        let fixed = Fixed::new(colorimetry, layout.bit_depth());
        let ow = overlay.width() as usize;
        let rgba = overlay.rgba();
        // The visible part of frame row `y` (x0..x1 only), as RGBA8.
        let row_of = |y: usize| -> &[u8] {
            let start = ((y as i64 - oy) as usize * ow + (x0 as i64 - ox) as usize) * 4;
            rgba.get(start..start + (x1 - x0) * 4).unwrap_or_default()
        };

        // Luma: the visible span of each row, converted pixel by pixel.
        let mut luma = Block {
            x0,
            y0,
            ..Block::default()
        };
        let mut spans = Vec::with_capacity(y1 - y0);
        let mut total = 0_u32;
        for y in y0..y1 {
            let span = match visible_span(row_of(y)) {
                Some((start, end)) => Span {
                    start: start as u32,
                    end: end as u32,
                    offset: total,
                },
                None => Span {
                    offset: total,
                    ..Span::default()
                },
            };
            total += span.end - span.start;
            spans.push(span);
        }
        luma.values[0] = vec![0; total as usize];
        luma.inv = vec![0; total as usize];
        for (y, span) in (y0..y1).zip(&spans) {
            let (pixels, _) = row_of(y)[span.start as usize * 4..span.end as usize * 4].as_chunks();
            let range = span.range();
            let out = luma.values[0][range.clone()]
                .iter_mut()
                .zip(&mut luma.inv[range]);
            for ((value, inv), px) in out.zip(pixels) {
                *value = fixed.apply(&fixed.y, rgba_i32(px), 0);
                *inv = inverse_alpha_u8(px[3]);
            }
        }
        luma.rows = spans;

        // Chroma: each sample's covered pixels summed, then converted once.
        let (sx, sy) = layout.chroma_shift();
        let (cx0, cy0) = (x0 >> sx, y0 >> sy);
        let cy1 = (y1 - 1) >> sy;
        let mut chroma = Block {
            x0: cx0,
            y0: cy0,
            ..Block::default()
        };
        let chroma_bound = luma.inv.len() / (1 << (sx + sy)) + 2 * (y1 - y0) + 2;
        for v in &mut chroma.values {
            v.reserve(chroma_bound);
        }
        chroma.inv.reserve(chroma_bound);
        let mut total = 0_u32;
        for cy in cy0..=cy1 {
            let rows = (cy << sy).max(y0)..((cy + 1) << sy).min(y1);
            let (mut first, mut end) = (usize::MAX, 0);
            for y in rows.clone() {
                let s = luma.rows[y - y0];
                if s.start < s.end {
                    first = first.min(((x0 + s.start as usize) >> sx) - cx0);
                    end = end.max(((x0 + s.end as usize - 1) >> sx) - cx0 + 1);
                }
            }
            if first >= end {
                chroma.rows.push(Span {
                    offset: total,
                    ..Span::default()
                });
                continue;
            }
            let rows_in_frame = ((cy + 1) << sy).min(fh) - (cy << sy);
            let sources = [rows.start, rows.end - 1].map(row_of);
            let sources = &sources[..rows.len()];
            for i in first..end {
                let cx = cx0 + i;
                let columns = ((cx << sx).max(x0) - x0) * 4..(((cx + 1) << sx).min(x1) - x0) * 4;
                let mut sum = [0_i32; 4];
                for src in sources {
                    let (pixels, _) = src[columns.clone()].as_chunks::<4>();
                    for px in pixels {
                        for (s, c) in sum.iter_mut().zip(rgba_i32(px)) {
                            *s += c;
                        }
                    }
                }
                let count = rows_in_frame * (((cx + 1) << sx).min(fw) - (cx << sx));
                // 1, 2 or 4 positions: a power of two.
                let count_log2 = count.trailing_zeros();
                chroma.values[0].push(fixed.apply(&fixed.u, sum, count_log2));
                chroma.values[1].push(fixed.apply(&fixed.v, sum, count_log2));
                chroma.inv.push(inverse_alpha(sum[3] as u32, count as u32));
            }
            chroma.rows.push(Span {
                start: first as u32,
                end: end as u32,
                offset: total,
            });
            total += (end - first) as u32;
        }
        Some(Self {
            layout,
            luma,
            chroma,
        })
    }

    /// Blends into `frame`, which must have the layout and size this was prepared for.
    pub fn blend_into(&self, frame: &mut FrameMut<'_>) {
        debug_assert_eq!(frame.layout, self.layout);
        let [p0, p1, p2] = &mut frame.planes;
        let [s0, s1, s2] = frame.strides;
        if self.layout.bit_depth() == 8 {
            blend_block_u8(p0, s0, &self.luma, 0, 1, 0);
            if self.layout == PlaneLayout::Nv12 {
                blend_block_u8(p1, s1, &self.chroma, 0, 2, 0);
                blend_block_u8(p1, s1, &self.chroma, 1, 2, 1);
            } else {
                blend_block_u8(p1, s1, &self.chroma, 0, 1, 0);
                blend_block_u8(p2, s2, &self.chroma, 1, 1, 0);
            }
        } else {
            let max = (1_u32 << self.layout.bit_depth()) - 1;
            blend_block_u16(p0, s0, &self.luma, 0, max);
            blend_block_u16(p1, s1, &self.chroma, 0, max);
            blend_block_u16(p2, s2, &self.chroma, 1, max);
        }
    }

    /// Heap bytes held, for cache accounting.
    pub fn heap_bytes(&self) -> usize {
        [&self.luma, &self.chroma]
            .iter()
            .map(|b| {
                (b.values[0].capacity() + b.values[1].capacity() + b.inv.capacity()) * 2
                    + b.rows.capacity() * size_of::<Span>()
            })
            .sum()
    }
}

/// The rows of `block` with anything to blend: (row from `y0`, first column from `x0`, span).
fn visible_rows(block: &Block) -> impl Iterator<Item = (usize, usize, Span)> + '_ {
    block
        .rows
        .iter()
        .enumerate()
        .filter(|(_, s)| s.start < s.end)
        .map(|(row, &s)| (row, s.start as usize, s))
}

/// dst = premultiplied + dst * inverse_alpha / 256, over one block of one 8-bit plane.
/// `channel` picks the values (0: Y or U, 1: V); samples of one channel sit `step` bytes
/// apart in a row, starting `offset` bytes in (NV12's interleaved chroma: step 2, offset 0
/// for U and 1 for V).
fn blend_block_u8(
    plane: &mut [u8],
    stride: usize,
    block: &Block,
    channel: usize,
    step: usize,
    offset: usize,
) {
    let values = &block.values[channel];
    for (row, start, span) in visible_rows(block) {
        let (src, inv) = (&values[span.range()], &block.inv[span.range()]);
        let first = (block.y0 + row) * stride + (block.x0 + start) * step + offset;
        let Some(dst) = plane.get_mut(first..first + (src.len() - 1) * step + 1) else {
            return;
        };
        if step == 1 {
            for ((d, &v), &a) in dst.iter_mut().zip(src).zip(inv) {
                *d = blend_u8(*d, v, a);
            }
        } else {
            for ((d, &v), &a) in dst.iter_mut().step_by(step).zip(src).zip(inv) {
                *d = blend_u8(*d, v, a);
            }
        }
    }
}

#[inline(always)]
fn blend_u8(dst: u8, value: u16, inv: u16) -> u8 {
    let blended = u32::from(value) + ((u32::from(dst) * u32::from(inv) + 128) >> 8);
    blended.min(255) as u8
}

/// The same for planes of 16-bit little-endian words holding `max`-limited samples.
fn blend_block_u16(plane: &mut [u8], stride: usize, block: &Block, channel: usize, max: u32) {
    let values = &block.values[channel];
    for (row, start, span) in visible_rows(block) {
        let (src, inv) = (&values[span.range()], &block.inv[span.range()]);
        let first = (block.y0 + row) * stride + (block.x0 + start) * 2;
        let Some(dst) = plane.get_mut(first..first + src.len() * 2) else {
            return;
        };
        for ((d, &v), &a) in dst.chunks_exact_mut(2).zip(src).zip(inv) {
            let old = u32::from(u16::from_le_bytes([d[0], d[1]]));
            let blended = (u32::from(v) + ((old * u32::from(a) + 128) >> 8)).min(max);
            d.copy_from_slice(&(blended as u16).to_le_bytes());
        }
    }
}

/// Luma and chroma conversion constants for one colorimetry and bit depth.
struct Coefficients {
    kr: f32,
    kb: f32,
    /// Scale and offset of luma and chroma in code values.
    y_scale: f32,
    y_offset: f32,
    c_scale: f32,
    c_offset: f32,
}

impl Coefficients {
    fn new(colorimetry: Colorimetry, depth: u32) -> Self {
        let (kr, kb) = colorimetry.matrix.kr_kb();
        let unit = (1_u32 << (depth - 8)) as f32;
        if colorimetry.full_range {
            let max = ((1_u32 << depth) - 1) as f32;
            Self {
                kr,
                kb,
                y_scale: max,
                y_offset: 0.0,
                c_scale: max,
                c_offset: 128.0 * unit,
            }
        } else {
            Self {
                kr,
                kb,
                y_scale: 219.0 * unit,
                y_offset: 16.0 * unit,
                c_scale: 224.0 * unit,
                c_offset: 128.0 * unit,
            }
        }
    }
}

/// Blends `overlay` (in the frame's coded orientation) into `frame`; a one-off convenience
/// over [`PreparedOverlay`], which the pipeline caches across frames instead.
pub fn blend_overlay(frame: &mut FrameMut<'_>, overlay: &Overlay, colorimetry: Colorimetry) {
    if let Some(prepared) = PreparedOverlay::new(
        overlay,
        frame.layout,
        colorimetry,
        frame.width,
        frame.height,
    ) {
        prepared.blend_into(frame);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct Owned {
        planes: [Vec<u8>; 3],
        strides: [usize; 3],
        layout: PlaneLayout,
        w: u32,
        h: u32,
    }

    impl Owned {
        fn new(layout: PlaneLayout, w: u32, h: u32, yuv: [u16; 3]) -> Self {
            let (sx, sy) = layout.chroma_shift();
            let bytes = if layout.bit_depth() > 8 { 2 } else { 1 };
            let (cw, ch) = (
                (w as usize).div_ceil(1 << sx),
                (h as usize).div_ceil(1 << sy),
            );
            let stride0 = w as usize * bytes + 7;
            let fill = |n: usize, stride: usize, rows: usize, v: &[u16]| -> Vec<u8> {
                let mut out = vec![0_u8; stride * rows];
                for r in 0..rows {
                    for i in 0..n {
                        let val = v[i % v.len()];
                        if bytes == 2 {
                            out[r * stride + 2 * i..r * stride + 2 * i + 2]
                                .copy_from_slice(&val.to_le_bytes());
                        } else {
                            out[r * stride + i] = val as u8;
                        }
                    }
                }
                out
            };
            let y = fill(w as usize, stride0, h as usize, &[yuv[0]]);
            if layout == PlaneLayout::Nv12 {
                let stride1 = cw * 2 + 3;
                let uv = fill(cw * 2, stride1, ch, &[yuv[1], yuv[2]]);
                return Self {
                    planes: [y, uv, Vec::new()],
                    strides: [stride0, stride1, 0],
                    layout,
                    w,
                    h,
                };
            }
            let stride1 = cw * bytes + 5;
            let u = fill(cw, stride1, ch, &[yuv[1]]);
            let v = fill(cw, stride1, ch, &[yuv[2]]);
            Self {
                planes: [y, u, v],
                strides: [stride0, stride1, stride1],
                layout,
                w,
                h,
            }
        }

        fn view(&mut self) -> FrameMut<'_> {
            let [a, b, c] = &mut self.planes;
            FrameMut {
                layout: self.layout,
                width: self.w,
                height: self.h,
                planes: [a, b, c],
                strides: self.strides,
            }
        }

        fn sample(&self, plane: usize, x: usize, y: usize) -> u16 {
            let s = self.strides[plane];
            if self.layout.bit_depth() > 8 {
                u16::from_le_bytes([
                    self.planes[plane][y * s + 2 * x],
                    self.planes[plane][y * s + 2 * x + 1],
                ])
            } else {
                u16::from(self.planes[plane][y * s + x])
            }
        }

        fn yuv(&self, x: usize, y: usize) -> [u16; 3] {
            let (sx, sy) = self.layout.chroma_shift();
            let (cx, cy) = (x >> sx, y >> sy);
            if self.layout == PlaneLayout::Nv12 {
                return [
                    self.sample(0, x, y),
                    self.sample(1, 2 * cx, cy),
                    self.sample(1, 2 * cx + 1, cy),
                ];
            }
            [
                self.sample(0, x, y),
                self.sample(1, cx, cy),
                self.sample(2, cx, cy),
            ]
        }
    }

    /// The conversion as floats, straight from the definition: premultiplied Y'CbCr of each
    /// pixel, chroma averaged over the frame positions a sample covers.
    fn reference_yuva(c: &Coefficients, px: &[u8]) -> [f64; 4] {
        let [r, g, b, a] = [px[0], px[1], px[2], px[3]].map(|v| f64::from(v) / 255.0);
        let (kr, kb) = (f64::from(c.kr), f64::from(c.kb));
        let y = kr * r + (1.0 - kr - kb) * g + kb * b;
        let pb = (b - y) / (2.0 * (1.0 - kb));
        let pr = (r - y) / (2.0 * (1.0 - kr));
        let co = f64::from(c.c_offset);
        let cs = f64::from(c.c_scale);
        [
            f64::from(c.y_offset) * a + f64::from(c.y_scale) * y,
            co * a + cs * pb,
            co * a + cs * pr,
            a,
        ]
    }

    fn random_overlay(seed: u64, x: i32, y: i32, w: u32, h: u32) -> Overlay {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        for _ in 0..w * h {
            let roll = next();
            let a = match roll % 4 {
                0 => 0,
                1 => 255,
                _ => (roll >> 8) as u8,
            };
            let mut c = |shift: u32| ((next() >> shift) % (u64::from(a) + 1)) as u8;
            rgba.extend_from_slice(&[c(3), c(11), c(19), a]);
        }
        Overlay::new(x, y, w, h, rgba).unwrap()
    }

    #[test]
    fn integer_conversion_matches_the_float_definition_within_one_code_value() {
        let layouts = [
            PlaneLayout::Yuv420p,
            PlaneLayout::Yuv422p,
            PlaneLayout::Yuv444p,
            PlaneLayout::Nv12,
            PlaneLayout::Yuv420p10,
            PlaneLayout::Yuv422p10,
            PlaneLayout::Yuv444p10,
        ];
        let colorimetries = [YuvMatrix::Bt601, YuvMatrix::Bt709, YuvMatrix::Bt2020]
            .into_iter()
            .flat_map(|matrix| [false, true].map(|full_range| Colorimetry { matrix, full_range }));
        let (fw, fh) = (37_u32, 23_u32);
        for (n, colorimetry) in colorimetries.enumerate() {
            for layout in layouts {
                // Odd positions, odd sizes, and a box past the right and bottom edges.
                let overlay = random_overlay(n as u64 * 31 + 7, 3, 5, 40, 21);
                let p = PreparedOverlay::new(&overlay, layout, colorimetry, fw, fh).unwrap();
                let c = Coefficients::new(colorimetry, layout.bit_depth());
                let max = f64::from((1_u32 << layout.bit_depth()) - 1);
                let at = |x: i64, y: i64| -> [f64; 4] {
                    let (ox, oy) = (x - 3, y - 5);
                    if ox < 0 || oy < 0 || ox >= 40 || oy >= 21 {
                        return [0.0; 4];
                    }
                    let i = ((oy * 40 + ox) * 4) as usize;
                    reference_yuva(&c, &overlay.rgba()[i..i + 4])
                };
                let close = |got: u16, want: f64, what: &str| {
                    let want = want.round().clamp(0.0, max);
                    assert!(
                        (f64::from(got) - want).abs() <= 1.0,
                        "{layout:?} {colorimetry:?} {what}: got {got}, want {want}"
                    );
                };
                let inv = |alpha: f64| 256.0 - alpha * 256.0;
                for y in 0..fh as usize {
                    for x in 0..fw as usize {
                        let v = at(x as i64, y as i64);
                        let (values, alpha) = sample(&p.luma, x, y);
                        close(values[0], v[0], "Y");
                        close(alpha, inv(v[3]), "luma alpha");
                    }
                }
                let (sx, sy) = layout.chroma_shift();
                let (cw, ch) = (fw.div_ceil(1 << sx), fh.div_ceil(1 << sy));
                for cy in 0..i64::from(ch) {
                    for cx in 0..i64::from(cw) {
                        let mut sum = [0.0; 4];
                        let mut count = 0.0;
                        for y in (cy << sy)..((cy + 1) << sy).min(i64::from(fh)) {
                            for x in (cx << sx)..((cx + 1) << sx).min(i64::from(fw)) {
                                for (s, v) in sum.iter_mut().zip(at(x, y)) {
                                    *s += v;
                                }
                                count += 1.0;
                            }
                        }
                        let (values, alpha) = sample(&p.chroma, cx as usize, cy as usize);
                        close(values[0], sum[1] / count, "U");
                        close(values[1], sum[2] / count, "V");
                        close(alpha, inv(sum[3] / count), "chroma alpha");
                    }
                }
            }
        }
    }

    /// A block's (values, inverse alpha) at plane position (x, y); transparent outside it.
    fn sample(block: &Block, x: usize, y: usize) -> ([u16; 2], u16) {
        let transparent = ([0, 0], 256);
        let Some(span) = y.checked_sub(block.y0).and_then(|r| block.rows.get(r)) else {
            return transparent;
        };
        let Some(col) = x.checked_sub(block.x0 + span.start as usize) else {
            return transparent;
        };
        if col >= (span.end - span.start) as usize {
            return transparent;
        }
        let i = span.offset as usize + col;
        let v = |c: usize| block.values[c].get(i).copied().unwrap_or(0);
        ([v(0), v(1)], block.inv[i])
    }

    #[test]
    fn spans_cover_every_visible_sample_and_the_blend_skips_nothing_else() {
        // A transparent overlay with two dots: the spans hold exactly the dots' rows.
        let (w, h) = (20_u32, 10_u32);
        let mut rgba = vec![0_u8; (w * h * 4) as usize];
        for (x, y) in [(3_u32, 2_u32), (15, 7)] {
            let i = ((y * w + x) * 4) as usize;
            rgba[i..i + 4].copy_from_slice(&[255, 255, 255, 255]);
        }
        let overlay = Overlay::new(0, 0, w, h, rgba).unwrap();
        let p = PreparedOverlay::new(&overlay, PlaneLayout::Yuv420p, LIMITED_709, 32, 16).unwrap();
        let lit = |b: &Block| -> Vec<_> {
            visible_rows(b)
                .map(|(row, start, s)| (row, start, s.end as usize))
                .collect()
        };
        assert_eq!(lit(&p.luma), [(2, 3, 4), (7, 15, 16)]);
        assert_eq!(lit(&p.chroma), [(1, 1, 2), (3, 7, 8)]);
        assert_eq!(p.luma.inv.len(), 2);
        let mut f = Owned::new(PlaneLayout::Yuv420p, 32, 16, [16, 128, 128]);
        p.blend_into(&mut f.view());
        assert_eq!(f.yuv(3, 2)[0], 235);
        assert_eq!(f.yuv(15, 7)[0], 235);
        assert_eq!(f.yuv(4, 2)[0], 16);
    }

    const LIMITED_709: Colorimetry = Colorimetry {
        matrix: YuvMatrix::Bt709,
        full_range: false,
    };

    #[test]
    fn opaque_red_gives_the_bt709_limited_red_in_every_layout() {
        // BT.709 limited red: Y 63, U 102, V 240 (8-bit).
        for layout in [
            PlaneLayout::Yuv420p,
            PlaneLayout::Yuv422p,
            PlaneLayout::Yuv444p,
            PlaneLayout::Nv12,
        ] {
            let mut f = Owned::new(layout, 33, 21, [16, 128, 128]);
            blend_overlay(
                &mut f.view(),
                &Overlay::solid(4, 4, 10, 8, [255, 0, 0, 255]),
                LIMITED_709,
            );
            assert_eq!(f.yuv(8, 8), [63, 102, 240], "{layout:?}");
            assert_eq!(f.yuv(20, 8), [16, 128, 128], "{layout:?} outside the box");
            assert_eq!(f.yuv(8, 2), [16, 128, 128], "{layout:?} above the box");
        }
    }

    #[test]
    fn ten_bit_and_full_range_scale_the_same_colour() {
        let mut f = Owned::new(PlaneLayout::Yuv420p10, 16, 16, [64, 512, 512]);
        blend_overlay(
            &mut f.view(),
            &Overlay::solid(0, 0, 8, 8, [255, 0, 0, 255]),
            LIMITED_709,
        );
        let [y, u, v] = f.yuv(2, 2);
        assert!(
            (i32::from(y) - 250).abs() <= 1 && (i32::from(u) - 409).abs() <= 1 && v == 960,
            "{y} {u} {v}"
        );
        let mut f = Owned::new(PlaneLayout::Yuv420p, 16, 16, [0, 128, 128]);
        let full_601 = Colorimetry {
            matrix: YuvMatrix::Bt601,
            full_range: true,
        };
        blend_overlay(
            &mut f.view(),
            &Overlay::solid(0, 0, 8, 8, [255, 255, 255, 255]),
            full_601,
        );
        assert_eq!(f.yuv(3, 3), [255, 128, 128]);
    }

    #[test]
    fn half_alpha_mixes_and_partial_chroma_uses_the_averaged_alpha() {
        let mut f = Owned::new(PlaneLayout::Yuv420p, 16, 16, [16, 128, 128]);
        // Premultiplied half-transparent white over black: luma halfway between 16 and 235.
        blend_overlay(
            &mut f.view(),
            &Overlay::solid(0, 0, 4, 4, [128, 128, 128, 128]),
            LIMITED_709,
        );
        let y = f.yuv(1, 1)[0];
        assert!((i32::from(y) - 126).abs() <= 1, "{y}");
        // A box starting on an odd column covers half of the chroma sample at column 2.
        let mut f = Owned::new(PlaneLayout::Yuv420p, 16, 16, [16, 128, 128]);
        blend_overlay(
            &mut f.view(),
            &Overlay::solid(5, 4, 4, 4, [255, 0, 0, 255]),
            LIMITED_709,
        );
        let v_half = f.sample(2, 2, 2);
        let v_full = f.sample(2, 3, 2);
        assert_eq!(v_full, 240);
        assert!((i32::from(v_half) - 184).abs() <= 1, "{v_half}");
        assert_eq!(f.sample(0, 4, 4), 16);
        assert_eq!(f.sample(0, 5, 4), 63);
    }

    #[test]
    fn overlays_past_the_edges_are_clipped_and_odd_sizes_work() {
        let mut f = Owned::new(PlaneLayout::Yuv420p, 21, 11, [16, 128, 128]);
        blend_overlay(
            &mut f.view(),
            &Overlay::solid(-5, 6, 40, 40, [255, 0, 0, 255]),
            LIMITED_709,
        );
        assert_eq!(f.yuv(20, 10), [63, 102, 240]);
        assert_eq!(f.yuv(0, 5), [16, 128, 128]);
        let mut f = Owned::new(PlaneLayout::Yuv420p, 21, 11, [16, 128, 128]);
        blend_overlay(
            &mut f.view(),
            &Overlay::solid(30, 30, 4, 4, [255, 0, 0, 255]),
            LIMITED_709,
        );
        assert_eq!(f.yuv(20, 10), [16, 128, 128]);
    }
}
