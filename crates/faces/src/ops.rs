//! The network's operations on NHWC tensors (batch 1, so height x width x channels, channels
//! innermost), with TFLite's semantics: SAME padding puts the odd pixel after, bilinear resizes
//! with or without half-pixel centres.

use rayon::prelude::*;

/// Multiply-adds above which a convolution's rows are spread over threads; below it, handing
/// the rows out costs more than it saves.
const PARALLEL_MIN_MACS: usize = 1 << 18;

/// An activation fused into an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activation {
    None,
    Relu,
    Relu6,
}

impl Activation {
    fn apply(self, values: &mut [f32]) {
        match self {
            Self::None => {}
            Self::Relu => values.iter_mut().for_each(|v| *v = v.max(0.0)),
            Self::Relu6 => values.iter_mut().for_each(|v| *v = v.clamp(0.0, 6.0)),
        }
    }
}

/// Output size and the padding before the first row or column, for one dimension.
fn extent(
    input: usize,
    kernel: usize,
    stride: usize,
    dilation: usize,
    same: bool,
) -> (usize, usize) {
    let span = (kernel - 1) * dilation + 1;
    if same {
        let out = input.div_ceil(stride);
        let total = ((out - 1) * stride + span).saturating_sub(input);
        (out, total / 2)
    } else {
        ((input.saturating_sub(span)) / stride + 1, 0)
    }
}

/// A convolution's constants and geometry.
#[derive(Debug)]
pub(crate) struct Conv {
    /// A full convolution's: `[kh][kw][in][out]` (see [`Conv::for_pointwise_rows`]); a
    /// depthwise one's: `[kh][kw][channels]`, as TFLite stores them.
    pub(crate) weights: Vec<f32>,
    pub(crate) bias: Vec<f32>,
    pub(crate) kernel: (usize, usize),
    pub(crate) stride: (usize, usize),
    pub(crate) dilation: (usize, usize),
    pub(crate) same: bool,
    pub(crate) activation: Activation,
}

impl Conv {
    pub(crate) fn output_size(&self, h: usize, w: usize) -> (usize, usize) {
        let (oh, _) = extent(h, self.kernel.0, self.stride.0, self.dilation.0, self.same);
        let (ow, _) = extent(w, self.kernel.1, self.stride.1, self.dilation.1, self.same);
        (oh, ow)
    }

    /// TFLite's `[out][kh][kw][in]` weights reordered `[kh][kw][in][out]`: the inner loop then
    /// adds one input value times a contiguous row of weights into a contiguous row of outputs,
    /// which the compiler vectorises.
    pub(crate) fn for_pointwise_rows(
        mut self,
        out: usize,
        kh: usize,
        kw: usize,
        inp: usize,
    ) -> Self {
        let mut reordered = vec![0.0; self.weights.len()];
        for o in 0..out {
            for y in 0..kh {
                for x in 0..kw {
                    for i in 0..inp {
                        reordered[((y * kw + x) * inp + i) * out + o] =
                            self.weights[((o * kh + y) * kw + x) * inp + i];
                    }
                }
            }
        }
        self.weights = reordered;
        self
    }
}

/// A pooling window.
#[derive(Debug)]
pub(crate) struct Window {
    pub(crate) filter: (usize, usize),
    pub(crate) stride: (usize, usize),
    pub(crate) same: bool,
}

impl Window {
    pub(crate) fn output_size(&self, h: usize, w: usize) -> (usize, usize) {
        let (oh, _) = extent(h, self.filter.0, self.stride.0, 1, self.same);
        let (ow, _) = extent(w, self.filter.1, self.stride.1, 1, self.same);
        (oh, ow)
    }
}

type Hwc = (usize, usize, usize);

/// Where each tap of a kernel reads, over an input of a given size.
#[derive(Debug, Clone, Copy)]
struct Taps {
    kernel: (usize, usize),
    stride: (usize, usize),
    dilation: (usize, usize),
    pad: (usize, usize),
    size: (usize, usize),
}

