"""Largest absolute difference between the float64 tensors of two safetensors files (used by
the end-to-end tests that compare DDP runs with one process). The files must hold the same
names, each F64 with the same shape in both; a NaN anywhere makes the difference NaN
(tests/compare.py). Prints the difference, or MISMATCH and what differs (exit status 1).
Usage: safetensors_maxdiff.py [--max TOL] A B   (--max: exit status 1 unless it is <= TOL)"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare  # noqa: E402  (tests/compare.py)


def read(path):
    """{name: (shape, values)} of a safetensors file of F64 tensors (ValueError otherwise)."""
    data = open(path, "rb").read()
    if len(data) < 8:
        raise ValueError("%s: shorter than the 8-byte header length" % path)
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for name, e in header.items():
        if e["dtype"] != "F64":
            raise ValueError("%s: %s is %s, not F64" % (path, name, e["dtype"]))
        b, end = e["data_offsets"]
        count = 1
        for d in e["shape"]:
            count *= d
        if end - b != 8 * count or end > len(body):
            raise ValueError("%s: %s holds %d bytes for shape %s" % (path, name, end - b, e["shape"]))
        out[name] = (e["shape"], struct.unpack("<%dd" % count, body[b:end]))
    return out


def main(argv):
    tol = None
    if argv[:1] == ["--max"]:
        tol, argv = float(argv[1]), argv[2:]
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    try:
        a, b = read(argv[0]), read(argv[1])
        compare.check_same_names(a, b)
        for name in b:
            if a[name][0] != b[name][0]:
                raise ValueError("%s: shape %s against %s" % (name, a[name][0], b[name][0]))
        d = compare.max_abs_diff_named({k: v for k, (_, v) in a.items()}, {k: v for k, (_, v) in b.items()})
    except ValueError as e:
        print("MISMATCH: %s" % e)
        return 1
    print(repr(d))
    return 0 if tol is None or compare.within(d, tol) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
