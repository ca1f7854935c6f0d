//! The blender against the conversion's float definition, and its clipping, spans and
//! layouts.
#![allow(clippy::unwrap_used)]

use super::apply::{blend_overlay, visible_rows};
use super::convert::Coefficients;
use super::frame::{Colorimetry, FrameMut, PlaneLayout, YuvMatrix};
use super::prepare::{Block, PreparedOverlay};
use crate::overlay::Overlay;

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
