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
/// for the chroma grid (alpha averaged over the luma pixels each chroma sample covers).
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
    w: usize,
    /// Premultiplied values per sample: `[y, 0]` for luma, `[u, v]` for chroma.
    values: Vec<[u16; 2]>,
    /// Inverse alpha per sample, 0 (opaque) to 256 (transparent).
    inv: Vec<u16>,
}

impl PreparedOverlay {
    /// Converts `overlay` (already in the frame's coded orientation) for a `width` x `height`
    /// frame of `layout` and `colorimetry`. Returns `None` when nothing of it is on the frame.
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
        let depth = layout.bit_depth();
        let coeffs = Coefficients::new(colorimetry, depth);
        let ow = overlay.width() as usize;
        let rgba = overlay.rgba();
        // Premultiplied Y, U, V and alpha (0-1) of the overlay pixel at frame position (x, y),
        // zero outside the overlay.
        let pixel = |x: i64, y: i64| -> [f32; 4] {
            if x < ox
                || y < oy
                || x >= ox + i64::from(overlay.width())
                || y >= oy + i64::from(overlay.height())
            {
                return [0.0; 4];
            }
            let i = ((y - oy) as usize * ow + (x - ox) as usize) * 4;
            coeffs.premultiplied_yuva(rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
        };
        let inv = |alpha: f32| (256.0 - (alpha * 256.0)).round().clamp(0.0, 256.0) as u16;
        let max = ((1_u32 << depth) - 1) as f32;
        let quant = |v: f32| v.round().clamp(0.0, max) as u16;

        let (lw, lh) = ((x1 - x0) as usize, (y1 - y0) as usize);
        let mut luma = Block {
            x0: x0 as usize,
            y0: y0 as usize,
            w: lw,
            values: Vec::with_capacity(lw * lh),
            inv: Vec::with_capacity(lw * lh),
        };
        for y in y0..y1 {
            for x in x0..x1 {
                let [yy, _, _, a] = pixel(x, y);
                luma.values.push([quant(yy), 0]);
                luma.inv.push(inv(a));
            }
        }

        let (sx, sy) = layout.chroma_shift();
        let (cx0, cy0) = (x0 >> sx, y0 >> sy);
        let (cx1, cy1) = ((x1 + (1 << sx) - 1) >> sx, (y1 + (1 << sy) - 1) >> sy);
        let (cw, ch) = ((cx1 - cx0) as usize, (cy1 - cy0) as usize);
        let mut chroma = Block {
            x0: cx0 as usize,
            y0: cy0 as usize,
            w: cw,
            values: Vec::with_capacity(cw * ch),
            inv: Vec::with_capacity(cw * ch),
        };
        for cy in cy0..cy1 {
            for cx in cx0..cx1 {
                let mut sum = [0.0_f32; 4];
                let mut count = 0.0_f32;
                for y in (cy << sy)..((cy + 1) << sy) {
                    for x in (cx << sx)..((cx + 1) << sx) {
                        // Positions past an odd frame edge do not exist and do not count.
                        if x >= fw || y >= fh {
                            continue;
                        }
                        let p = pixel(x, y);
                        for (s, v) in sum.iter_mut().zip(p) {
                            *s += v;
                        }
                        count += 1.0;
                    }
                }
                let count = count.max(1.0);
                chroma
                    .values
                    .push([quant(sum[1] / count), quant(sum[2] / count)]);
                chroma.inv.push(inv(sum[3] / count));
            }
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
}

/// dst = premultiplied + dst * inverse_alpha / 256, over one block of one 8-bit plane.
/// `channel` picks the value within each prepared sample (0: Y or U, 1: V); samples of one
/// channel sit `step` bytes apart in a row, starting `offset` bytes in (NV12's interleaved
/// chroma: step 2, offset 0 for U and 1 for V).
fn blend_block_u8(
    plane: &mut [u8],
    stride: usize,
    block: &Block,
    channel: usize,
    step: usize,
    offset: usize,
) {
    if block.w == 0 {
        return;
    }
    for (row, src) in block.values.chunks_exact(block.w).enumerate() {
        let inv = &block.inv[row * block.w..(row + 1) * block.w];
        let start = (block.y0 + row) * stride + block.x0 * step + offset;
        let Some(dst) = plane.get_mut(start..start + (block.w - 1) * step + 1) else {
            return;
        };
        for ((d, v), &a) in dst.iter_mut().step_by(step).zip(src).zip(inv) {
            let blended = u32::from(v[channel]) + ((u32::from(*d) * u32::from(a) + 128) >> 8);
            *d = blended.min(255) as u8;
        }
    }
}

/// The same for planes of 16-bit little-endian words holding `max`-limited samples.
fn blend_block_u16(plane: &mut [u8], stride: usize, block: &Block, channel: usize, max: u32) {
    if block.w == 0 {
        return;
    }
    for (row, src) in block.values.chunks_exact(block.w).enumerate() {
        let inv = &block.inv[row * block.w..(row + 1) * block.w];
        let start = (block.y0 + row) * stride + block.x0 * 2;
        let Some(dst) = plane.get_mut(start..start + block.w * 2) else {
            return;
        };
        for ((d, v), &a) in dst.chunks_exact_mut(2).zip(src).zip(inv) {
            let old = u32::from(u16::from_le_bytes([d[0], d[1]]));
            let blended = (u32::from(v[channel]) + ((old * u32::from(a) + 128) >> 8)).min(max);
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

    /// Premultiplied (Y, U, V) in code values and alpha in 0-1, from premultiplied RGBA8.
    /// Premultiplication carries through because the conversion is affine: each offset is
    /// scaled by alpha like the colour itself.
    fn premultiplied_yuva(&self, r: u8, g: u8, b: u8, a: u8) -> [f32; 4] {
        let (r, g, b, a) = (
            f32::from(r) / 255.0,
            f32::from(g) / 255.0,
            f32::from(b) / 255.0,
            f32::from(a) / 255.0,
        );
        let kg = 1.0 - self.kr - self.kb;
        let y = self.kr * r + kg * g + self.kb * b;
        let pb = (b - y) / (2.0 * (1.0 - self.kb));
        let pr = (r - y) / (2.0 * (1.0 - self.kr));
        [
            self.y_offset * a + self.y_scale * y,
            self.c_offset * a + self.c_scale * pb,
            self.c_offset * a + self.c_scale * pr,
            a,
        ]
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
