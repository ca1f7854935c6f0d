//! The converted network: a list of tensors (constants with their values, the others computed)
//! and the operations between them, in the file format `scripts/convert_blazeface.py` writes
//! (see there). Every tensor is NHWC with a batch of 1, as TFLite has them.

use std::path::Path;

use crate::error::{Error, Result};
use crate::ops::{self, Activation, Conv, Window};

const MAGIC: &[u8; 8] = b"CFGRAPH1";
/// Larger than any tensor of a face detector: a corrupt file must not ask for gigabytes.
const MAX_VALUES: usize = 1 << 24;

#[derive(Debug)]
enum Op {
    Conv {
        input: usize,
        output: usize,
        conv: Conv,
    },
    Depthwise {
        input: usize,
        output: usize,
        conv: Conv,
    },
    Add {
        a: usize,
        b: usize,
        output: usize,
        activation: Activation,
    },
    Relu {
        input: usize,
        output: usize,
    },
    MaxPool {
        input: usize,
        output: usize,
        window: Window,
        activation: Activation,
    },
    Pad {
        input: usize,
        output: usize,
        pads: [(usize, usize); 4],
    },
    Reshape {
        input: usize,
        output: usize,
    },
    Concat {
        inputs: Vec<usize>,
        output: usize,
        axis: usize,
        activation: Activation,
    },
    Resize {
        input: usize,
        output: usize,
        align_corners: bool,
        half_pixel: bool,
    },
    DepthToSpace {
        input: usize,
        output: usize,
        block: usize,
    },
    Prelu {
        input: usize,
        output: usize,
        alpha: Vec<f32>,
    },
}

