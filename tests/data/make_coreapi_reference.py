#!/usr/bin/python3
"""Reference values for gradring's dtypes, conversions and creation ops, made with PyTorch
(Debian's python3-torch 1.13): the type promotion table, float -> integer conversions out of
range, fills that overflow, integer arithmetic of int8/int16/int32/uint8, bfloat16/float16
arithmetic (computed in float32 and rounded per op), arange/linspace/logspace values, and the
other families' kernels (math, comparisons, shape, indexing) on the new dtypes.
tests/core/test_dtypes.cpp and tests/core/test_creation.cpp compare against them.

Non-finite floats are written as the strings "nan", "inf" and "-inf" (JSON has no literal).

Run: /usr/bin/python3 tests/data/make_coreapi_reference.py  (writes coreapi_reference.json)
"""
import json
import math
import os

import torch

torch.manual_seed(15)

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "uint8": torch.uint8,
    "bool": torch.bool, "bfloat16": torch.bfloat16, "float16": torch.float16, "int32": torch.int32,
    "int16": torch.int16, "int8": torch.int8,
}
NAME = {v: k for k, v in DTYPES.items()}


def num(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def flat(t):
    return {"dtype": NAME[t.dtype], "shape": list(t.shape), "values": [num(v) for v in t.reshape(-1).tolist()]}


ref = {}

# ---- promotion: torch.promote_types over every pair ----
ref["promote_types"] = {a: {b: NAME[torch.promote_types(ta, tb)] for b, tb in DTYPES.items()} for a, ta in DTYPES.items()}

# ---- conversions: every dtype to every dtype, on values that probe the edges ----
edge = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.9, -128.9, 255.5, 256.0, -1.0, 300.0, -300.0, 40000.0, 70000.0,
        65504.0, 65520.0, 1e10, -1e10, 3e9, -3e9, 2.0**31, -2.0**31, 2.0**63, -2.0**63, 1e20, 3.4e38,
        float("nan"), float("inf"), float("-inf"), 1.0 / 3, 1e-8, 6e-8, 1e-40]
ints = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 2**31 - 1, 2**31, -2**31 - 1, 2**40 + 3,
        2**53 + 1, 2**62, -2**63]
conversions = []
for src_name, src in DTYPES.items():
    if src.is_floating_point:
        x = torch.tensor(edge, dtype=torch.float64).to(src)
    elif src == torch.bool:
        x = torch.tensor([True, False, True])
    else:
        x = torch.tensor(ints, dtype=torch.int64).to(src)
    for dst_name, dst in DTYPES.items():
        conversions.append({"input": flat(x), "output": flat(x.to(dst))})
ref["conversions"] = conversions

# ---- fills: full(value) per dtype, succeeding or overflowing (c10's checked_convert) ----
fills = []
for value in [5, -1, -255, -256, 256, 127, 128, -129, 2.5, 255.5, -0.5, 127.5, 1e6, 65504.0, 65519.0, 1e39, 3.4e38,
              float("nan"), float("inf"), True, 2**31, 2**40]:
    for name, dt in DTYPES.items():
        try:
            out = torch.full((1,), value, dtype=dt)
            fills.append({"value": num(value), "dtype": name, "ok": True, "result": num(out.tolist()[0])})
        except RuntimeError:
            fills.append({"value": num(value), "dtype": name, "ok": False})
ref["fills"] = fills

# ---- integer arithmetic and comparisons of the narrow types ----
arith = []
narrow = ["int8", "int16", "int32", "uint8"]
for a_name in narrow + ["int64", "bool", "float32"]:
    for b_name in narrow:
        a = torch.randint(-100, 100, (6,)).to(DTYPES[a_name]) if a_name != "uint8" else torch.randint(0, 255, (6,)).to(torch.uint8)
        if a_name == "float32":
            a = torch.randn(6) * 50
        b = torch.randint(1, 120, (6,)).to(DTYPES[b_name])
        for op in ["add", "sub", "mul", "div", "maximum", "minimum", "lt", "eq", "ge"]:
            if op == "sub" and a_name == "bool":
                continue  # torch refuses it
            out = getattr(torch, op)(a, b)
            arith.append({"op": op, "a": flat(a), "b": flat(b), "output": flat(out)})
for name in narrow:
    a = torch.tensor([1, 100, -100, 50, 0, 127], dtype=torch.int64).to(DTYPES[name])
    for op, s in [("add", 300), ("sub", 2), ("mul", 3), ("add", 1.5), ("mul", 0.5), ("div", 2)]:
        out = getattr(torch, op)(a, s)
        arith.append({"op": op, "a": flat(a), "scalar": s, "output": flat(out)})
    arith.append({"op": "neg", "a": flat(a), "output": flat(torch.neg(a))})
    arith.append({"op": "sum", "a": flat(a), "output": flat(a.sum())})
    arith.append({"op": "max", "a": flat(a), "output": flat(a.max())})
    arith.append({"op": "argmax", "a": flat(a), "output": flat(a.argmax())})
ref["arith"] = arith

