"""Largest absolute difference between the float64 tensors of two safetensors files holding the
same names (used by the end-to-end tests that compare DDP runs with one process).
Usage: safetensors_maxdiff.py A B (prints the difference)."""
import json
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        assert e["dtype"] == "F64", (name, e["dtype"])
        b, end = e["data_offsets"]
        out[name] = struct.unpack("<%dd" % ((end - b) // 8), data[8 + n + b:8 + n + end])
    return out


a, b = read(sys.argv[1]), read(sys.argv[2])
assert sorted(a) == sorted(b), "different tensors"
print(max(abs(x - y) for k in a for x, y in zip(a[k], b[k])))