/// A network read from a graph file, ready to run (it is `Sync`: share it).
#[derive(Debug)]
pub(crate) struct Graph {
    shapes: Vec<Vec<usize>>,
    ops: Vec<Op>,
    input: usize,
    outputs: Vec<usize>,
    /// For each op, the tensors whose last reader it is (freed after it runs).
    frees: Vec<Vec<usize>>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl Reader<'_> {
    fn bad(&self, detail: impl Into<String>) -> Error {
        Error::Model {
            path: self.path.to_owned(),
            detail: detail.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.bad(format!("ends early, at byte {}", self.bytes.len())));
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn count(&mut self) -> Result<usize> {
        let n = self.u32()? as usize;
        if n > MAX_VALUES {
            return Err(self.bad(format!("a count of {n} is beyond any face detector")));
        }
        Ok(n)
    }

    fn u32s(&mut self) -> Result<Vec<usize>> {
        let n = self.count()?;
        (0..n).map(|_| self.u32().map(|v| v as usize)).collect()
    }

    fn i32s(&mut self) -> Result<Vec<i64>> {
        let n = self.count()?;
        (0..n)
            .map(|_| self.u32().map(|v| i64::from(v.cast_signed())))
            .collect()
    }

    fn f32s(&mut self, n: usize) -> Result<Vec<f32>> {
        let bytes = self.take(n * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

impl Graph {
    /// Reads a graph file.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Unreadable {
            path: path.to_owned(),
            source,
        })?;
        let mut r = Reader {
            bytes: &bytes,
            at: 0,
            path,
        };
        if r.take(8)? != MAGIC {
            return Err(r.bad("not a graph file (the magic number differs)"));
        }
        let tensors = r.count()?;
        let mut shapes = Vec::with_capacity(tensors);
        let mut consts: Vec<Option<Vec<f32>>> = Vec::with_capacity(tensors);
        for _ in 0..tensors {
            let shape = r.u32s()?;
            let values = r.count()?;
            let size: usize = shape.iter().product();
            if size > MAX_VALUES {
                return Err(r.bad(format!("a tensor of shape {shape:?} is too large")));
            }
            if values != 0 && values != size {
                return Err(r.bad(format!("{values} values for a tensor of shape {shape:?}")));
            }
            consts.push((values > 0).then(|| r.f32s(values)).transpose()?);
            shapes.push(shape);
        }
        let input = r.u32()? as usize;
        let outputs = r.u32s()?;
        let op_count = r.count()?;
        let builder = Builder {
            shapes: &shapes,
            consts: &consts,
            path,
        };
        let mut ops = Vec::with_capacity(op_count);
        for _ in 0..op_count {
            let kind = r.u32()?;
            let ins = r.u32s()?;
            let outs = r.u32s()?;
            let params = r.i32s()?;
            ops.push(builder.op(kind, &ins, &outs, &params)?);
        }
        if r.at != bytes.len() {
            return Err(r.bad("has bytes after its last operation"));
        }
        for &t in std::iter::once(&input).chain(&outputs) {
            builder.activation_tensor(t)?;
        }
        let frees = last_uses(&ops, &outputs, shapes.len());
        Ok(Self {
            shapes,
            ops,
            input,
            outputs,
            frees,
        })
    }

    /// The input's shape (batch, height, width, channels).
    pub(crate) fn input_shape(&self) -> &[usize] {
        &self.shapes[self.input]
    }

    /// The outputs' shapes, in the file's order.
    pub(crate) fn output_shapes(&self) -> Vec<&[usize]> {
        self.outputs
            .iter()
            .map(|&t| self.shapes[t].as_slice())
            .collect()
    }

    /// Runs the network on `input` (the input tensor's values, NHWC); returns the outputs.
    pub(crate) fn run(&self, input: Vec<f32>) -> Vec<Vec<f32>> {
        let mut values: Vec<Option<Vec<f32>>> = vec![None; self.shapes.len()];
        values[self.input] = Some(input);
        for (op, frees) in self.ops.iter().zip(&self.frees) {
            let (output, result) = self.apply(op, &values);
            values[output] = Some(result);
            for &t in frees {
                values[t] = None;
            }
        }
        self.outputs
            .iter()
            .map(|&t| values[t].take().unwrap_or_default())
            .collect()
    }

    fn apply(&self, op: &Op, values: &[Option<Vec<f32>>]) -> (usize, Vec<f32>) {
        let get = |t: usize| values[t].as_deref().unwrap_or(&[]);
        let hwc = |t: usize| {
            let s = &self.shapes[t];
            (s[1], s[2], s[3])
        };
        match op {
            Op::Conv {
                input,
                output,
                conv,
            } => (
                *output,
                ops::conv2d(get(*input), hwc(*input), hwc(*output), conv),
            ),
            Op::Depthwise {
                input,
                output,
                conv,
            } => (
                *output,
                ops::depthwise(get(*input), hwc(*input), hwc(*output), conv),
            ),
            Op::Add {
                a,
                b,
                output,
                activation,
            } => (*output, ops::add(get(*a), get(*b), *activation)),
            Op::Relu { input, output } => (*output, ops::activate(get(*input), Activation::Relu)),
            Op::MaxPool {
                input,
                output,
                window,
                activation,
            } => (
                *output,
                ops::max_pool(get(*input), hwc(*input), hwc(*output), window, *activation),
            ),
            Op::Pad {
                input,
                output,
                pads,
            } => (*output, ops::pad(get(*input), &self.shapes[*input], pads)),
            Op::Reshape { input, output } => (*output, get(*input).to_vec()),
            Op::Concat {
                inputs,
                output,
                axis,
                activation,
            } => {
                let parts: Vec<(&[f32], &[usize])> = inputs
                    .iter()
                    .map(|&t| (get(t), self.shapes[t].as_slice()))
                    .collect();
                (*output, ops::concat(&parts, *axis, *activation))
            }
            Op::Resize {
                input,
                output,
                align_corners,
                half_pixel,
            } => (
                *output,
                ops::resize_bilinear(
                    get(*input),
                    hwc(*input),
                    hwc(*output),
                    *align_corners,
                    *half_pixel,
                ),
            ),
            Op::DepthToSpace {
                input,
                output,
                block,
            } => (
                *output,
                ops::depth_to_space(get(*input), hwc(*input), *block),
            ),
            Op::Prelu {
                input,
                output,
                alpha,
            } => (*output, ops::prelu(get(*input), alpha)),
        }
    }
}

/// For each op, the computed tensors nothing reads after it (outputs excepted).
fn last_uses(ops: &[Op], outputs: &[usize], tensors: usize) -> Vec<Vec<usize>> {
    let mut last = vec![None; tensors];
    for (i, op) in ops.iter().enumerate() {
        for t in op_inputs(op) {
            last[t] = Some(i);
        }
    }
    let mut frees = vec![Vec::new(); ops.len()];
    for (t, at) in last.into_iter().enumerate() {
        if let Some(i) = at
            && !outputs.contains(&t)
        {
            frees[i].push(t);
        }
    }
    frees
}

fn op_inputs(op: &Op) -> Vec<usize> {
    match op {
        Op::Conv { input, .. }
        | Op::Depthwise { input, .. }
        | Op::Relu { input, .. }
        | Op::MaxPool { input, .. }
        | Op::Pad { input, .. }
        | Op::Reshape { input, .. }
        | Op::Resize { input, .. }
        | Op::DepthToSpace { input, .. }
        | Op::Prelu { input, .. } => vec![*input],
        Op::Add { a, b, .. } => vec![*a, *b],
        Op::Concat { inputs, .. } => inputs.clone(),
    }
}

/// Checks each op against the tensors' shapes as it is read, so that running never indexes
/// out of bounds.
struct Builder<'a> {
    shapes: &'a [Vec<usize>],
    consts: &'a [Option<Vec<f32>>],
    path: &'a Path,
}

