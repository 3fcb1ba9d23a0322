#!/usr/bin/python3
"""Reference values for gradring's element-wise math and comparison ops, made with PyTorch
(Debian's python3-torch).

Each case names an op, its tensor inputs (dtype, shape, values) and its number arguments,
and records torch's result (dtype, shape, values) or that torch refuses the call. Inputs
include the special values (NaN, +-inf, +-0, rounding ties, negative divisors) and the
integer, bool and reduced-float dtypes where torch accepts them. JSON has no NaN or
infinity: they are written as the strings "nan", "inf" and "-inf".

Run: /usr/bin/python3 tests/data/make_math_reference.py  (writes math_reference.json)
"""
import json
import math
import os

import torch
import torch.nn.functional as F

NAN, INF = float("nan"), float("inf")
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 0.25, -0.25, 0.5, -0.5, 0.7, -0.7, 0.9999, -0.99, 1.0, -1.0, 1.5, -1.5,
           2.5, -2.5, 3.7, -3.7, 10.0, -20.5, 100.0, 1e-8, -1e-8]
INTS = [-7, -3, -2, -1, 0, 1, 2, 3, 7, 100]
BOOLS = [True, False]
PAIR_VALUES = [NAN, INF, -INF, 0.0, -0.0, 1.5, -1.5, 3.0, -3.0, 5.5, -7.25]

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "bool": torch.bool,
          "bfloat16": torch.bfloat16, "float16": torch.float16, "uint8": torch.uint8}


def number(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def enc(t):
    name = str(t.dtype).replace("torch.", "")
    values = t.detach().reshape(-1)
    values = values.to(torch.float64 if t.is_floating_point() else torch.int64).tolist()
    return {"dtype": name, "shape": list(t.shape), "values": [number(v) for v in values]}


def make(values, dtype, shape=None):
    t = torch.tensor(values, dtype=torch.float64 if DTYPES[dtype].is_floating_point else None)
    t = t.to(DTYPES[dtype])
    return t.reshape(shape) if shape is not None else t


cases = []


def half_in_float32(fn, inputs):
    """torch 1.13 has no float16 math on the CPU; later versions compute it in float32 and round
    once, as gradring does: the same here."""
    out = fn(*[x.float() if x.dtype == torch.float16 else x for x in inputs])
    return out.half() if out.dtype == torch.float32 else out


def case(op, inputs, fn, **params):
    record = {"op": op, "params": {k: number(v) for k, v in params.items()}, "inputs": [enc(t) for t in inputs]}
    try:
        record["out"] = enc(fn(*inputs))
    except (RuntimeError, ZeroDivisionError) as e:
        record["error"] = str(e).split("\n")[0]
        if "not implemented for 'Half'" in str(e):
            try:
                record["out"] = enc(half_in_float32(fn, inputs))
                record["emulated"] = True
                del record["error"]
            except RuntimeError:
                pass
    cases.append(record)


def cartesian(values_a, values_b, dtype):
    a = [x for x in values_a for _ in values_b]
    b = [y for _ in values_a for y in values_b]
    return make(a, dtype), make(b, dtype)


# ---- unary ----
UNARY = {
    "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "asin": torch.asin, "acos": torch.acos,
    "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh, "erf": torch.erf, "erfc": torch.erfc,
    "erfinv": torch.erfinv, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "log1p": torch.log1p,
    "expm1": torch.expm1, "log2": torch.log2, "log10": torch.log10, "square": torch.square, "sign": torch.sign,
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc, "frac": torch.frac,
    "logical_not": torch.logical_not, "bitwise_not": torch.bitwise_not, "isnan": torch.isnan,
    "isinf": torch.isinf, "isfinite": torch.isfinite, "softplus": F.softplus,
}
for op, fn in UNARY.items():
    for dtype in ["float64", "float32", "bfloat16", "float16"]:
        case(op, [make(SPECIAL, dtype)], fn)
    case(op, [make(INTS, "int64")], fn)
    case(op, [make(BOOLS, "bool")], fn)
# Rounding ties go to even; the sign of zero is kept.
TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5, -0.49999999999999994, 0.49999999999999994, 1e16 + 2, -0.0]
for op in ["round", "floor", "ceil", "trunc", "frac", "sign"]:
    case(op, [make(TIES, "float64")], UNARY[op])
for decimals in [1, 2, 3, -1, -2]:
    x = make([1.2345, -1.2355, 1234.5, 0.125, -0.125, 2.675, 1e-10, 1250.0, 1350.0, NAN, INF, -0.0], "float64")
    case("round_decimals", [x], lambda t, d=decimals: torch.round(t, decimals=d), decimals=decimals)
    case("round_decimals", [x.float()], lambda t, d=decimals: torch.round(t, decimals=d), decimals=decimals)
