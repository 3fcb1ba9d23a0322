#!/usr/bin/python3
"""Writes conv_reference.json: PyTorch float64 results for conv2d (output and the input,
weight and bias gradients for a random output gradient) and matmul (2-D and batched
broadcasting, with gradients), used by tests/autograd/test_conv2d.cpp; and for conv1d,
conv_transpose1d, conv_transpose2d, pixel_shuffle and pixel_unshuffle (the same fields),
used by tests/autograd/test_conv_transpose.cpp. (New cases go after the old ones, so the
seeded values of the old ones stay as they were.)

Run with Debian's python (the one that has torch):
    /usr/bin/python3 tests/data/make_conv_reference.py
Tensors are stored as {"shape": [...], "values": [flat row-major values]}; the seed is fixed,
so rerunning gives the same file.
"""
import json
import os

import torch

torch.manual_seed(20240611)
torch.set_default_dtype(torch.float64)


def pack(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "values": t.flatten().tolist()}


# name, input shape, (C_out, kH, kW), stride, padding, dilation, groups, bias
CONV_CASES = [
    ("basic", (2, 3, 7, 6), (4, 3, 3), (1, 1), (0, 0), (1, 1), 1, True),
    ("stride2_pad1", (2, 3, 8, 7), (5, 3, 2), (2, 2), (1, 1), (1, 1), 1, True),
    ("dilation2", (1, 2, 9, 8), (3, 3, 3), (1, 1), (2, 1), (2, 2), 1, True),
    ("groups2", (2, 4, 6, 5), (6, 3, 3), (2, 1), (1, 1), (1, 1), 2, True),
    ("depthwise", (2, 3, 5, 6), (6, 3, 3), (1, 1), (1, 1), (1, 1), 3, False),
    ("pointwise", (3, 5, 4, 4), (2, 1, 1), (1, 1), (0, 0), (1, 1), 1, True),
    ("pointwise_stride2", (2, 4, 5, 5), (3, 1, 1), (2, 2), (0, 0), (1, 1), 1, False),
    ("mixed", (2, 2, 7, 9), (3, 2, 3), (1, 2), (0, 2), (2, 1), 1, False),
    ("big_stride_pad", (1, 2, 5, 5), (2, 2, 2), (3, 2), (2, 1), (1, 2), 2, True),
    ("single_pixel", (2, 3, 3, 3), (4, 3, 3), (1, 1), (0, 0), (1, 1), 1, True),
]

# name, shape of a, shape of b
MATMUL_CASES = [
    ("mm", (3, 4), (4, 5)),
    ("vec_vec", (4,), (4,)),
    ("mat_vec", (3, 4), (4,)),
    ("vec_batched", (4,), (2, 4, 3)),
    ("batched_vec", (2, 3, 4), (4,)),
    ("bmm", (2, 3, 4), (2, 4, 5)),
    ("broadcast", (2, 1, 3, 4), (5, 4, 2)),
    ("broadcast_matrix", (3, 4), (2, 2, 4, 5)),
]


# name, input shape, (C_out, k), stride, padding, dilation, groups, bias
CONV1D_CASES = [
    ("basic", (2, 3, 9), (4, 3), 1, 0, 1, 1, True),
    ("stride2_pad1", (2, 3, 10), (5, 4), 2, 1, 1, 1, True),
    ("dilation3", (1, 2, 12), (3, 3), 1, 2, 3, 1, False),
    ("groups2", (2, 4, 7), (6, 3), 2, 1, 1, 2, True),
    ("depthwise", (2, 3, 8), (6, 3), 1, 1, 1, 3, False),
    ("pointwise", (3, 5, 6), (2, 1), 1, 0, 1, 1, True),
]

# name, input shape, (C_out, kH, kW) or (C_out, k), stride, padding, output_padding, groups,
# dilation, bias: a transposed weight is [C_in, C_out / groups, k...].
CONV_TRANSPOSE2D_CASES = [
    ("basic", (2, 3, 4, 5), (4, 3, 3), (1, 1), (0, 0), (0, 0), 1, (1, 1), True),
    ("stride2_pad1", (2, 3, 4, 4), (2, 4, 4), (2, 2), (1, 1), (0, 0), 1, (1, 1), True),
    ("dcgan_7_to_14", (2, 4, 7, 7), (3, 4, 4), (2, 2), (1, 1), (0, 0), 1, (1, 1), False),
    ("output_padding", (1, 2, 3, 4), (3, 3, 3), (2, 3), (1, 0), (1, 2), 1, (1, 1), True),
    ("dilation2", (2, 2, 4, 3), (3, 3, 2), (1, 2), (2, 1), (0, 0), 1, (2, 2), True),
    ("groups2", (2, 4, 3, 3), (6, 3, 3), (2, 1), (1, 1), (1, 0), 2, (1, 1), True),
    ("depthwise", (1, 3, 4, 4), (3, 3, 3), (1, 1), (1, 1), (0, 0), 3, (1, 1), False),
    ("output_padding_past_stride", (2, 2, 4, 3), (3, 3, 3), (1, 2), (0, 1), (1, 1), 1, (2, 2), True),
    ("noise_to_4x4", (3, 5, 1, 1), (4, 4, 4), (1, 1), (0, 0), (0, 0), 1, (1, 1), False),
]
CONV_TRANSPOSE1D_CASES = [
    ("basic", (2, 3, 6), (4, 3), 1, 0, 0, 1, 1, True),
    ("stride3_pad1_op2", (2, 2, 5), (3, 4), 3, 1, 2, 1, 1, True),
    ("groups2_dilation2", (1, 4, 6), (2, 3), 2, 2, 1, 2, 2, False),
    ("op_past_stride", (2, 2, 5), (3, 3), 1, 1, 1, 1, 2, True),
]

