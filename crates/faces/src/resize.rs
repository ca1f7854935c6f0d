//! A picture fitted into the detector's square input: scaled with a triangle filter whose
//! support widens with the reduction (so a large frame is averaged, not sampled: no aliasing),
//! centred, the rest black, and the values taken to -1..1 as the network was trained.

/// Where the picture landed in the square: its scale and offset, to map boxes back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Placement {
    /// Input pixels per picture pixel.
    pub(crate) scale: f32,
    pub(crate) left: f32,
    pub(crate) top: f32,
}

impl Placement {
    /// A point of the square input, in picture pixels.
    pub(crate) fn to_picture(self, x: f32, y: f32) -> (f32, f32) {
        ((x - self.left) / self.scale, (y - self.top) / self.scale)
    }
}

/// For each output index, the first source index and the weights of the sources from there.
fn taps(out: usize, input: usize) -> Vec<(usize, Vec<f32>)> {
    #[allow(clippy::cast_precision_loss, reason = "picture sizes")]
    let scale = input as f32 / out as f32;
    let support = scale.max(1.0);
    (0..out)
        .map(|o| {
            #[allow(clippy::cast_precision_loss, reason = "picture sizes")]
            let centre = (o as f32 + 0.5) * scale;
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to the picture first"
            )]
            let (first, last) = (
                (centre - support).floor().max(0.0) as usize,
                ((centre + support).ceil() as usize).min(input),
            );
            let mut weights: Vec<f32> = (first..last)
                .map(|i| {
                    #[allow(clippy::cast_precision_loss, reason = "picture sizes")]
                    let d = (i as f32 + 0.5 - centre).abs() / support;
                    (1.0 - d).max(0.0)
                })
                .collect();
            let sum: f32 = weights.iter().sum();
            if sum > 0.0 {
                weights.iter_mut().for_each(|w| *w /= sum);
            }
            (first, weights)
        })
        .collect()
}

/// `rgb` (`width` x `height`, 3 bytes a pixel) fitted into a `side` x `side` square of values
/// in -1..1, RGB, rows top to bottom.
pub(crate) fn letterbox(
    rgb: &[u8],
    width: usize,
    height: usize,
    side: usize,
) -> (Vec<f32>, Placement) {
    #[allow(clippy::cast_precision_loss, reason = "picture sizes")]
    let scale = side as f32 / width.max(height) as f32;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "at most `side`, at least 1"
    )]
    let fit = |n: usize| ((n as f32 * scale).round() as usize).clamp(1, side);
    let (w, h) = (fit(width), fit(height));
    let (left, top) = ((side - w) / 2, (side - h) / 2);
    // Horizontal pass into a width-scaled picture, then vertical into the square.
    let columns = taps(w, width);
    let mut wide = vec![0.0_f32; height * w * 3];
    for (y, row) in wide.chunks_exact_mut(w * 3).enumerate() {
        let src = &rgb[y * width * 3..][..width * 3];
        for (x, (first, weights)) in columns.iter().enumerate() {
            let mut acc = [0.0_f32; 3];
            for (i, &k) in weights.iter().enumerate() {
                let p = &src[(first + i) * 3..][..3];
                for (a, &v) in acc.iter_mut().zip(p) {
                    *a += k * f32::from(v);
                }
            }
            row[x * 3..x * 3 + 3].copy_from_slice(&acc);
        }
    }
    let mut square = vec![-1.0_f32; side * side * 3];
    for (y, (first, weights)) in taps(h, height).iter().enumerate() {
        let dst = &mut square[((top + y) * side + left) * 3..][..w * 3];
        dst.fill(0.0);
        for (i, &k) in weights.iter().enumerate() {
            let src = &wide[(first + i) * w * 3..][..w * 3];
            for (d, &v) in dst.iter_mut().zip(src) {
                *d += k * v;
            }
        }
        dst.iter_mut().for_each(|v| *v = *v / 127.5 - 1.0);
    }
    #[allow(clippy::cast_precision_loss, reason = "picture sizes")]
    let placement = Placement {
        scale: w as f32 / width as f32,
        left: left as f32,
        top: top as f32,
    };
    (square, placement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_picture_stays_flat_and_the_bars_are_black() {
        let rgb = [255_u8, 0, 255].repeat(40 * 20);
        let (square, placement) = letterbox(&rgb, 40, 20, 8);
        assert_eq!(placement.left, 0.0);
        assert_eq!(placement.top, 2.0);
        // Rows 0-1 and 6-7 are bars; rows 2-5 the picture, red and blue at 1, green at -1.
        for y in 0..8 {
            let expected = if (2..6).contains(&y) {
                [1.0, -1.0, 1.0]
            } else {
                [-1.0, -1.0, -1.0]
            };
            for x in 0..8 {
                let p = &square[(y * 8 + x) * 3..][..3];
                for (v, e) in p.iter().zip(expected) {
                    assert!((v - e).abs() < 1e-5, "({x}, {y}): {p:?}");
                }
            }
        }
        assert_eq!(placement.to_picture(4.0, 4.0), (20.0, 10.0));
    }
}