case("round_decimals", [make(INTS, "int64")], lambda t: torch.round(t, decimals=1), decimals=1)
for beta, threshold in [(2, 20), (0.5, 1), (1, -1), (3, 5)]:
    for dtype in ["float64", "float32"]:
        case("softplus", [make(SPECIAL, dtype)], lambda t, b=beta, th=threshold: F.softplus(t, b, th), beta=beta,
             threshold=threshold)
# erfinv over (-1, 1) and close to its poles: checked to ~1e-12 in float64.
grid = [-0.999999 + i * (2 * 0.999999) / 2000 for i in range(2001)]
tails = [1 - 1e-3, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12, -(1 - 1e-9), 0.7, -0.7, 0.70000001, 1e-300]
case("erfinv_dense", [make(grid + tails, "float64")], torch.erfinv)
case("erfinv_dense", [make(grid, "float32")], torch.erfinv)

# ---- binary ----
BINARY = {"atan2": torch.atan2, "fmod": torch.fmod, "remainder": torch.remainder, "hypot": torch.hypot,
          "logical_and": torch.logical_and, "logical_or": torch.logical_or, "logical_xor": torch.logical_xor,
          "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
          "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
          "logaddexp": torch.logaddexp, "xlogy": torch.xlogy, "copysign": torch.copysign}
for op, fn in BINARY.items():
    for dtype in ["float64", "float32", "bfloat16"]:
        # copysign reads a NaN's sign bit, which JSON does not keep; torch's float64 -> bfloat16
        # conversion makes NaN negative, gradring's keeps it positive: no NaN signs there.
        others = [v for v in PAIR_VALUES if not math.isnan(v)] if op == "copysign" and dtype == "bfloat16" else PAIR_VALUES
        case(op, list(cartesian(PAIR_VALUES, others, dtype)), fn)
    case(op, list(cartesian(list(range(-7, 8)), [-3, -2, -1, 1, 2, 3], "int64")), fn)
    case(op, list(cartesian([True, False], [True, False], "bool")), fn)
    # Promotion: int64 with float32, bool with int64, broadcasting [3, 1] with [4].
    case(op, [make([-7, -2, 0, 3, 5], "int64"), make([2.5, -1.5, 0.0, 2.0, -0.0], "float32")], fn)
    case(op, [make([True, False, True], "bool"), make([3, -2, 0], "int64")], fn)
    case(op, [make([1.5, -2.0, 0.0], "float64", [3, 1]), make([1.0, -1.0, 0.5, 2.0], "float64")], fn)
# Integer division by zero is an error for fmod and remainder.
for op in ["fmod", "remainder"]:
    case(op, [make([1, 2, 3], "int64"), make([1, 0, 2], "int64")], BINARY[op])

# With a number on one side (wrapped numbers don't promote within their category).
SCALAR_BINARY = {"fmod": torch.fmod, "remainder": torch.remainder, "eq": torch.eq, "ne": torch.ne,
                 "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
                 "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
                 "xlogy": torch.xlogy, "copysign": torch.copysign}
for op, fn in SCALAR_BINARY.items():
    for other in [2.5, -1.5, 3, -2, 16777216.0]:
        case(op + "_scalar", [make([16777217, 7, -7, 3, 0, -2], "int64")], lambda t, s=other, f=fn: f(t, s),
             other=other)
        case(op + "_scalar", [make(SPECIAL, "float32")], lambda t, s=other, f=fn: f(t, s), other=other)
        case(op + "_scalar", [make(BOOLS, "bool")], lambda t, s=other, f=fn: f(t, s), other=other)
    case(op + "_scalar", [make([0.3, 0.1, -2.7], "bfloat16")], lambda t, f=fn: f(t, 0.3), other=0.3)
case("remainder_scalar_tensor", [make([-3, -2, 2, 3, 4], "int64")], lambda t: torch.remainder(5, t), other=5)
case("remainder_scalar_tensor", [make([-3.5, -2, 2, 3, 4.5], "float64")], lambda t: torch.remainder(5.5, t),
     other=5.5)
for self_value in [0.0, 2.5, 3, NAN]:
    case("xlogy_scalar_tensor", [make(SPECIAL, "float64")], lambda t, s=self_value: torch.xlogy(s, t), other=self_value)
    case("xlogy_scalar_tensor", [make(INTS, "int64")], lambda t, s=self_value: torch.xlogy(s, t), other=self_value)