# function, input shape, factor
PIXEL_SHUFFLE_CASES = [
    ("pixel_shuffle", (2, 8, 3, 4), 2),
    ("pixel_shuffle", (2, 1, 9, 2, 3), 3),
    ("pixel_unshuffle", (2, 2, 6, 4), 2),
    ("pixel_unshuffle", (3, 1, 6, 9), 3),
]


def conv_entry(name, in_shape, w_shape, stride, padding, dilation, groups, with_bias):
    c_out, kh, kw = w_shape
    x = torch.randn(*in_shape, requires_grad=True)
    w = torch.randn(c_out, in_shape[1] // groups, kh, kw, requires_grad=True)
    b = torch.randn(c_out, requires_grad=True) if with_bias else None
    y = torch.nn.functional.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    gy = torch.randn_like(y)
    y.backward(gy)
    entry = {
        "name": name, "stride": list(stride), "padding": list(padding), "dilation": list(dilation),
        "groups": groups, "input": pack(x), "weight": pack(w), "output": pack(y), "grad_output": pack(gy),
        "grad_input": pack(x.grad), "grad_weight": pack(w.grad),
    }
    if with_bias:
        entry["bias"] = pack(b)
        entry["grad_bias"] = pack(b.grad)
    return entry


def fill_grads(entry, x, w, b, y):
    gy = torch.randn_like(y)
    y.backward(gy)
    entry.update({"input": pack(x), "weight": pack(w), "output": pack(y), "grad_output": pack(gy),
                  "grad_input": pack(x.grad), "grad_weight": pack(w.grad)})
    if b is not None:
        entry["bias"] = pack(b)
        entry["grad_bias"] = pack(b.grad)
    return entry


def conv1d_entry(name, in_shape, w_shape, stride, padding, dilation, groups, with_bias):
    c_out, k = w_shape
    x = torch.randn(*in_shape, requires_grad=True)
    w = torch.randn(c_out, in_shape[1] // groups, k, requires_grad=True)
    b = torch.randn(c_out, requires_grad=True) if with_bias else None
    y = torch.nn.functional.conv1d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    entry = {"name": name, "stride": [stride], "padding": [padding], "dilation": [dilation], "groups": groups}
    return fill_grads(entry, x, w, b, y)


def conv_transpose_entry(name, in_shape, w_shape, stride, padding, output_padding, groups, dilation, with_bias):
    c_out, kernel = w_shape[0], w_shape[1:]
    f = torch.nn.functional.conv_transpose2d if len(kernel) == 2 else torch.nn.functional.conv_transpose1d
    as_list = lambda v: list(v) if isinstance(v, tuple) else [v]
    x = torch.randn(*in_shape, requires_grad=True)
    w = torch.randn(in_shape[1], c_out // groups, *kernel, requires_grad=True)
    b = torch.randn(c_out, requires_grad=True) if with_bias else None
    y = f(x, w, b, stride=stride, padding=padding, output_padding=output_padding, groups=groups, dilation=dilation)
    entry = {"name": name, "stride": as_list(stride), "padding": as_list(padding),
             "output_padding": as_list(output_padding), "groups": groups, "dilation": as_list(dilation)}
    return fill_grads(entry, x, w, b, y)


def pixel_shuffle_entry(fn, in_shape, factor):
    x = torch.randn(*in_shape, requires_grad=True)
    y = getattr(torch.nn.functional, fn)(x, factor)
    gy = torch.randn_like(y)
    y.backward(gy)
    return {"name": fn, "factor": factor, "input": pack(x), "output": pack(y), "grad_output": pack(gy),
            "grad_input": pack(x.grad)}


def matmul_entry(name, a_shape, b_shape):
    a = torch.randn(*a_shape, requires_grad=True)
    b = torch.randn(*b_shape, requires_grad=True)
    out = torch.matmul(a, b)
    gout = torch.randn_like(out)
    out.backward(gout)
    return {"name": name, "a": pack(a), "b": pack(b), "output": pack(out), "grad_output": pack(gout),
            "grad_a": pack(a.grad), "grad_b": pack(b.grad)}


def main():
    ref = {
        "generator": "tests/data/make_conv_reference.py, torch " + torch.__version__,
        "conv2d": [conv_entry(*c) for c in CONV_CASES],
        "matmul": [matmul_entry(*c) for c in MATMUL_CASES],
    }
    ref["conv1d"] = [conv1d_entry(*c) for c in CONV1D_CASES]
    ref["conv_transpose2d"] = [conv_transpose_entry(*c) for c in CONV_TRANSPOSE2D_CASES]
    ref["conv_transpose1d"] = [conv_transpose_entry(*c) for c in CONV_TRANSPOSE1D_CASES]
    ref["pixel_shuffle"] = [pixel_shuffle_entry(*c) for c in PIXEL_SHUFFLE_CASES]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_reference.json")
    with open(path, "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