impl Taps {
    fn new(
        (h, w): (usize, usize),
        kernel: (usize, usize),
        stride: (usize, usize),
        dilation: (usize, usize),
        same: bool,
    ) -> Self {
        let (_, top) = extent(h, kernel.0, stride.0, dilation.0, same);
        let (_, left) = extent(w, kernel.1, stride.1, dilation.1, same);
        Self {
            kernel,
            stride,
            dilation,
            pad: (top, left),
            size: (h, w),
        }
    }

    /// Calls `f(tap, pixel)` for each tap of the output pixel (`oy`, `ox`) that reads inside
    /// the input (the padding reads nothing): the tap's index in the kernel, row by row, and
    /// the input pixel's.
    fn each(&self, oy: usize, ox: usize, mut f: impl FnMut(usize, usize)) {
        let at = |o: usize, k: usize, axis: usize| {
            let (stride, dilation, pad, size) = match axis {
                0 => (self.stride.0, self.dilation.0, self.pad.0, self.size.0),
                _ => (self.stride.1, self.dilation.1, self.pad.1, self.size.1),
            };
            (o * stride + k * dilation)
                .checked_sub(pad)
                .filter(|&i| i < size)
        };
        for ky in 0..self.kernel.0 {
            let Some(iy) = at(oy, ky, 0) else {
                continue;
            };
            for kx in 0..self.kernel.1 {
                if let Some(ix) = at(ox, kx, 1) {
                    f(ky * self.kernel.1 + kx, iy * self.size.1 + ix);
                }
            }
        }
    }
}

/// Runs `row(y, out_row)` for every output row, on several threads when the work is large.
fn rows(out: &mut [f32], row_len: usize, macs: usize, row: impl Fn(usize, &mut [f32]) + Sync) {
    if row_len == 0 {
        return;
    }
    if macs >= PARALLEL_MIN_MACS {
        out.par_chunks_mut(row_len)
            .enumerate()
            .for_each(|(y, r)| row(y, r));
    } else {
        out.chunks_mut(row_len)
            .enumerate()
            .for_each(|(y, r)| row(y, r));
    }
}

pub(crate) fn conv2d(x: &[f32], (h, w, c): Hwc, (oh, ow, oc): Hwc, conv: &Conv) -> Vec<f32> {
    let taps = Taps::new((h, w), conv.kernel, conv.stride, conv.dilation, conv.same);
    let mut out = vec![0.0; oh * ow * oc];
    let macs = oh * ow * oc * conv.kernel.0 * conv.kernel.1 * c;
    rows(&mut out, ow * oc, macs, |oy, out_row| {
        for (ox, acc) in out_row.chunks_exact_mut(oc).enumerate() {
            acc.copy_from_slice(&conv.bias);
            taps.each(oy, ox, |tap, pixel| {
                let pixel = &x[pixel * c..][..c];
                let weights = &conv.weights[tap * c * oc..][..c * oc];
                for (&v, row) in pixel.iter().zip(weights.chunks_exact(oc)) {
                    // After a ReLU, about half the inputs are 0.
                    if v != 0.0 {
                        for (a, &k) in acc.iter_mut().zip(row) {
                            *a += v * k;
                        }
                    }
                }
            });
            conv.activation.apply(acc);
        }
    });
    out
}

pub(crate) fn depthwise(x: &[f32], (h, w, c): Hwc, (oh, ow, _): Hwc, conv: &Conv) -> Vec<f32> {
    let taps = Taps::new((h, w), conv.kernel, conv.stride, conv.dilation, conv.same);
    let mut out = vec![0.0; oh * ow * c];
    let macs = oh * ow * c * conv.kernel.0 * conv.kernel.1;
    rows(&mut out, ow * c, macs, |oy, out_row| {
        for (ox, acc) in out_row.chunks_exact_mut(c).enumerate() {
            acc.copy_from_slice(&conv.bias);
            taps.each(oy, ox, |tap, pixel| {
                let pixel = &x[pixel * c..][..c];
                let weights = &conv.weights[tap * c..][..c];
                for ((a, &v), &k) in acc.iter_mut().zip(pixel).zip(weights) {
                    *a += v * k;
                }
            });
            conv.activation.apply(acc);
        }
    });
    out
}