impl Builder<'_> {
    fn bad(&self, detail: impl Into<String>) -> Error {
        Error::Model {
            path: self.path.to_owned(),
            detail: detail.into(),
        }
    }

    fn shape(&self, t: usize) -> Result<&[usize]> {
        self.shapes
            .get(t)
            .map(Vec::as_slice)
            .ok_or_else(|| self.bad(format!("tensor {t} does not exist")))
    }

    /// A computed tensor (not a constant) of rank 1 to 4 with a batch of 1.
    fn activation_tensor(&self, t: usize) -> Result<&[usize]> {
        let shape = self.shape(t)?;
        if self.consts[t].is_some() || shape.first() != Some(&1) || shape.len() > 4 {
            return Err(self.bad(format!("tensor {t} ({shape:?}) is not a batch-of-1 tensor")));
        }
        Ok(shape)
    }

    /// A computed NHWC tensor: its height, width and channels.
    fn hwc(&self, t: usize) -> Result<(usize, usize, usize)> {
        match *self.activation_tensor(t)? {
            [1, h, w, c] => Ok((h, w, c)),
            ref other => Err(self.bad(format!("tensor {t} ({other:?}) is not NHWC"))),
        }
    }

    fn constant(&self, t: usize, len: usize) -> Result<Vec<f32>> {
        match self.consts.get(t) {
            Some(Some(values)) if values.len() == len => Ok(values.clone()),
            _ => Err(self.bad(format!("tensor {t} is not a constant of {len} values"))),
        }
    }

    fn activation(&self, code: i64) -> Result<Activation> {
        match code {
            0 => Ok(Activation::None),
            1 => Ok(Activation::Relu),
            3 => Ok(Activation::Relu6),
            other => Err(self.bad(format!("fused activation {other} is not supported"))),
        }
    }

    fn op(&self, kind: u32, ins: &[usize], outs: &[usize], p: &[i64]) -> Result<Op> {
        let arity = |n_in: usize, n_params: usize| ins.len() >= n_in && p.len() == n_params;
        let &[output] = outs else {
            return Err(self.bad(format!("op {kind} has {} outputs", outs.len())));
        };
        let positive = |v: i64| usize::try_from(v).ok().filter(|&v| v > 0);
        let op = match kind {
            1 | 2 if arity(3, if kind == 1 { 6 } else { 7 }) => {
                let (h, w, c) = self.hwc(ins[0])?;
                let (oh, ow, oc) = self.hwc(output)?;
                let wshape = self.shape(ins[1])?.to_vec();
                let &[wo, kh, kw, wi] = wshape.as_slice() else {
                    return Err(self.bad(format!("weights of shape {wshape:?}")));
                };
                let (Some(sh), Some(sw), Some(dh), Some(dw)) = (
                    positive(p[0]),
                    positive(p[1]),
                    positive(p[4]),
                    positive(p[5]),
                ) else {
                    return Err(self.bad(format!("strides or dilations {p:?}")));
                };
                let depthwise = kind == 2;
                let fits = if depthwise {
                    wo == 1 && wi == c && oc == c && p[6] == 1
                } else {
                    wi == c && wo == oc
                };
                let conv = Conv {
                    weights: self.constant(ins[1], wo * kh * kw * wi)?,
                    bias: self.constant(ins[2], oc)?,
                    kernel: (kh, kw),
                    stride: (sh, sw),
                    dilation: (dh, dw),
                    same: p[2] == 1,
                    activation: self.activation(p[3])?,
                };
                let (eh, ew) = conv.output_size(h, w);
                if !fits || (eh, ew) != (oh, ow) {
                    return Err(self.bad(format!(
                        "a convolution from {h}x{w}x{c} to {oh}x{ow}x{oc} with weights {wshape:?}"
                    )));
                }
                if depthwise {
                    Op::Depthwise {
                        input: ins[0],
                        output,
                        conv,
                    }
                } else {
                    Op::Conv {
                        input: ins[0],
                        output,
                        conv: conv.for_pointwise_rows(wo, kh, kw, wi),
                    }
                }
            }
            3 if arity(2, 1) => {
                let (a, b) = (
                    self.activation_tensor(ins[0])?,
                    self.activation_tensor(ins[1])?,
                );
                if a != b || a != self.activation_tensor(output)? {
                    return Err(self.bad(format!("an add of {a:?} and {b:?}")));
                }
                Op::Add {
                    a: ins[0],
                    b: ins[1],
                    output,
                    activation: self.activation(p[0])?,
                }
            }
            4 if arity(1, 0) => {
                self.same_size(ins[0], output)?;
                Op::Relu {
                    input: ins[0],
                    output,
                }
            }
            5 if arity(1, 6) => {
                let (h, w, c) = self.hwc(ins[0])?;
                let out = self.hwc(output)?;
                let (Some(fh), Some(fw), Some(sh), Some(sw)) = (
                    positive(p[0]),
                    positive(p[1]),
                    positive(p[2]),
                    positive(p[3]),
                ) else {
                    return Err(self.bad(format!("pool window {p:?}")));
                };
                let window = Window {
                    filter: (fh, fw),
                    stride: (sh, sw),
                    same: p[4] == 1,
                };
                let (eh, ew) = window.output_size(h, w);
                if (eh, ew, c) != out {
                    return Err(self.bad("a max pool whose output size differs"));
                }
                Op::MaxPool {
                    input: ins[0],
                    output,
                    window,
                    activation: self.activation(p[5])?,
                }
            }
            6 if arity(1, 8) => {
                let (h, w, c) = self.hwc(ins[0])?;
                let mut pads = [(0, 0); 4];
                for (d, pad) in pads.iter_mut().enumerate() {
                    let (Ok(before), Ok(after)) =
                        (usize::try_from(p[2 * d]), usize::try_from(p[2 * d + 1]))
                    else {
                        return Err(self.bad(format!("paddings {p:?}")));
                    };
                    *pad = (before, after);
                }
                let expected = (
                    h + pads[1].0 + pads[1].1,
                    w + pads[2].0 + pads[2].1,
                    c + pads[3].0 + pads[3].1,
                );
                if pads[0] != (0, 0) || self.hwc(output)? != expected {
                    return Err(self.bad(format!("paddings {p:?} for {h}x{w}x{c}")));
                }
                Op::Pad {
                    input: ins[0],
                    output,
                    pads,
                }
            }
            7 if arity(1, 0) => {
                self.same_size(ins[0], output)?;
                Op::Reshape {
                    input: ins[0],
                    output,
                }
            }
            8 if arity(1, 2) => {
                let out = self.activation_tensor(output)?.to_vec();
                let axis = if p[0] < 0 {
                    p[0] + i64::try_from(out.len()).unwrap_or(0)
                } else {
                    p[0]
                };
                let axis = usize::try_from(axis)
                    .ok()
                    .filter(|&a| a < out.len())
                    .ok_or_else(|| self.bad(format!("concatenation axis {}", p[0])))?;
                let mut along = 0;
                for &t in ins {
                    let s = self.activation_tensor(t)?;
                    let same_elsewhere =
                        s.len() == out.len() && (0..s.len()).all(|d| d == axis || s[d] == out[d]);
                    if !same_elsewhere {
                        return Err(self.bad(format!("concatenating {s:?} into {out:?}")));
                    }
                    along += s[axis];
                }
                if along != out[axis] {
                    return Err(self.bad(format!("concatenation into {out:?}")));
                }
                Op::Concat {
                    inputs: ins.to_vec(),
                    output,
                    axis,
                    activation: self.activation(p[1])?,
                }
            }
            9 if arity(1, 2) => {
                let (_, _, c) = self.hwc(ins[0])?;
                let (_, _, oc) = self.hwc(output)?;
                if c != oc {
                    return Err(self.bad("a resize that changes channels"));
                }
                Op::Resize {
                    input: ins[0],
                    output,
                    align_corners: p[0] != 0,
                    half_pixel: p[1] != 0,
                }
            }
            10 if arity(1, 1) => {
                let (h, w, c) = self.hwc(ins[0])?;
                let block = positive(p[0]).ok_or_else(|| self.bad("a block size of 0"))?;
                if c % (block * block) != 0
                    || self.hwc(output)? != (h * block, w * block, c / (block * block))
                {
                    return Err(self.bad(format!("depth to space by {block} of {h}x{w}x{c}")));
                }
                Op::DepthToSpace {
                    input: ins[0],
                    output,
                    block,
                }
            }
            11 if arity(2, 0) => {
                let (_, _, c) = self.hwc(ins[0])?;
                self.same_size(ins[0], output)?;
                Op::Prelu {
                    input: ins[0],
                    output,
                    alpha: self.constant(ins[1], c)?,
                }
            }
            _ => {
                return Err(self.bad(format!(
                    "op {kind} with {} inputs and {} parameters is not supported",
                    ins.len(),
                    p.len()
                )));
            }
        };
        Ok(op)
    }

    fn same_size(&self, a: usize, b: usize) -> Result<()> {
        let (sa, sb) = (self.activation_tensor(a)?, self.activation_tensor(b)?);
        if sa.iter().product::<usize>() != sb.iter().product::<usize>() {
            return Err(self.bad(format!("{sa:?} and {sb:?} differ in size")));
        }
        Ok(())
    }
}