# ---- bfloat16 / float16: each op computes in float32 and rounds its result once ----
reduced = []
for name in ["bfloat16", "float16"]:
    dt = DTYPES[name]
    x = (torch.randn(4, 7) * 2).to(dt)
    y = (torch.randn(4, 7) * 2).to(dt)
    pos = (torch.rand(4, 7) * 4 + 0.1).to(dt)
    w = (torch.randn(7, 5)).to(dt)
    cases = [
        ("add", [x, y], lambda: torch.add(x, y)), ("sub", [x, y], lambda: torch.sub(x, y)),
        ("mul", [x, y], lambda: torch.mul(x, y)), ("div", [x, y], lambda: torch.div(x, y)),
        ("maximum", [x, y], lambda: torch.maximum(x, y)), ("pow", [pos, y], lambda: torch.pow(pos, y)),
        ("exp", [x], lambda: torch.exp(x)), ("log", [pos], lambda: torch.log(pos)),
        ("sqrt", [pos], lambda: torch.sqrt(pos)), ("tanh", [x], lambda: torch.tanh(x)),
        ("sigmoid", [x], lambda: torch.sigmoid(x)), ("relu", [x], lambda: torch.relu(x)),
        ("neg", [x], lambda: torch.neg(x)), ("abs", [x], lambda: torch.abs(x)),
        ("add_scalar", [x], lambda: x + 0.1), ("mul_scalar", [x], lambda: x * 3.3),
        ("sum", [x], lambda: x.sum()), ("sum_dim", [x], lambda: x.sum(1)), ("mean", [x], lambda: x.mean()),
        ("mean_dim", [x], lambda: x.mean(0)), ("var", [x], lambda: x.var()), ("max", [x], lambda: x.max()),
        ("min_dim", [x], lambda: x.min(1).values), ("softmax", [x], lambda: torch.softmax(x, 1)),
        ("log_softmax", [x], lambda: torch.log_softmax(x, 1)), # torch 1.13's CPU kernel accumulates a bfloat16 mm in bfloat16 (each product
        # and sum rounded); torch 2.x computes in float32 and rounds once, which is
        # mm(x.float(), w.float()).bfloat16() bit for bit (checked with 2.x): that is recorded.
        ("mm", [x, w], lambda: torch.mm(x.float(), w.float()).to(dt)),
        ("matmul", [x, w], lambda: torch.matmul(x.float(), w.float()).to(dt)), ("lt", [x, y], lambda: torch.lt(x, y)),
        ("to_float32", [x], lambda: x.float()),
    ]
    for op, inputs, fn in cases:
        try:
            out = fn()
        except RuntimeError:  # not implemented for this dtype on the CPU in torch 1.13
            continue
        reduced.append({"op": op, "inputs": [flat(t) for t in inputs], "output": flat(out)})
    # mixed: reduced with float32 promotes to float32
    f = torch.randn(4, 7)
    reduced.append({"op": "add", "inputs": [flat(x), flat(f)], "output": flat(torch.add(x, f))})
ref["reduced"] = reduced

# ---- arange, linspace, logspace: counts and values (torch's CPU rounding) ----
aranges = []
for start, end, step, dtype in [
        (0, 10, 1, None), (0, 1, 0.1, None), (0, 10, 0.1, None), (-3.7, 1000.3, 0.37, None), (1, 2, 1e-3, "float32"),
        (1, 2, 1e-3, "float64"), (0, 10, 0.1, "float64"), (-3.7, 1000.3, 0.37, "float64"), (10, 0, -0.3, None),
        (10, 0, -0.3, "float64"), (0.5, 2.5, 1, "int64"), (0, 2.5, 1, "int64"), (0, 2.5, 1, "int32"),
        (0.5, 3, 1, "int32"), (-5, 5, 3, "int8"), (0, 300, 7, "uint8"), (0, 1, 1e-3, "bfloat16"), (-3, 7, 0.37, "float16"),
        (1, 2, 1e-3, "bfloat16"), (0, 10, 0.1, "float16"), (0, 5, 1, "float32"), (0, 2.0, 0.5, None), (0, 40, 4, None)]:
    kwargs = {} if dtype is None else {"dtype": DTYPES[dtype]}
    out = torch.arange(start, end, step, **kwargs)
    aranges.append({"start": start, "end": end, "step": step, "dtype": dtype, "output": flat(out)})
ref["arange"] = aranges

linspaces = []
for start, end, steps, dtype in [
        (0, 1, 100, "float32"), (-3.7, 11.3, 257, "float32"), (1, 2, 1000, "float64"), (5, -2, 33, "float64"),
        (0, 1, 7, "float32"), (0, 1, 1, "float32"), (0, 1, 0, "float32"), (0, 100, 77, "int64"),
        (-30, 110, 257, "int32"), (0, 1000, 100, "int16"), (1, 20, 1000, "int64"), (-3.7, 11.3, 257, "float64"),
        (0, 1, 100, "bfloat16"), (-2, 3, 50, "float16")]:
    out = torch.linspace(start, end, steps, dtype=DTYPES[dtype])
    linspaces.append({"start": start, "end": end, "steps": steps, "dtype": dtype, "output": flat(out)})
