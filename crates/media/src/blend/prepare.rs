//! Converting an overlay for one frame format: clipped to the frame, trimmed to each row's
//! visible span, turned into premultiplied YUV samples and inverse alphas for luma and for
//! the chroma grid.

use super::convert::{Fixed, inverse_alpha, inverse_alpha_u8, rgba_i32};
use super::frame::{Colorimetry, PlaneLayout};
use crate::overlay::Overlay;

/// An overlay converted to the frame's YUV space and clipped to the frame: premultiplied
/// sample values in the frame's bit depth and an inverse alpha on a 0-256 scale, for luma and
/// for the chroma grid (the average over the luma pixels each chroma sample covers). Only the
/// span of each row between its first and last visible pixel is kept, so neither the
/// conversion nor the blend spends time or memory on the empty parts of a caption's box.
#[derive(Debug)]
pub struct PreparedOverlay {
    pub(super) layout: PlaneLayout,
    pub(super) luma: Block,
    pub(super) chroma: Block,
}

/// One plane grid's samples of a [`PreparedOverlay`].
#[derive(Debug, Default)]
pub(super) struct Block {
    pub(super) x0: usize,
    pub(super) y0: usize,
    /// Per row from `y0`: the columns `start..end` (from `x0`) kept, and where their samples
    /// begin in `values` and `inv`. Everything outside is fully transparent.
    pub(super) rows: Vec<Span>,
    /// Premultiplied values: Y (luma), or U and V (chroma, `values[1]` for V).
    pub(super) values: [Vec<u16>; 2],
    /// Inverse alpha per sample, 0 (opaque) to 256 (transparent).
    pub(super) inv: Vec<u16>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) offset: u32,
}

impl Span {
    pub(super) fn range(self) -> std::ops::Range<usize> {
        self.offset as usize..(self.offset + self.end - self.start) as usize
    }
}

/// The part of an overlay that lies on the frame: frame columns `x0..x1`, rows `y0..y1`.
struct Visible<'a> {
    rgba: &'a [u8],
    overlay_w: usize,
    /// The overlay's top-left corner on the frame (may be outside it).
    ox: i64,
    oy: i64,
    x0: usize,
    y0: usize,
    x1: usize,
    y1: usize,
}

impl<'a> Visible<'a> {
    /// Clips `overlay` to a `width` x `height` frame; `None` when nothing of it is on it.
    fn of(overlay: &'a Overlay, width: u32, height: u32) -> Option<Self> {
        let (fw, fh) = (i64::from(width), i64::from(height));
        let (ox, oy) = (i64::from(overlay.x()), i64::from(overlay.y()));
        let x0 = ox.max(0);
        let y0 = oy.max(0);
        let x1 = (ox + i64::from(overlay.width())).min(fw);
        let y1 = (oy + i64::from(overlay.height())).min(fh);
        if x0 >= x1 || y0 >= y1 {
            return None;
        }
        // Every coordinate is within the frame, so usize from here on.
        Some(Self {
            rgba: overlay.rgba(),
            overlay_w: overlay.width() as usize,
            ox,
            oy,
            x0: x0 as usize,
            y0: y0 as usize,
            x1: x1 as usize,
            y1: y1 as usize,
        })
    }

    /// The visible part of frame row `y` (`x0..x1` only), as RGBA8.
    #[inline(always)]
    fn row(&self, y: usize) -> &'a [u8] {
        let start = ((y as i64 - self.oy) as usize * self.overlay_w
            + (self.x0 as i64 - self.ox) as usize)
            * 4;
        self.rgba
            .get(start..start + (self.x1 - self.x0) * 4)
            .unwrap_or_default()
    }
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
        let visible = Visible::of(overlay, width, height)?;
        let fixed = Fixed::new(colorimetry, layout.bit_depth());
        let luma = convert_luma(&visible, &fixed);
        let chroma = convert_chroma(&visible, &luma, &fixed, layout, (width, height));
        Some(Self {
            layout,
            luma,
            chroma,
        })
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

/// Luma: the visible span of each row, converted pixel by pixel.
fn convert_luma(visible: &Visible<'_>, fixed: &Fixed) -> Block {
    let (x0, y0, y1) = (visible.x0, visible.y0, visible.y1);
    let mut luma = Block {
        x0,
        y0,
        ..Block::default()
    };
    let mut spans = Vec::with_capacity(y1 - y0);
    let mut total = 0_u32;
    for y in y0..y1 {
        let span = match visible_span(visible.row(y)) {
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
        let (pixels, _) =
            visible.row(y)[span.start as usize * 4..span.end as usize * 4].as_chunks();
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
    luma
}

/// Chroma: each sample's covered pixels summed, then converted once. Only the samples over
/// `luma`'s visible spans are kept.
fn convert_chroma(
    visible: &Visible<'_>,
    luma: &Block,
    fixed: &Fixed,
    layout: PlaneLayout,
    (width, height): (u32, u32),
) -> Block {
    let (x0, y0, x1, y1) = (visible.x0, visible.y0, visible.x1, visible.y1);
    let (fw, fh) = (width as usize, height as usize);
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
        let sources = [rows.start, rows.end - 1].map(|y| visible.row(y));
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
    chroma
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