# ---- lerp ----
for dtype in ["float64", "float32", "bfloat16"]:
    a = make([0.0, 1.0, -2.0, 10.0, 1e10, NAN, INF, 3.0], dtype)
    b = make([1.0, 3.0, 2.0, -10.0, -1e10, 1.0, 1.0, 3.0], dtype)
    for w in [0.0, 0.3, 0.5, 0.75, 1.0, 1.5, -0.5]:
        case("lerp_scalar", [a, b], lambda x, y, w=w: torch.lerp(x, y, w), weight=w)
    case("lerp", [a, b, make([0.0, 0.3, 0.5, 0.75, 1.0, 1.5, -0.5, 0.4999], dtype)], torch.lerp)
case("lerp", [make([1.0, 2.0], "float64", [2, 1]), make([3.0, 4.0, 5.0], "float64"), make([0.25], "float64")],
     torch.lerp)
case("lerp_scalar", [make([1.0], "float32"), make([1.0], "float64")], lambda x, y: torch.lerp(x, y, 0.5), weight=0.5)
case("lerp_scalar", [make([1], "int64"), make([2], "int64")], lambda x, y: torch.lerp(x, y, 0.5), weight=0.5)

# ---- clamp ----
BOUNDS = [(-1, 1), (None, 0.5), (-0.5, None), (2, 1), (NAN, 1), (-1, NAN), (None, NAN), (NAN, None), (0, 0)]
for lo, hi in BOUNDS:
    for dtype in ["float64", "float32", "bfloat16"]:
        case("clamp", [make(SPECIAL, dtype)], lambda t, lo=lo, hi=hi: torch.clamp(t, lo, hi), min=lo, max=hi)
for lo, hi in [(0, 2), (0.5, None), (None, 2.5), (-2, None), (3, 1), (0.5, 2)]:
    case("clamp", [make(INTS, "int64")], lambda t, lo=lo, hi=hi: torch.clamp(t, lo, hi), min=lo, max=hi)
case("clamp", [make(BOOLS, "bool")], lambda t: torch.clamp(t, 0, 1), min=0, max=1)
case("clamp", [make(INTS, "int64")], lambda t: torch.clamp(t), min=None, max=None)
x = make([-3.0, -1.0, 0.0, 0.5, 2.0, 5.0, NAN, 1.0, -2.0, 4.0, 0.25, 7.0], "float64", [4, 3])
lo = make([-1.0, NAN, 0.0], "float64")
hi = make([2.0, 0.5, 3.0, -5.0], "float64", [4, 1])
case("clamp_tensor", [x, lo, hi], lambda t, a, b: torch.clamp(t, a, b))
case("clamp_min_tensor", [x, lo], lambda t, a: torch.clamp(t, min=a))
case("clamp_max_tensor", [x, hi], lambda t, b: torch.clamp(t, max=b))
case("clamp_tensor", [make(INTS, "int64"), make([0], "int64"), make([2.5], "float32")], lambda t, a, b: torch.clamp(t, a, b))

# ---- isclose / allclose ----
a = make([1.0, 1.0, NAN, INF, -INF, INF, 1e-8, 0.0, 1e10, 100.0], "float64")
b = make([1.0 + 1e-6, 1.1, NAN, INF, INF, NAN, 0.0, 1e-9, 1e10 + 1e4, 100.1], "float64")
for rtol, atol, equal_nan in [(1e-5, 1e-8, False), (1e-5, 1e-8, True), (0.0, 0.0, False), (1e-3, 0.1, True)]:
    for dtype in ["float64", "float32"]:
        case("isclose", [a.to(DTYPES[dtype]), b.to(DTYPES[dtype])],
             lambda x, y, r=rtol, t=atol, e=equal_nan: torch.isclose(x, y, r, t, e), rtol=rtol, atol=atol,
             equal_nan=equal_nan)
        case("allclose", [a[:2].to(DTYPES[dtype]), b[:2].to(DTYPES[dtype])],
             lambda x, y, r=rtol, t=atol, e=equal_nan: torch.tensor(torch.allclose(x, y, r, t, e)), rtol=rtol,
             atol=atol, equal_nan=equal_nan)
case("isclose", [make([1, 2, 3], "int64"), make([1, 3, 2], "int64")], lambda x, y: torch.isclose(x, y, 0.4, 0.0),
     rtol=0.4, atol=0.0, equal_nan=False)
case("isclose", [make([1.0], "float32"), make([1.0], "float64")], torch.isclose, rtol=1e-5, atol=1e-8,
     equal_nan=False)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "math_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f, allow_nan=False)
print(f"wrote {len(cases)} cases to {out}")