ref["linspace"] = linspaces

logspaces = []
for start, end, steps, base, dtype in [
        (0, 3, 100, 10.0, "float32"), (-3.7, 1.3, 257, 2.0, "float64"), (1, 2, 1000, 10.0, "float64"),
        (5, -2, 33, 3.0, "float32"), (0, 1, 7, 10.0, "float64"), (0, 10, 11, 2.0, "int64"), (0, 3, 1, 10.0, "float32"),
        (-1, 1, 20, 10.0, "bfloat16")]:
    out = torch.logspace(start, end, steps, base, dtype=DTYPES[dtype])
    logspaces.append({"start": start, "end": end, "steps": steps, "base": base, "dtype": dtype, "output": flat(out)})
ref["logspace"] = logspaces

# ---- the other families' kernels (math, comparisons, shape, indexing) on the new dtypes ----
# Seeded on its own, so that the sections above do not change when this one does.
torch.manual_seed(1515)
families = []
for name in narrow:
    dt = DTYPES[name]
    a = torch.tensor([1, 100, -100, 50, 0, 127, -7, 33], dtype=torch.int64).to(dt)
    b = torch.tensor([3, -7, 5, 9, 2, -3, 4, 6], dtype=torch.int64).to(dt)  # no zeros (uint8 wraps them)
    cases = [
        ("abs", [a], lambda: torch.abs(a)), ("sign", [a], lambda: torch.sign(a)),
        ("square", [a], lambda: torch.square(a)), ("clamp", [a], lambda: torch.clamp(a, -5, 60)),
        ("clamp_min", [a], lambda: torch.clamp_min(a, 3)), ("remainder", [a, b], lambda: torch.remainder(a, b)),
        ("fmod", [a, b], lambda: torch.fmod(a, b)), ("bitwise_and", [a, b], lambda: torch.bitwise_and(a, b)),
        ("bitwise_xor", [a, b], lambda: torch.bitwise_xor(a, b)), ("bitwise_not", [a], lambda: torch.bitwise_not(a)),
        ("logical_and", [a, b], lambda: torch.logical_and(a, b)), ("ne", [a, b], lambda: torch.ne(a, b)),
        ("le", [a, b], lambda: torch.le(a, b)), ("sort", [a], lambda: torch.sort(a).values),
        ("argsort", [a], lambda: torch.sort(a).indices), ("topk", [a], lambda: torch.topk(a, 3).values),
        ("flip", [a], lambda: torch.flip(a, [0])), ("roll", [a], lambda: torch.roll(a, 3)),
        ("where", [a, b], lambda: torch.where(a > b, a, b)),
    ]
    for op, inputs, fn in cases:
        try:
            out = fn()
        except RuntimeError:  # not implemented for this dtype on the CPU in torch 1.13
            continue
        families.append({"op": op, "inputs": [flat(t) for t in inputs], "output": flat(out)})
for name in ["bfloat16", "float16"]:
    dt = DTYPES[name]
    x = (torch.randn(9) * 2).to(dt)
    y = (torch.randn(9) * 2).to(dt)
    u = (torch.rand(9) * 1.8 - 0.9).to(dt)
    pos = (torch.rand(9) * 4 + 0.1).to(dt)
    cases = [
        ("sin", [x], lambda: torch.sin(x)), ("cos", [x], lambda: torch.cos(x)), ("atan", [x], lambda: torch.atan(x)),
        ("erf", [x], lambda: torch.erf(x)), ("erfinv", [u], lambda: torch.erfinv(u)), ("expm1", [x], lambda: torch.expm1(x)),
        ("log1p", [pos], lambda: torch.log1p(pos)), ("rsqrt", [pos], lambda: torch.rsqrt(pos)),
        ("reciprocal", [pos], lambda: torch.reciprocal(pos)), ("square", [x], lambda: torch.square(x)),
        ("floor", [x], lambda: torch.floor(x)), ("round", [x], lambda: torch.round(x)), ("frac", [x], lambda: torch.frac(x)),
        ("clamp", [x], lambda: torch.clamp(x, -1.3, 0.7)), ("atan2", [x, y], lambda: torch.atan2(x, y)),
        ("hypot", [x, y], lambda: torch.hypot(x, y)), ("remainder", [x, y], lambda: torch.remainder(x, y)),
        ("lerp", [x, y], lambda: torch.lerp(x, y, 0.3)), ("sort", [x], lambda: torch.sort(x).values),
        ("topk", [x], lambda: torch.topk(x, 3).values), ("le", [x, y], lambda: torch.le(x, y)),
    ]
    for op, inputs, fn in cases:
        try:
            out = fn()
        except RuntimeError:
            continue
        families.append({"op": op, "inputs": [flat(t) for t in inputs], "output": flat(out)})
ref["families"] = families

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coreapi_reference.json")
with open(path, "w") as f:
    json.dump(ref, f, separators=(",", ":"))
print("wrote", path)