pub(crate) fn add(a: &[f32], b: &[f32], activation: Activation) -> Vec<f32> {
    let mut out: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    activation.apply(&mut out);
    out
}

pub(crate) fn activate(x: &[f32], activation: Activation) -> Vec<f32> {
    let mut out = x.to_vec();
    activation.apply(&mut out);
    out
}

pub(crate) fn prelu(x: &[f32], alpha: &[f32]) -> Vec<f32> {
    let mut out = x.to_vec();
    for pixel in out.chunks_exact_mut(alpha.len().max(1)) {
        for (v, &a) in pixel.iter_mut().zip(alpha) {
            if *v < 0.0 {
                *v *= a;
            }
        }
    }
    out
}

pub(crate) fn max_pool(
    x: &[f32],
    (h, w, c): Hwc,
    (oh, ow, _): Hwc,
    window: &Window,
    activation: Activation,
) -> Vec<f32> {
    let taps = Taps::new((h, w), window.filter, window.stride, (1, 1), window.same);
    let mut out = vec![f32::NEG_INFINITY; oh * ow * c];
    for (i, acc) in out.chunks_exact_mut(c).enumerate() {
        taps.each(i / ow, i % ow, |_, pixel| {
            for (a, &v) in acc.iter_mut().zip(&x[pixel * c..][..c]) {
                *a = a.max(v);
            }
        });
        activation.apply(acc);
    }
    out
}

/// Zero padding of an NHWC tensor (`pads[0]`, the batch's, is none).
pub(crate) fn pad(x: &[f32], shape: &[usize], pads: &[(usize, usize); 4]) -> Vec<f32> {
    let (h, w, c) = (shape[1], shape[2], shape[3]);
    let (oh, ow, oc) = (
        h + pads[1].0 + pads[1].1,
        w + pads[2].0 + pads[2].1,
        c + pads[3].0 + pads[3].1,
    );
    let mut out = vec![0.0; oh * ow * oc];
    for y in 0..h {
        for x_ in 0..w {
            let at = ((y + pads[1].0) * ow + x_ + pads[2].0) * oc + pads[3].0;
            out[at..at + c].copy_from_slice(&x[(y * w + x_) * c..][..c]);
        }
    }
    out
}

/// Concatenation along `axis` of tensors that agree on every other dimension.
pub(crate) fn concat(
    parts: &[(&[f32], &[usize])],
    axis: usize,
    activation: Activation,
) -> Vec<f32> {
    let outer: usize = parts
        .first()
        .map_or(0, |(_, shape)| shape[..axis].iter().product());
    let mut out = Vec::with_capacity(parts.iter().map(|(v, _)| v.len()).sum());
    for o in 0..outer {
        for (values, shape) in parts {
            let inner: usize = shape[axis..].iter().product();
            out.extend_from_slice(&values[o * inner..][..inner]);
        }
    }
    activation.apply(&mut out);
    out
}

/// Source rows (or columns) and the weight of the second, for a bilinear resize.
fn bilinear_taps(
    out: usize,
    input: usize,
    align_corners: bool,
    half_pixel: bool,
) -> Vec<(usize, usize, f32)> {
    #[allow(
        clippy::cast_precision_loss,
        reason = "sizes of a small network's tensors"
    )]
    let scale = if align_corners && out > 1 {
        (input - 1) as f32 / (out - 1) as f32
    } else {
        input as f32 / out as f32
    };
    (0..out)
        .map(|o| {
            #[allow(clippy::cast_precision_loss, reason = "a small index")]
            let o = o as f32;
            let src = if half_pixel {
                (o + 0.5) * scale - 0.5
            } else {
                o * scale
            };
            let low = src.floor();
            let frac = src - low;
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to the input's size first"
            )]
            let clamp = |v: f32| v.clamp(0.0, (input - 1) as f32) as usize;
            (clamp(low), clamp(low + 1.0), frac)
        })
        .collect()
}

