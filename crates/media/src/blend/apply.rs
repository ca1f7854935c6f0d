//! Blending a prepared overlay into a frame's planes: `dst = value + dst * inverse_alpha`,
//! row span by row span, in 8-bit or 16-bit samples.

use super::frame::{Colorimetry, FrameMut, PlaneLayout};
use super::prepare::{Block, PreparedOverlay, Span};
use crate::overlay::Overlay;

impl PreparedOverlay {
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

/// The rows of `block` with anything to blend: (row from `y0`, first column from `x0`, span).
pub(super) fn visible_rows(block: &Block) -> impl Iterator<Item = (usize, usize, Span)> + '_ {
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

/// Blends `overlay` (in the frame's coded orientation) into `frame`; a one-off convenience
/// over [`PreparedOverlay`], which the pipeline caches across frames instead.
///
/// ```
/// use caption_media::{Colorimetry, FrameMut, Overlay, PlaneLayout, YuvMatrix, blend_overlay};
///
/// // A black 4x2 yuv420p frame (limited range: luma 16, chroma 128).
/// let (mut y, mut u, mut v) = (vec![16_u8; 8], vec![128_u8; 2], vec![128_u8; 2]);
/// let mut frame = FrameMut {
///     layout: PlaneLayout::Yuv420p,
///     width: 4,
///     height: 2,
///     planes: [&mut y, &mut u, &mut v],
///     strides: [4, 2, 2],
/// };
/// let colorimetry = Colorimetry { matrix: YuvMatrix::Bt709, full_range: false };
/// // Opaque white over the left half.
/// blend_overlay(&mut frame, &Overlay::solid(0, 0, 2, 2, [255, 255, 255, 255]), colorimetry);
/// assert_eq!(y, [235, 235, 16, 16, 235, 235, 16, 16]);
/// assert_eq!((u, v), (vec![128, 128], vec![128, 128]), "white has no chroma");
/// ```
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
