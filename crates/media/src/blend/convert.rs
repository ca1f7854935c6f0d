//! Premultiplied 8-bit RGBA to premultiplied Y'CbCr code values, in integer arithmetic, and
//! alpha to the blender's inverse alpha.

use super::frame::Colorimetry;

const FIXED_BITS: u32 = 16;

/// The conversion from premultiplied 8-bit R, G, B, A to premultiplied Y, U, V code values,
/// as integer dot products. The conversion is affine, and the offsets are scaled by alpha
/// like the colour itself, so it is linear in (R, G, B, A): sums of pixels convert like pixels,
/// which lets chroma convert the sum of the pixels it covers once instead of each pixel.
pub(super) struct Fixed {
    pub(super) y: [i32; 4],
    pub(super) u: [i32; 4],
    pub(super) v: [i32; 4],
    max: i32,
}

impl Fixed {
    pub(super) fn new(colorimetry: Colorimetry, depth: u32) -> Self {
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
    pub(super) fn apply(&self, k: &[i32; 4], rgba: [i32; 4], count_log2: u32) -> u16 {
        let dot = k[0] * rgba[0] + k[1] * rgba[1] + k[2] * rgba[2] + k[3] * rgba[3];
        let shift = FIXED_BITS + count_log2;
        (((dot + (1 << (shift - 1))) >> shift).clamp(0, self.max)) as u16
    }
}

/// Inverse alpha on the blender's 0-256 scale for an alpha sum over `count` pixels:
/// `256 - round(sum * 256 / (255 * count))`.
#[inline]
pub(super) fn inverse_alpha(alpha_sum: u32, count: u32) -> u16 {
    (256 - (alpha_sum * 512 + 255 * count) / (510 * count)) as u16
}

/// [`inverse_alpha`] of one pixel: round(a * 256 / 255) is a + 1 exactly when a >= 128.
#[inline(always)]
pub(super) fn inverse_alpha_u8(alpha: u8) -> u16 {
    256 - u16::from(alpha) - u16::from(alpha >> 7)
}

#[inline(always)]
pub(super) fn rgba_i32(p: &[u8; 4]) -> [i32; 4] {
    [
        i32::from(p[0]),
        i32::from(p[1]),
        i32::from(p[2]),
        i32::from(p[3]),
    ]
}

/// Luma and chroma conversion constants for one colorimetry and bit depth.
pub(super) struct Coefficients {
    pub(super) kr: f32,
    pub(super) kb: f32,
    /// Scale and offset of luma and chroma in code values.
    pub(super) y_scale: f32,
    pub(super) y_offset: f32,
    pub(super) c_scale: f32,
    pub(super) c_offset: f32,
}

impl Coefficients {
    pub(super) fn new(colorimetry: Colorimetry, depth: u32) -> Self {
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
