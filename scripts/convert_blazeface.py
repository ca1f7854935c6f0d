"""Converts a BlazeFace face detector (`face_detection_full_range_sparse.tflite` of the mediapipe
0.10.14 wheel, Apache-2.0) into the plain graph file caption-faces runs:

    python3 scripts/convert_blazeface.py face_detection_full_range_sparse.tflite blazeface.graph

The TFLite file is a FlatBuffer; the few tables needed are read here with the standard library.
Constant weights are stored as float16, some of them sparse (DENSIFY, then DEQUANTIZE ops): they
are made dense float32 here, so the output holds only the network's arithmetic. Little-endian:

    b"CFGRAPH1"
    u32 tensor count; per tensor: u32 rank, u32 dims[rank], u32 value count, f32 values
        (a count of 0: computed at run time)
    u32 input tensor; u32 output count, u32 outputs[]
    u32 op count; per op: u32 kind, u32 n, inputs[n], u32 n, outputs[n], u32 n, i32 params[n]

Op kinds and their params (strides and sizes as TFLite has them; `same` is 1 for SAME padding):
    1 conv 2d        stride_h stride_w same activation dilation_h dilation_w
    2 depthwise      stride_h stride_w same activation dilation_h dilation_w multiplier
    3 add            activation
    4 relu
    5 max pool       filter_h filter_w stride_h stride_w same activation
    6 pad            before/after for each of the 4 dimensions
    7 reshape        (the output tensor's shape)
    8 concatenation  axis activation
    9 resize bilinear  align_corners half_pixel_centers (the output tensor's size)
   10 depth to space block
   11 prelu          (alpha is the second input)
Activations: 0 none, 1 relu, 3 relu6.
"""

import struct
import sys

FLOAT32, FLOAT16, INT32 = 0, 1, 2
OPS = {0: "ADD", 2: "CONCATENATION", 3: "CONV_2D", 4: "DEPTHWISE_CONV_2D", 5: "DEPTH_TO_SPACE",
       6: "DEQUANTIZE", 17: "MAX_POOL_2D", 19: "RELU", 22: "RESHAPE", 23: "RESIZE_BILINEAR",
       34: "PAD", 54: "PRELU", 124: "DENSIFY"}
ACTIVATIONS = {0, 1, 3}


class Table:
    """A FlatBuffer table at `pos` of `buf`."""

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        (soffset,) = struct.unpack_from("<i", buf, pos)
        self.vtable = pos - soffset
        (self.vsize,) = struct.unpack_from("<H", buf, self.vtable)

    def _field(self, index):
        at = 4 + 2 * index
        if at >= self.vsize:
            return 0
        return struct.unpack_from("<H", self.buf, self.vtable + at)[0]

    def scalar(self, index, fmt, default=0):
        off = self._field(index)
        return struct.unpack_from("<" + fmt, self.buf, self.pos + off)[0] if off else default

    def _target(self, index):
        off = self._field(index)
        if not off:
            return None
        at = self.pos + off
        return at + struct.unpack_from("<I", self.buf, at)[0]

    def table(self, index):
        at = self._target(index)
        return None if at is None else Table(self.buf, at)

    def vector(self, index, fmt):
        at = self._target(index)
        if at is None:
            return []
        (n,) = struct.unpack_from("<I", self.buf, at)
        return list(struct.unpack_from(f"<{n}{fmt}", self.buf, at + 4))

    def bytes(self, index):
        at = self._target(index)
        if at is None:
            return b""
        (n,) = struct.unpack_from("<I", self.buf, at)
        return self.buf[at + 4 : at + 4 + n]

    def tables(self, index):
        at = self._target(index)
        if at is None:
            return []
        (n,) = struct.unpack_from("<I", self.buf, at)
        out = []
        for i in range(n):
            slot = at + 4 + 4 * i
            out.append(Table(self.buf, slot + struct.unpack_from("<I", self.buf, slot)[0]))
        return out