pub(crate) fn resize_bilinear(
    x: &[f32],
    (h, w, c): Hwc,
    (oh, ow, _): Hwc,
    align_corners: bool,
    half_pixel: bool,
) -> Vec<f32> {
    let ys = bilinear_taps(oh, h, align_corners, half_pixel);
    let xs = bilinear_taps(ow, w, align_corners, half_pixel);
    let mut out = vec![0.0; oh * ow * c];
    for (oy, &(y0, y1, fy)) in ys.iter().enumerate() {
        for (ox, &(x0, x1, fx)) in xs.iter().enumerate() {
            let at = |y: usize, x_: usize| &x[(y * w + x_) * c..][..c];
            let corners = (at(y0, x0), at(y0, x1), at(y1, x0), at(y1, x1));
            let dst = &mut out[(oy * ow + ox) * c..][..c];
            let (top_left, top_right, bottom_left, bottom_right) = corners;
            for ((((v, &tl), &tr), &bl), &br) in dst
                .iter_mut()
                .zip(top_left)
                .zip(top_right)
                .zip(bottom_left)
                .zip(bottom_right)
            {
                let top = tl * (1.0 - fx) + tr * fx;
                let bottom = bl * (1.0 - fx) + br * fx;
                *v = top * (1.0 - fy) + bottom * fy;
            }
        }
    }
    out
}

pub(crate) fn depth_to_space(x: &[f32], (h, w, c): Hwc, block: usize) -> Vec<f32> {
    let oc = c / (block * block);
    let ow = w * block;
    let mut out = vec![0.0; x.len()];
    for y in 0..h {
        for x_ in 0..w {
            for i in 0..block {
                for j in 0..block {
                    let src = &x[(y * w + x_) * c + (i * block + j) * oc..][..oc];
                    let at = ((y * block + i) * ow + x_ * block + j) * oc;
                    out[at..at + oc].copy_from_slice(src);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_padding_puts_the_odd_pixel_after() {
        // 5 wide, kernel 3, stride 2: 3 outputs, 2 padding in all, 1 before.
        assert_eq!(extent(5, 3, 2, 1, true), (3, 1));
        // 4 wide, kernel 3, stride 2: 2 outputs, 1 padding in all, 0 before.
        assert_eq!(extent(4, 3, 2, 1, true), (2, 0));
        assert_eq!(extent(5, 3, 1, 1, false), (3, 0));
    }

    #[test]
    fn depth_to_space_moves_channels_into_blocks() {
        // One pixel of 4 channels becomes a 2x2 block of one channel, row by row.
        let out = depth_to_space(&[1.0, 2.0, 3.0, 4.0], (1, 1, 4), 2);
        assert_eq!(out, [1.0, 2.0, 3.0, 4.0]);
        // Two pixels of 4: each its own 2x2 block, side by side in a 2x4 picture.
        let out = depth_to_space(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], (1, 2, 4), 2);
        assert_eq!(out, [1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]);
    }

    #[test]
    fn a_pointwise_convolution_is_a_matrix_product() {
        let conv = Conv {
            weights: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            bias: vec![0.5, -0.5],
            kernel: (1, 1),
            stride: (1, 1),
            dilation: (1, 1),
            same: true,
            activation: Activation::None,
        }
        .for_pointwise_rows(2, 1, 1, 3);
        let out = conv2d(&[1.0, 0.0, -1.0], (1, 1, 3), (1, 1, 2), &conv);
        assert_eq!(out, [0.5 + 1.0 - 3.0, -0.5 + 4.0 - 6.0]);
    }
}
