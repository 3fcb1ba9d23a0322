#!/usr/bin/python3
"""Reference values for gradring's reductions and linear algebra, made with PyTorch.

Each case names an op (the C++ test maps it to the gr:: call), its inputs, its arguments,
torch's outputs (values, shape and dtype) and, for differentiable float64 cases, the input
gradients for a fixed upstream gradient (ties, zeros and NaN included, where gradcheck cannot
look). Non-finite numbers are written as the strings "nan", "inf" and "-inf".

Run: /usr/bin/python3 tests/data/make_reduce_reference.py  (writes reduce_reference.json)
"""
import json
import math
import os

import torch

torch.manual_seed(2024)
NAN, INF = float("nan"), float("inf")

DTYPES = {torch.float64: "float64", torch.float32: "float32", torch.int64: "int64", torch.uint8: "uint8",
          torch.bool: "bool", torch.bfloat16: "bfloat16", torch.float16: "float16"}


def num(v, bool_as_number=True):
    if isinstance(v, bool):
        return (1.0 if v else 0.0) if bool_as_number else v
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def flat(t):
    t = t.detach()
    values = t.to(torch.float64).reshape(-1).tolist() if t.dtype in (torch.bfloat16, torch.float16) else t.reshape(-1).tolist()
    return {"shape": list(t.shape), "dtype": DTYPES[t.dtype], "values": [num(v) for v in values]}


def randn(*shape, dtype=torch.float64):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def ints(*shape, lo=-5, hi=6, dtype=torch.int64):
    return torch.randint(lo, hi, shape).to(dtype)


cases = []


def case(op, inputs, fn, grad=None, **args):
    """fn(*inputs) -> tensor or tuple; grad: indices of the inputs to differentiate (float64)."""
    xs = [x.clone().requires_grad_(grad is not None and i in grad) for i, x in enumerate(inputs)]
    out = fn(*xs)
    outs = list(out) if isinstance(out, tuple) else [out]
    record = {"op": op, "args": {k: num(v, False) for k, v in args.items()}, "inputs": [flat(x) for x in inputs], "outputs": [flat(o) for o in outs]}
    if grad is not None:
        up = torch.randn(outs[0].shape, dtype=torch.float64)
        outs[0].backward(up)
        record["upstream"] = flat(up)
        record["grads"] = [flat(xs[i].grad if xs[i].grad is not None else torch.zeros_like(xs[i])) for i in grad]
    cases.append(record)


x3 = randn(3, 4, 5)
ties = torch.tensor([[1., 3., 3., 2.], [5., 5., 5., 5.], [-1., 0., -1., 7.]], dtype=torch.float64)
with_nan = torch.tensor([[1., NAN, 3., 0.], [2., 2., -INF, 1.], [NAN, 4., NAN, 4.]], dtype=torch.float64)
zeros_in = torch.tensor([[2., 0., 3., 4.], [0., 1.5, 0., 2.], [1., 2., 3., 4.]], dtype=torch.float64)
i3 = ints(3, 4, 2)
u8 = ints(3, 5, lo=0, hi=4, dtype=torch.uint8)
b2 = torch.tensor([[True, False, True], [False, False, False]])

# ---- sum / mean ----
for dims, keep in [([], False), ([1], False), ([0, 2], True), ([-1], False), ([2, 0], False)]:
    case("sum", [x3], lambda x: x.sum(dims, keepdim=keep) if dims else x.sum(), [0], dims=dims, keepdim=keep)
    case("mean", [x3], lambda x: x.mean(dims, keepdim=keep) if dims else x.mean(), [0], dims=dims, keepdim=keep)
case("sum", [i3], lambda x: x.sum([1]), dims=[1], keepdim=False)
case("sum", [u8], lambda x: x.sum(), dims=[], keepdim=False)
case("sum", [b2], lambda x: x.sum([1], keepdim=True), dims=[1], keepdim=True)
case("sum", [randn(2, 0, 3)], lambda x: x.sum([1]), dims=[1], keepdim=False)
case("sum", [with_nan], lambda x: x.sum([1]), dims=[1], keepdim=False)
case("sum", [i3], lambda x: x.sum([0], dtype=torch.float64), dims=[0], keepdim=False, dtype="float64")
case("sum", [x3], lambda x: x.sum([2], dtype=torch.float32), dims=[2], keepdim=False, dtype="float32")
case("sum", [randn(6, 7, dtype=torch.bfloat16)], lambda x: x.sum([1]), dims=[1], keepdim=False)
case("sum", [randn(300, dtype=torch.float16)], lambda x: x.sum(), dims=[], keepdim=False)
case("mean", [randn(6, 7, dtype=torch.bfloat16)], lambda x: x.mean([0]), dims=[0], keepdim=False)
case("mean", [randn(2, 0, 3)], lambda x: x.mean([1]), dims=[1], keepdim=False)
case("mean", [i3], lambda x: x.mean([0, 1], dtype=torch.float64), dims=[0, 1], keepdim=False, dtype="float64")