def product(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def densify(values, shape, sparsity):
    """TFLite's sparse format: the values in traversal order, levels dense or CSR."""
    order = sparsity.vector(0, "i")
    block_map = sparsity.vector(1, "i")
    levels = []
    for meta in sparsity.tables(2):
        if meta.scalar(0, "b") == 0:
            levels.append(("dense", meta.scalar(1, "i"), None, None))
        else:
            kinds = {1: "i", 2: "H", 3: "B"}
            seg = meta.table(3).vector(0, kinds[meta.scalar(2, "B")])
            idx = meta.table(5).vector(0, kinds[meta.scalar(4, "B")])
            levels.append(("csr", 0, seg, idx))
    rank = len(shape)
    block_sizes = [levels[i][1] for i in range(rank, len(order))]
    dense = [0.0] * product(shape)
    strides = [product(shape[d + 1 :]) for d in range(rank)]
    cursor = [0]
    indices = [0] * len(order)

    def walk(level, prev):
        if level == len(order):
            orig = [0] * rank
            for i in range(rank):
                orig[order[i]] = indices[i]
            for i in range(rank, len(order)):
                b = order[i] - rank
                orig[block_map[b]] = orig[block_map[b]] * block_sizes[b] + indices[i]
            dense[sum(o * s for o, s in zip(orig, strides))] = values[cursor[0]]
            cursor[0] += 1
            return
        kind, size, seg, idx = levels[level]
        if kind == "dense":
            for i in range(size):
                indices[level] = i
                walk(level + 1, prev * size + i)
        else:
            for j in range(seg[prev], seg[prev + 1]):
                indices[level] = idx[j]
                walk(level + 1, j)

    walk(0, 0)
    if cursor[0] != len(values):
        sys.exit(f"sparse tensor: {cursor[0]} of {len(values)} values placed")
    return dense


def main(src, dst):
    buf = open(src, "rb").read()
    model = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    codes = [max(c.scalar(0, "b"), c.scalar(3, "i")) for c in model.tables(1)]
    buffers = [b.bytes(0) for b in model.tables(4)]
    (graph,) = model.tables(2)
    tensors = graph.tables(0)
    shapes = [t.vector(0, "i") for t in tensors]
    consts = {}  # tensor index -> list of floats or ints
    for i, t in enumerate(tensors):
        data = buffers[t.scalar(2, "I")]
        if not data:
            continue
        kind = t.scalar(1, "b")
        fmt = {FLOAT32: "f", FLOAT16: "e", INT32: "i"}.get(kind)
        if fmt is None:
            sys.exit(f"tensor {i}: type {kind} not handled")
        values = list(struct.unpack_from(f"<{len(data) // struct.calcsize(fmt)}{fmt}", data))
        sparsity = t.table(6)
        consts[i] = (values, sparsity)
    ops = []
    for op in graph.tables(3):
        name = OPS.get(codes[op.scalar(0, "I")])
        ins, outs = op.vector(1, "i"), op.vector(2, "i")
        opts = op.table(4)
        act = 0
        if name is None:
            sys.exit(f"operator {codes[op.scalar(0, 'I')]} not handled")
        if name == "DENSIFY":
            values, sparsity = consts[ins[0]]
            consts[outs[0]] = (densify(values, shapes[outs[0]], sparsity), None)
            continue
        if name == "DEQUANTIZE":
            values, sparsity = consts[ins[0]]
            if sparsity is not None:
                sys.exit("a sparse tensor dequantized before it was made dense")
            consts[outs[0]] = ([float(v) for v in values], None)
            continue
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            act = opts.scalar(3 if name == "CONV_2D" else 4, "b")
            params = [opts.scalar(2, "i"), opts.scalar(1, "i"), int(opts.scalar(0, "b") == 0), act]
            if name == "CONV_2D":
                params += [opts.scalar(5, "i", 1), opts.scalar(4, "i", 1)]
                kind = 1
            else:
                params += [opts.scalar(6, "i", 1), opts.scalar(5, "i", 1), opts.scalar(3, "i")]
                kind = 2
            ops.append((kind, ins[:3], outs, params))
        elif name == "ADD":
            act = opts.scalar(0, "b") if opts else 0
            ops.append((3, ins, outs, [act]))
        elif name == "RELU":
            ops.append((4, ins, outs, []))
        elif name == "MAX_POOL_2D":
            act = opts.scalar(5, "b")
            ops.append((5, ins, outs, [opts.scalar(4, "i"), opts.scalar(3, "i"), opts.scalar(2, "i"),
                                       opts.scalar(1, "i"), int(opts.scalar(0, "b") == 0), act]))
        elif name == "PAD":
            ops.append((6, ins[:1], outs, [int(v) for v in consts[ins[1]][0]]))
        elif name == "RESHAPE":
            ops.append((7, ins[:1], outs, []))
        elif name == "CONCATENATION":
            act = opts.scalar(1, "b")
            ops.append((8, ins, outs, [opts.scalar(0, "i"), act]))
        elif name == "RESIZE_BILINEAR":
            ops.append((9, ins[:1], outs, [int(opts.scalar(2, "B")), int(opts.scalar(3, "B"))]))
        elif name == "DEPTH_TO_SPACE":
            ops.append((10, ins, outs, [opts.scalar(0, "i")]))
        elif name == "PRELU":
            ops.append((11, ins, outs, []))
        if act not in ACTIVATIONS:
            sys.exit(f"{name}: fused activation {act} not handled")
    used = {t for _, ins, outs, _ in ops for t in ins + outs} | set(graph.vector(1, "i"))
    with open(dst, "wb") as out:
        out.write(b"CFGRAPH1")
        out.write(struct.pack("<I", len(tensors)))
        for i, shape in enumerate(shapes):
            values = consts[i][0] if i in consts and i in used else []
            if i in consts and i in used and consts[i][1] is not None:
                sys.exit(f"tensor {i}: still sparse")
            out.write(struct.pack(f"<I{len(shape)}I", len(shape), *shape))
            out.write(struct.pack(f"<I{len(values)}f", len(values), *values))
        (inp,) = graph.vector(1, "i")
        outputs = graph.vector(2, "i")
        # Boxes first (16 values an anchor), then scores.
        outputs.sort(key=lambda t: -shapes[t][-1])
        out.write(struct.pack(f"<II{len(outputs)}I", inp, len(outputs), *outputs))
        out.write(struct.pack("<I", len(ops)))
        for kind, ins, outs, params in ops:
            out.write(struct.pack(f"<II{len(ins)}I", kind, len(ins), *ins))
            out.write(struct.pack(f"<I{len(outs)}I", len(outs), *outs))
            out.write(struct.pack(f"<I{len(params)}i", len(params), *params))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
