#!/usr/bin/python3
"""Reference values for gradring's shape and indexing ops, made with PyTorch (Debian's python3-torch).

Each case runs one op on fixed inputs and records the inputs and every output (values and index
tensors). Cases named in GRAD_CASES also run backward with a fixed upstream gradient on the
first output and record the gradient of each floating input. Index expressions for
Tensor::index / index_put_ are recorded entry by entry ("int", "slice", "none", "ellipsis",
"bool", "tensor") so the C++ side can build the same gr::indexing::TensorIndex list.
tests/autograd/test_index_reference.cpp replays every case by name.

NaN and infinities are written as the strings "nan", "inf" and "-inf" (JSON has no literal).

Run: /usr/bin/python3 tests/data/make_index_reference.py  (writes index_reference.json)
"""
import json
import math
import os

import torch

torch.manual_seed(15)
torch.set_default_dtype(torch.float64)

L = torch.long


def number(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def flat(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
            "values": [number(v) for v in t.detach().reshape(-1).tolist()]}


def encode_index(entries):
    out = []
    for e in entries:
        if e is None:
            out.append({"kind": "none"})
        elif e is Ellipsis:
            out.append({"kind": "ellipsis"})
        elif isinstance(e, bool):
            out.append({"kind": "bool", "value": e})
        elif isinstance(e, int):
            out.append({"kind": "int", "value": e})
        elif isinstance(e, slice):
            out.append({"kind": "slice", "start": e.start, "stop": e.stop, "step": e.step})
        else:
            out.append({"kind": "tensor", "tensor": flat(e)})
    return out


cases = []


def case(name, inputs, fn, grad=(), index=None, extra=None):
    leaves = {k: (v.clone().requires_grad_(True) if k in grad else v.clone()) for k, v in inputs.items()}
    result = fn(**leaves)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    record = {"name": name, "inputs": {k: flat(v) for k, v in inputs.items()}, "outputs": [flat(o) for o in outs]}
    if index is not None:
        record["index"] = encode_index(index)
    if extra is not None:
        record.update(extra)
    if grad:
        upstream = torch.randn(outs[0].shape)
        outs[0].backward(upstream)
        record["upstream"] = flat(upstream)
        record["grads"] = {k: flat(leaves[k].grad) for k in grad}
    cases.append(record)


def randn(*shape):
    return torch.randn(*shape)


# ---- shape ----
x34 = randn(3, 4)
x234 = randn(2, 3, 4)
case("view_as", {"x": randn(2, 6), "other": randn(3, 4)}, lambda x, other: x.view_as(other), grad=("x",))
case("reshape_as_transposed", {"x": x34, "other": randn(6, 2)}, lambda x, other: x.t().reshape_as(other), grad=("x",))
case("broadcast_to", {"x": randn(3, 1)}, lambda x: x.broadcast_to((2, 3, 4)), grad=("x",))
case("repeat", {"x": randn(2, 3)}, lambda x: x.repeat(2, 1, 3), grad=("x",))
case("repeat_interleave_int", {"x": x34}, lambda x: x.repeat_interleave(2), grad=("x",))
case("repeat_interleave_int_dim", {"x": x34}, lambda x: x.repeat_interleave(3, dim=1), grad=("x",))
case("repeat_interleave_tensor_dim", {"x": x34, "r": torch.tensor([2, 0, 1], dtype=L)},
     lambda x, r: x.repeat_interleave(r, dim=0), grad=("x",))
case("repeat_interleave_index", {"r": torch.tensor([1, 0, 3, 2], dtype=L)}, lambda r: torch.repeat_interleave(r))
case("chunk_7_by_3", {"x": randn(7, 2)}, lambda x: x.chunk(3), grad=("x",))
case("chunk_5_by_4_dim1", {"x": randn(2, 5)}, lambda x: x.chunk(4, dim=1))
case("split_size", {"x": randn(5, 3)}, lambda x: x.split(2), grad=("x",))
case("split_sizes", {"x": randn(2, 6)}, lambda x: x.split([1, 3, 2], dim=1), grad=("x",))
case("tensor_split_sections", {"x": randn(7, 2)}, lambda x: x.tensor_split(3))
case("tensor_split_indices", {"x": randn(2, 7)}, lambda x: x.tensor_split([1, 5, -1], dim=1))
case("unbind_dim1", {"x": x234}, lambda x: x.unbind(1), grad=("x",))
case("flip", {"x": x234}, lambda x: x.flip(0, 2), grad=("x",))
case("flip_last", {"x": x34}, lambda x: x.flip(-1))
case("roll_dims", {"x": x234}, lambda x: x.roll((1, -3), (0, 2)), grad=("x",))
case("roll_flat", {"x": x34}, lambda x: x.roll(5), grad=("x",))
case("roll_big_negative", {"x": x34}, lambda x: x.roll(-9, 1))
case("tril", {"x": randn(4, 5)}, lambda x: x.tril(), grad=("x",))
case("tril_minus1", {"x": randn(4, 5)}, lambda x: x.tril(-1))
case("triu_1_batched", {"x": randn(2, 3, 4)}, lambda x: x.triu(1), grad=("x",))
case("triu_minus2", {"x": randn(5, 3)}, lambda x: x.triu(-2))
case("diag_vector", {"x": randn(3)}, lambda x: torch.diag(x), grad=("x",))
case("diag_vector_offset", {"x": randn(3)}, lambda x: torch.diag(x, 2))
case("diag_vector_negative_offset", {"x": randn(2)}, lambda x: torch.diag(x, -1), grad=("x",))
case("diag_matrix", {"x": randn(3, 4)}, lambda x: torch.diag(x, 1), grad=("x",))
case("diag_matrix_negative", {"x": randn(4, 3)}, lambda x: torch.diag(x, -2))
case("diagonal_3d", {"x": randn(2, 3, 4)}, lambda x: x.diagonal(1, 0, 2), grad=("x",))
case("diagonal_negative_dims", {"x": randn(2, 3, 4)}, lambda x: x.diagonal(-1, -1, -2), grad=("x",))
case("diagonal_empty", {"x": randn(2, 3)}, lambda x: x.diagonal(5))
case("movedim_int", {"x": x234}, lambda x: x.movedim(0, -1), grad=("x",))
case("movedim_list", {"x": randn(2, 3, 4, 5)}, lambda x: x.movedim((0, 3), (2, 0)))
case("unflatten", {"x": randn(2, 12)}, lambda x: x.unflatten(1, (3, -1, 2)), grad=("x",))
case("squeeze_dims", {"x": randn(1, 3, 1, 1)}, lambda x: x.squeeze(3).squeeze(1).squeeze(0))  # squeeze((0, 1, 3)) in torch 2
case("unsqueeze", {"x": x34}, lambda x: x.unsqueeze(-2))
case("meshgrid_ij", {"a": randn(2), "b": randn(3), "c": randn(1)}, lambda a, b, c: torch.meshgrid(a, b, c, indexing="ij"))
case("meshgrid_xy", {"a": randn(2), "b": randn(3), "c": randn(4)}, lambda a, b, c: torch.meshgrid(a, b, c, indexing="xy"),
     grad=("a",))
case("narrow_copy", {"x": x34}, lambda x: x.narrow_copy(1, 1, 2))
case("stack_dim1", {"a": randn(2, 3), "b": randn(2, 3)}, lambda a, b: torch.stack([a, b], 1), grad=("a", "b"))

# ---- indexing along a dim ----
case("index_select_dim0", {"x": randn(5, 3), "i": torch.tensor([4, 0, 0, 2], dtype=L)},
     lambda x, i: x.index_select(0, i), grad=("x",))
case("index_select_dim1", {"x": randn(2, 5, 3), "i": torch.tensor([1, 4], dtype=L)}, lambda x, i: x.index_select(1, i),
     grad=("x",))
case("index_select_empty", {"x": randn(4, 3), "i": torch.tensor([], dtype=L)}, lambda x, i: x.index_select(0, i))
case("gather_dim1", {"x": randn(3, 5), "i": torch.tensor([[0, 4], [2, 2], [1, 3]], dtype=L)},
     lambda x, i: x.gather(1, i), grad=("x",))
case("gather_dim0_smaller", {"x": randn(4, 3), "i": torch.tensor([[3, 0], [1, 3]], dtype=L)},
     lambda x, i: x.gather(0, i), grad=("x",))
case("gather_3d_last", {"x": randn(2, 3, 4), "i": torch.randint(0, 4, (2, 3, 6))}, lambda x, i: x.gather(-1, i),
     grad=("x",))
case("scatter_src", {"x": randn(3, 5), "i": torch.tensor([[0, 4], [2, 1], [3, 0]], dtype=L), "src": randn(3, 2)},
     lambda x, i, src: x.scatter(1, i, src), grad=("x", "src"))
case("scatter_value", {"x": randn(4, 3), "i": torch.tensor([[1, 0, 3]], dtype=L)}, lambda x, i: x.scatter(0, i, 2.5),
     grad=("x",))
case("scatter_reduce_add", {"x": randn(3, 4), "i": torch.tensor([[1, 1, 3]], dtype=L), "src": randn(2, 3)},
     lambda x, i, src: x.scatter(1, i, src, reduce="add"))
case("scatter_reduce_multiply", {"x": randn(3, 4), "i": torch.tensor([[1, 1], [0, 3]], dtype=L), "src": randn(2, 3)},
     lambda x, i, src: x.scatter(1, i, src, reduce="multiply"))
case("scatter_add_duplicates", {"x": randn(3, 4), "i": torch.tensor([[2, 2, 0, 2], [1, 1, 1, 0]], dtype=L),
                                "src": randn(2, 4)},
     lambda x, i, src: x.scatter_add(0, i, src), grad=("x", "src"))
case("scatter_add_dim1", {"x": randn(2, 6), "i": torch.tensor([[5, 0, 5], [1, 1, 2]], dtype=L), "src": randn(2, 3)},
     lambda x, i, src: x.scatter_add(1, i, src), grad=("x", "src"))
case("index_add_alpha", {"x": randn(5, 3), "i": torch.tensor([0, 4, 0], dtype=L), "src": randn(3, 3)},
     lambda x, i, src: x.index_add(0, i, src, alpha=-1.5), grad=("x", "src"))
case("index_add_dim1", {"x": randn(2, 4), "i": torch.tensor([3, 3, 1], dtype=L), "src": randn(2, 3)},
     lambda x, i, src: x.index_add(1, i, src), grad=("x", "src"))
case("index_copy", {"x": randn(4, 3), "i": torch.tensor([3, 0], dtype=L), "src": randn(2, 3)},
     lambda x, i, src: x.index_copy(0, i, src), grad=("x", "src"))
case("index_fill_negative", {"x": randn(3, 4), "i": torch.tensor([-1, 0], dtype=L)}, lambda x, i: x.index_fill(1, i, -2.0),
     grad=("x",))
case("index_fill_tensor_value", {"x": randn(3, 4), "i": torch.tensor([2, 2], dtype=L), "v": torch.tensor(0.75)},
     lambda x, i, v: x.index_fill(0, i, v), grad=("x", "v"))

# ---- masks and selection ----
mask34 = torch.rand(3, 4) > 0.5
case("masked_fill_broadcast", {"x": randn(2, 3, 4), "m": mask34}, lambda x, m: x.masked_fill(m, -1e9), grad=("x",))
case("masked_fill_inf", {"x": randn(3, 4), "m": mask34}, lambda x, m: x.masked_fill(m, float("-inf")))
case("masked_fill_mask_bigger", {"x": randn(4), "m": mask34}, lambda x, m: x.masked_fill(m, 3.0), grad=("x",))
case("masked_fill_tensor_value", {"x": randn(3, 4), "m": mask34, "v": torch.tensor(-0.5)},
     lambda x, m, v: x.masked_fill(m, v), grad=("x", "v"))
case("masked_fill_int", {"x": torch.arange(12, dtype=L).reshape(3, 4), "m": mask34}, lambda x, m: x.masked_fill(m, 7))
case("masked_select_broadcast", {"x": randn(2, 1, 4), "m": mask34}, lambda x, m: x.masked_select(m), grad=("x",))
case("masked_scatter", {"x": randn(3, 4), "m": mask34, "src": randn(13)}, lambda x, m, src: x.masked_scatter(m, src),
     grad=("x", "src"))
cond = torch.rand(3, 4) > 0.4
case("where_tensors", {"c": cond, "a": randn(3, 4), "b": randn(1, 4)}, lambda c, a, b: torch.where(c, a, b),
     grad=("a", "b"))
case("where_scalar_tensor", {"c": cond, "b": randn(3, 4)}, lambda c, b: torch.where(c, 2.5, b), grad=("b",))
case("where_tensor_scalar", {"c": cond, "a": randn(3, 4)}, lambda c, a: torch.where(c, a, -1.0), grad=("a",))
torch.set_default_dtype(torch.float32)  # numbers alone make tensors of the default dtype (float32 in gradring)
case("where_scalars_float", {"c": cond}, lambda c: torch.where(c, 1.5, 0))
case("where_scalars_int", {"c": cond}, lambda c: torch.where(c, 3, -4))
case("where_int_tensor_float_scalar", {"c": cond, "a": torch.arange(12, dtype=L).reshape(3, 4)},
     lambda c, a: torch.where(c, a, 0.5))
torch.set_default_dtype(torch.float64)
case("where_condition", {"c": torch.tensor([[True, False, True], [False, False, True]])}, lambda c: torch.where(c))
case("nonzero", {"x": torch.tensor([[0.0, 1.5, 0.0], [float("nan"), 0.0, -2.0]])}, lambda x: x.nonzero())
case("nonzero_3d", {"x": (torch.rand(2, 3, 2) > 0.5).long()}, lambda x: x.nonzero())
case("nonzero_empty", {"x": torch.zeros(2, 3)}, lambda x: x.nonzero())
case("argwhere", {"x": torch.tensor([0, 3, 0, 1], dtype=L)}, lambda x: torch.argwhere(x))

# ---- sorting ----
ties = torch.randint(0, 4, (3, 40)).double()
ties[0, 5] = float("nan")
ties[1, 7] = float("nan")
case("sort_stable_ties", {"x": ties}, lambda x: torch.sort(x, stable=True), grad=("x",))
case("sort_stable_ties_descending", {"x": ties}, lambda x: torch.sort(x, dim=1, descending=True, stable=True))
case("sort_unstable_ties", {"x": ties}, lambda x: torch.sort(x))
case("sort_unstable_ties_descending", {"x": ties}, lambda x: torch.sort(x, descending=True))
case("sort_dim0", {"x": randn(5, 3)}, lambda x: torch.sort(x, 0), grad=("x",))
case("sort_long_ties", {"x": torch.randint(0, 3, (50,))}, lambda x: torch.sort(x, stable=True))
case("argsort_descending", {"x": randn(4, 6)}, lambda x: torch.argsort(x, dim=1, descending=True))
case("argsort_ties", {"x": ties}, lambda x: torch.argsort(x))
case("topk_largest", {"x": randn(3, 10)}, lambda x: torch.topk(x, 3), grad=("x",))
case("topk_smallest_dim0", {"x": randn(6, 4)}, lambda x: torch.topk(x, 2, dim=0, largest=False), grad=("x",))
case("topk_ties_nth_element", {"x": ties}, lambda x: torch.topk(x, 7))
case("topk_ties_partial_sort", {"x": torch.randint(0, 5, (2, 300)).double()}, lambda x: torch.topk(x, 4))
case("topk_ties_smallest", {"x": ties}, lambda x: torch.topk(x, 9, largest=False))
case("topk_unsorted", {"x": ties}, lambda x: torch.topk(x, 6, sorted=False))
case("topk_k0", {"x": randn(2, 3)}, lambda x: torch.topk(x, 0))
case("one_hot_infer", {"x": torch.tensor([[0, 2], [3, 1]], dtype=L)}, lambda x: torch.nn.functional.one_hot(x))
case("one_hot_classes", {"x": torch.tensor([1, 0, 1], dtype=L)}, lambda x: torch.nn.functional.one_hot(x, 4))

# ---- Tensor::index / index_put_ (Python's x[...] and x[...] = v) ----
x45 = randn(4, 5)
x3456 = randn(3, 4, 5, 6)


def get_case(name, x, idx, grad=True):
    case(name, {"x": x}, lambda x: x[tuple(idx)], grad=("x",) if grad else (), index=idx)


i2 = torch.tensor([2, 0, -1], dtype=L)
get_case("basic_int_slice", x45, [1, slice(None, 3)])
get_case("basic_negative_int", x45, [-1])
get_case("basic_slice_step", x45, [slice(1, None, 2), slice(None, None, 3)])
get_case("basic_slice_negative_bounds", x45, [slice(-3, -1), slice(-100, 100)])
get_case("basic_none_ellipsis", x3456, [None, Ellipsis, 1, None])
get_case("basic_ellipsis_middle", x3456, [0, Ellipsis, slice(1, 3)])
get_case("basic_empty_slice", x45, [slice(3, 1)])
get_case("bool_true", x45, [True])
get_case("bool_false", x45, [slice(None), False])
get_case("tensor_1d", x45, [i2])
get_case("tensor_negative_dim1", x45, [slice(None), torch.tensor([-5, 4, -1], dtype=L)])
get_case("tensor_2d_index", x45, [torch.tensor([[0, 3], [1, 1]], dtype=L)])
get_case("tensors_broadcast_adjacent", x3456,
         [slice(None), torch.tensor([[0], [3]], dtype=L), torch.tensor([1, 4, 2], dtype=L)])
get_case("tensors_separated_move_front", x3456, [torch.tensor([0, 2], dtype=L), slice(None), torch.tensor([4, 1], dtype=L)])
get_case("tensors_separated_by_int_front", x3456, [torch.tensor([1, 2], dtype=L), 0, torch.tensor([3, 0], dtype=L)])
get_case("tensor_then_slice_then_none", x3456, [slice(None), torch.tensor([3, 3, 0], dtype=L), slice(1, 4), None])
get_case("tensors_duplicates_grad", x45, [torch.tensor([1, 1, 3], dtype=L), torch.tensor([0, 0, 2], dtype=L)])
get_case("mask_full", x45, [x45 > 0.3])
get_case("mask_rows", x45, [torch.tensor([True, False, True, True])])
get_case("mask_then_index", x3456, [torch.rand(3, 4) > 0.5, torch.tensor([1], dtype=L)])
get_case("mask_after_slice", x3456, [slice(None), torch.tensor([False, True, True, False]), 2])
get_case("mask_empty_result", x45, [x45 > 100])
get_case("scalar_tensor_int", x45, [torch.tensor(2), slice(None, 2)])
get_case("scalar_tensor_bool", x45, [torch.tensor(True), 1])
get_case("empty_index_tensor", x45, [torch.tensor([], dtype=L)])
get_case("ellipsis_only", x45, [Ellipsis], grad=False)


def put_case(name, x, idx, value, accumulate=None):
    def run(x, value):
        y = x.clone()
        if accumulate is None:
            y[tuple(idx)] = value
        else:
            y.index_put_(tuple(idx), value, accumulate=accumulate)
        return y
    case(name, {"x": x, "value": value}, run, grad=("x", "value"), index=idx,
         extra={"accumulate": accumulate} if accumulate is not None else None)


put_case("put_basic_row", x45, [1], randn(5))
put_case("put_basic_broadcast_leading_ones", x45, [slice(1, 3)], randn(1, 1, 5))
put_case("put_scalar_like", x45, [slice(None), 2], torch.tensor(7.0))
put_case("put_ellipsis_column", x3456, [Ellipsis, 0], randn(5))
put_case("put_tensor_rows", x45, [torch.tensor([3, 0], dtype=L)], randn(2, 5))
put_case("put_mask", x45, [x45 > 0], torch.tensor(-1.0))
put_case("put_tensors_separated", x3456, [torch.tensor([0, 2], dtype=L), slice(None), torch.tensor([4, 1], dtype=L)],
         randn(4, 6))
put_case("put_bool_false", x45, [False], torch.tensor(3.0))
put_case("put_accumulate_duplicates", x45, [torch.tensor([1, 1, 3, 1], dtype=L), torch.tensor([0, 0, 4, 2], dtype=L)],
         randn(4), accumulate=True)
put_case("put_accumulate_rows", x45, [torch.tensor([2, 2, 0], dtype=L)], randn(3, 5), accumulate=True)
put_case("put_slice_tensor_broadcast", x3456, [slice(None), torch.tensor([3, -1], dtype=L)], randn(2, 5, 6))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "index_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"), allow_nan=False)
print(f"wrote {len(cases)} cases to {path}")