# ---- prod ----
case("prod", [x3], lambda x: x.prod(), [0], dim=None, keepdim=False)
case("prod", [x3], lambda x: x.prod(1, keepdim=True), [0], dim=1, keepdim=True)
case("prod", [zeros_in], lambda x: x.prod(1), [0], dim=1, keepdim=False)
case("prod", [zeros_in], lambda x: x.prod(0), [0], dim=0, keepdim=False)
case("prod", [zeros_in[2:]], lambda x: x.prod(), [0], dim=None, keepdim=False)
case("prod", [torch.tensor([[0., 2., 3.]], dtype=torch.float64)], lambda x: x.prod(), [0], dim=None, keepdim=False)
case("prod", [i3], lambda x: x.prod(2), dim=2, keepdim=False)
case("prod", [b2], lambda x: x.prod(1), dim=1, keepdim=False)
case("prod", [randn(2, 0)], lambda x: x.prod(1), dim=1, keepdim=False)

# ---- var / std and with the mean ----
for dims, corr, keep in [([], 1, False), ([1], 0, False), ([0, 2], 2, True), ([-1], 1, False), ([0, 1, 2], 0, False)]:
    for op in ["var", "std"]:
        case(op, [x3], lambda x: getattr(torch, op)(x, dims or None, correction=corr, keepdim=keep), [0], dims=dims,
             correction=corr, keepdim=keep)
    for op in ["var_mean", "std_mean"]:
        case(op, [x3], lambda x: getattr(torch, op)(x, dims or None, correction=corr, keepdim=keep), [0], dims=dims,
             correction=corr, keepdim=keep)
case("var", [randn(4, 1)], lambda x: x.var([1]), dims=[1], correction=1, keepdim=False)
case("var", [randn(5, 3, dtype=torch.bfloat16)], lambda x: x.var([0]), dims=[0], correction=1, keepdim=False)
case("std", [randn(1000, dtype=torch.float32) * 1e-3 + 1e4], lambda x: x.std(), dims=[], correction=1, keepdim=False)

# ---- norms ----
for p in [0, 1, 2, 3.5, INF, -INF, -1.5]:
    for dims, keep in [([], False), ([1], True), ([0, 2], False)]:
        nz = x3.clone()
        nz[0, 0, 0] = 0.0
        case("norm", [nz], lambda x: torch.norm(x, p, dims, keepdim=keep) if dims else torch.norm(x, p), [0] if p != 0 else None,
             p=p, dims=dims, keepdim=keep)
case("norm", [ties], lambda x: torch.norm(x, INF, 1), [0], p=INF, dims=[1], keepdim=False)
case("norm", [torch.zeros(2, 3, dtype=torch.float64)], lambda x: torch.norm(x, 2, 1), [0], p=2, dims=[1], keepdim=False)
case("norm_fro", [x3], lambda x: torch.norm(x, "fro", [0, 1]), [0], dims=[0, 1], keepdim=False)
case("vector_norm", [x3.float()], lambda x: torch.linalg.vector_norm(x, 2, [1], dtype=torch.float64), ord=2, dims=[1],
     keepdim=False, dtype="float64")
case("vector_norm", [randn(4, 6, dtype=torch.bfloat16)], lambda x: torch.linalg.vector_norm(x, 1, [1]), ord=1, dims=[1],
     keepdim=False)
for ord_ in ["fro", 1, -1, INF, -INF]:
    case("matrix_norm", [x3], lambda x: torch.linalg.matrix_norm(x, ord_), [0] if ord_ == "fro" else None, ord=ord_,
         dims=[-2, -1], keepdim=False)
    case("matrix_norm", [x3], lambda x: torch.linalg.matrix_norm(x, ord_, (2, 0), keepdim=True), [0], ord=ord_,
         dims=[2, 0], keepdim=True)

