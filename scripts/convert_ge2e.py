"""Converts resemblyzer's voice encoder weights (`pretrained.pt` of the resemblyzer 0.1.4 wheel,
Apache-2.0) into the raw file caption-speakers reads:

    python3 scripts/convert_ge2e.py pretrained.pt resemblyzer-ge2e.f32

`pretrained.pt` is in torch's legacy format: five pickles in a row (magic number, protocol,
system info, the checkpoint, the storage keys), then each storage as an int64 element count and
its raw little-endian floats. The standard library reads it; torch is not needed. The output is
the encoder's tensors as little-endian f32, one after another, in the order of ORDER.
"""

import pickle
import struct
import sys

ORDER = [
    f"lstm.{kind}_l{layer}"
    for layer in range(3)
    for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
] + ["linear.weight", "linear.bias"]


class StateDict(dict):
    """The OrderedDict of a state dict, which torch also gives attributes (_metadata)."""


class Storage:
    def __init__(self, dtype):
        self.dtype = dtype
        self.data = None


def main(src, dst):
    storages = {}

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
                return lambda storage, offset, size, stride, *_: (storage, offset, size, stride)
            if (module, name) == ("collections", "OrderedDict"):
                return StateDict
            if module == "torch" and name.endswith("Storage"):
                return name
            raise pickle.UnpicklingError(f"unexpected {module}.{name} in {src}")

        def persistent_load(self, pid):
            _, dtype, key, _location, _size = pid[:5]
            return storages.setdefault(key, Storage(dtype))

    with open(src, "rb") as f:
        for _ in range(3):
            pickle.load(f)  # magic number, protocol version, system info
        state = Unpickler(f).load()["model_state"]
        for key in pickle.load(f):
            (count,) = struct.unpack("<q", f.read(8))
            storages[key].data = f.read(4 * count)
    with open(dst, "wb") as out:
        for name in ORDER:
            storage, offset, size, stride = state[name]
            if storage.dtype != "FloatStorage":
                sys.exit(f"{name}: {storage.dtype}, expected FloatStorage")
            count = 1
            for dim in size:
                count *= dim
            contiguous = tuple(count // dim_product for dim_product in _prefix_products(size))
            if tuple(stride) != contiguous:
                sys.exit(f"{name}: strides {stride}, expected contiguous {contiguous}")
            out.write(storage.data[4 * offset : 4 * (offset + count)])


def _prefix_products(size):
    """For shape (a, b, c): a, a*b, a*b*c — so that count // each is the row-major stride."""
    product = 1
    for dim in size:
        product *= dim
        yield product


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
