#!/usr/bin/env python3
"""Checks a safetensors file written by gradring's test (see tests/nn/test_serialize.cpp).

Uses the real `safetensors` package when it is importable, otherwise reads the format
directly (8-byte little-endian header length, JSON header, raw little-endian data), so the
check runs on a machine with a bare Python too. Exit status 0 = the file is as expected.
Usage: check_safetensors.py FILE
"""
import json
import struct
import sys

EXPECTED = {
    "weight": ("F32", [2, 2], [1.0, -2.0, 0.5, 3.0]),
    "counts": ("I64", [3], [5, -6, 1 << 41]),
    "scale": ("F64", [], [0.25]),
}
FORMATS = {"F32": "f", "F64": "d", "I64": "q", "U8": "B"}


def read_plain(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        fmt = FORMATS[e["dtype"]]
        count = (end - b) // struct.calcsize(fmt)
        out[name] = (e["dtype"], e["shape"], list(struct.unpack("<%d%s" % (count, fmt), body[b:end])))
    return out, meta


def read_package(path):
    from safetensors import safe_open  # noqa: PLC0415
    out = {}
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata() or {}
        for name in f.keys():
            a = f.get_tensor(name)
            dtype = {"float32": "F32", "float64": "F64", "int64": "I64", "uint8": "U8"}[str(a.dtype)]
            out[name] = (dtype, list(a.shape), a.reshape(-1).tolist())
    return out, meta


def main():
    path = sys.argv[1]
    try:
        tensors, meta = read_package(path)
        how = "safetensors package"
    except ImportError:
        tensors, meta = read_plain(path)
        how = "plain reader"
    ok = tensors == {k: (d, s, v) for k, (d, s, v) in EXPECTED.items()} and meta == {"writer": "gradring"}
    print(("ok" if ok else "MISMATCH") + " (" + how + "): " + repr(tensors) + " " + repr(meta))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