# ---- logsumexp ----
case("logsumexp", [x3 * 30], lambda x: torch.logsumexp(x, [1]), [0], dims=[1], keepdim=False)
case("logsumexp", [x3], lambda x: torch.logsumexp(x, [0, 2], keepdim=True), [0], dims=[0, 2], keepdim=True)
case("logsumexp", [torch.tensor([[-INF, -INF], [INF, 1.0], [1000., 1000.]], dtype=torch.float64)],
     lambda x: torch.logsumexp(x, [1]), dims=[1], keepdim=False)
case("logsumexp", [i3], lambda x: torch.logsumexp(x, [2]), dims=[2], keepdim=False)

# ---- cumsum / cumprod ----
for d in [0, 1, -1]:
    case("cumsum", [x3], lambda x: torch.cumsum(x, d), [0], dim=d)
    case("cumprod", [x3], lambda x: torch.cumprod(x, d), [0], dim=d)
case("cumprod", [zeros_in], lambda x: torch.cumprod(x, 1), [0], dim=1)
case("cumprod", [zeros_in], lambda x: torch.cumprod(x, 0), [0], dim=0)
case("cumprod", [torch.tensor([2., 0., 3., 0., 4.], dtype=torch.float64)], lambda x: torch.cumprod(x, 0), [0], dim=0)
case("cumsum", [i3], lambda x: torch.cumsum(x, 1), dim=1)
case("cumsum", [b2], lambda x: torch.cumsum(x, 1), dim=1)
case("cumsum", [u8], lambda x: torch.cumsum(x, 0, dtype=torch.float32), dim=0, dtype="float32")
case("cumprod", [i3], lambda x: torch.cumprod(x, 2), dim=2)

# ---- extremes ----
for src in [x3]:
    for dims, keep in [([], False), ([1], False), ([0, 2], True)]:
        case("amax", [src], lambda x: torch.amax(x, dims, keep), [0], dims=dims, keepdim=keep)
        case("amin", [src], lambda x: torch.amin(x, dims, keep), [0], dims=dims, keepdim=keep)
for op in ["amax", "amin"]:
    case(op, [ties], lambda x: getattr(torch, op)(x, [1]), [0], dims=[1], keepdim=False)
    case(op, [ties], lambda x: getattr(torch, op)(x), [0], dims=[], keepdim=False)
    case(op, [with_nan], lambda x: getattr(torch, op)(x, [1]), dims=[1], keepdim=False)
    case(op, [i3], lambda x: getattr(torch, op)(x, [0]), dims=[0], keepdim=False)
    case(op, [b2], lambda x: getattr(torch, op)(x, [1]), dims=[1], keepdim=False)
    case(op, [randn(2, 0)], lambda x: getattr(torch, op)(x, [0]), dims=[0], keepdim=False)
for op in ["max", "min"]:
    case(op + "_all", [ties], lambda x: getattr(torch, op)(x), [0])
    case(op + "_all", [with_nan], lambda x: getattr(torch, op)(x))
    for src, g in [(x3, [0]), (ties, [0]), (with_nan, None), (i3, None), (b2, None)]:
        case(op + "_dim", [src], lambda x: getattr(torch, op)(x, 1), g, dim=1, keepdim=False)
    case(op + "_dim", [x3], lambda x: getattr(torch, op)(x, -1, keepdim=True), [0], dim=-1, keepdim=True)
for op in ["argmax", "argmin"]:
    for src in [x3, ties, with_nan, i3]:
        case(op, [src], lambda x: getattr(torch, op)(x, 1), dim=1, keepdim=False)
        case(op, [src], lambda x: getattr(torch, op)(x), dim=None, keepdim=False)
    case(op, [x3], lambda x: getattr(torch, op)(x, 0, keepdim=True), dim=0, keepdim=True)
    case(op, [x3], lambda x: getattr(torch, op)(x, keepdim=True), dim=None, keepdim=True)

# ---- median ----
med_ties = torch.tensor([[3., 1., 3., 1.], [2., 2., 1., 2.], [4., 4., 4., 4.], [5., 1., 2., 9.]], dtype=torch.float64)
for op in ["median", "nanmedian"]:
    for src, g in [(x3, [0]), (med_ties, [0]), (with_nan, None), (i3, None)]:
        case(op + "_all", [src], lambda x: getattr(torch, op)(x), g)
        case(op + "_dim", [src], lambda x: getattr(torch, op)(x, 1), g, dim=1, keepdim=False)
    case(op + "_dim", [x3], lambda x: getattr(torch, op)(x, 0, keepdim=True), [0], dim=0, keepdim=True)
    case(op + "_dim", [torch.tensor([[NAN, NAN], [1., NAN]], dtype=torch.float64)], lambda x: getattr(torch, op)(x, 1),
         dim=1, keepdim=False)
    case(op + "_all", [torch.zeros(0, dtype=torch.float64)], lambda x: getattr(torch, op)(x))

# ---- logical ----
for op in ["any", "all"]:
    for src in [with_nan, u8, b2, zeros_in, i3]:
        case(op + "_all", [src], lambda x: getattr(torch, op)(x))
        case(op + "_dim", [src], lambda x: getattr(torch, op)(x, 1), dim=1, keepdim=False)
    case(op + "_dim", [b2], lambda x: getattr(torch, op)(x, 0, keepdim=True), dim=0, keepdim=True)
    case(op + "_dim", [randn(2, 0)], lambda x: getattr(torch, op)(x, 1), dim=1, keepdim=False)
for src in [zeros_in, i3, b2, with_nan]:
    case("count_nonzero", [src], lambda x: torch.count_nonzero(x), dims=[])
    case("count_nonzero", [src], lambda x: torch.count_nonzero(x, 0), dims=[0])
    case("count_nonzero", [src], lambda x: torch.count_nonzero(x, [0, 1]), dims=[0, 1])

# ---- linear algebra ----
A, B, C = randn(3, 4), randn(4, 5), randn(3, 5)
case("addmm", [C, A, B], lambda c, a, b: torch.addmm(c, a, b), [0, 1, 2], beta=1, alpha=1)
case("addmm", [randn(5), A, B], lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=-2), [0, 1, 2], beta=0.5, alpha=-2)
case("addmm", [torch.full((3, 5), NAN, dtype=torch.float64), A, B], lambda c, a, b: torch.addmm(c, a, b, beta=0), beta=0,
     alpha=1)
b1, b2_, bs = randn(2, 3, 4), randn(2, 4, 5), randn(3, 5)
case("addbmm", [bs, b1, b2_], lambda c, a, b: torch.addbmm(c, a, b, beta=2, alpha=0.5), [0, 1, 2], beta=2, alpha=0.5)
case("baddbmm", [randn(2, 3, 5), b1, b2_], lambda c, a, b: torch.baddbmm(c, a, b, beta=-1, alpha=3), [0, 1, 2], beta=-1,
     alpha=3)
case("baddbmm", [randn(1, 5), b1, b2_], lambda c, a, b: torch.baddbmm(c, a, b), [0, 1, 2], beta=1, alpha=1)
case("dot", [randn(7), randn(7)], lambda a, b: torch.dot(a, b), [0, 1])
case("mv", [randn(3, 4), randn(4)], lambda a, b: torch.mv(a, b), [0, 1])
case("outer", [randn(3), randn(4)], lambda a, b: torch.outer(a, b), [0, 1])
case("outer", [ints(3), randn(2)], lambda a, b: torch.outer(a, b))
case("tensordot", [randn(2, 3, 4), randn(3, 4, 5)], lambda a, b: torch.tensordot(a, b, 2), [0, 1], dims=2)
case("tensordot", [randn(2, 3, 4), randn(4, 2, 5)], lambda a, b: torch.tensordot(a, b, ([2, 0], [0, 1])), [0, 1],
     dims_a=[2, 0], dims_b=[0, 1])
case("tensordot", [randn(2, 3), randn(4)], lambda a, b: torch.tensordot(a, b, 0), [0, 1], dims=0)

einsums = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ij->...ji", [(2, 3, 4)]),
    ("b...,b->...", [(3, 2, 2), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ij,ij->i", [(1, 3), (4, 3)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("Ab,bA->A", [(3, 4), (4, 3)]),
    ("ijk,ikj->i", [(2, 3, 3), (2, 3, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
]
for eq, shapes in einsums:
    ops = [randn(*s) for s in shapes]
    case("einsum", ops, lambda *xs: torch.einsum(eq, *xs), list(range(len(ops))), equation=eq)
case("einsum", [ints(3, 4), ints(4, 2)], lambda a, b: torch.einsum("ij,jk->ik", a, b), equation="ij,jk->ik")

out = {"torch_version": torch.__version__, "cases": cases}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reduce_reference.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
print(f"wrote {len(cases)} cases to {path}")
