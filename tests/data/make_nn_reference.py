#!/usr/bin/python3
"""Reference values for gradring's functional nn ops, made with PyTorch (Debian's python3-torch).

Each case calls one torch.nn.functional op in float64 on fixed inputs with fixed arguments,
then runs backward with a fixed upstream gradient, and records the inputs, the outputs
(max-pool indices and updated BatchNorm running statistics included) and the gradients of
every differentiable input. tests/autograd/test_nn_reference.cpp replays each case with
gradring and compares to 1e-10.

Run: /usr/bin/python3 tests/data/make_nn_reference.py  (writes nn_reference.json)
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(2024)
torch.set_default_dtype(torch.float64)


def flat(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": t.detach().reshape(-1).tolist()}


def run(op, args, inputs, fn, differentiable):
    """fn(**inputs) returns the output (or a tuple whose first item is differentiable)."""
    leaves = {k: (v.clone().requires_grad_(True) if k in differentiable else v.clone()) for k, v in inputs.items()}
    result = fn(**leaves)
    out = result[0] if isinstance(result, tuple) else result
    upstream = torch.randn(out.shape)
    out.backward(upstream)
    outputs = {"output": flat(out)}
    if isinstance(result, tuple):
        outputs["indices"] = flat(result[1])
    for k in ("running_mean", "running_var"):
        if k in leaves and leaves[k] is not None:
            outputs[k] = flat(leaves[k])  # updated in place by training batch_norm
    return {
        "op": op,
        "args": args,
        "inputs": {k: flat(v) for k, v in inputs.items()},
        "upstream": flat(upstream),
        "outputs": outputs,
        "grads": {k: flat(leaves[k].grad) for k in differentiable},
    }


cases = []

# ---- pooling ----
for shape, kernel, stride, padding, dilation, ceil in [
    ((2, 3, 6, 5), [2, 2], [2, 2], [0, 0], [1, 1], False),
    ((2, 2, 7, 7), [3, 3], [2, 2], [1, 1], [1, 1], True),
    ((1, 2, 7, 6), [3, 2], [2, 1], [1, 0], [1, 2], True),
    ((3, 6, 5), [2, 3], [1, 2], [0, 1], [2, 1], False),
]:
    args = {"kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation, "ceil_mode": ceil}
    cases.append(run("max_pool2d", args, {"input": torch.randn(shape)},
                     lambda input: F.max_pool2d(input, kernel, stride, padding, dilation, ceil, return_indices=True),
                     ["input"]))

for shape, kernel, stride, padding, ceil, include_pad in [
    ((2, 3, 6, 5), [2, 2], [2, 2], [0, 0], False, True),
    ((2, 2, 7, 7), [3, 3], [2, 2], [1, 1], True, True),
    ((2, 2, 7, 7), [3, 3], [2, 2], [1, 1], True, False),
    ((1, 2, 6, 5), [3, 2], [2, 3], [1, 1], False, False),
    ((3, 5, 6), [2, 2], [1, 1], [1, 0], True, True),
]:
    args = {"kernel_size": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil,
            "count_include_pad": include_pad}
    cases.append(run("avg_pool2d", args, {"input": torch.randn(shape)},
                     lambda input: F.avg_pool2d(input, kernel, stride, padding, ceil, include_pad), ["input"]))

for shape, size in [((2, 3, 7, 5), [3, 2]), ((1, 2, 5, 7), [5, 3]), ((2, 4, 6), [1, 1]), ((2, 2, 3, 4), [5, 6])]:
    cases.append(run("adaptive_avg_pool2d", {"output_size": size}, {"input": torch.randn(shape)},
                     lambda input: F.adaptive_avg_pool2d(input, size), ["input"]))

# ---- batch_norm ----
for shape, training, affine, momentum, eps in [
    ((4, 3, 3, 2), True, True, 0.1, 1e-5),
    ((4, 3, 3, 2), True, False, 0.3, 1e-3),
    ((6, 4), True, True, 0.1, 1e-5),
    ((3, 2, 5), False, True, 0.1, 1e-5),
    ((2, 3, 2, 2), False, False, 0.1, 1e-5),
]:
    c = shape[1]
    inputs = {"input": torch.randn(shape) * 2 + 0.5, "running_mean": torch.randn(c), "running_var": torch.rand(c) + 0.5}
    if affine:
        inputs["weight"] = torch.randn(c)
        inputs["bias"] = torch.randn(c)
    args = {"training": training, "momentum": momentum, "eps": eps, "affine": affine}
    cases.append(run("batch_norm", args, inputs,
                     lambda input, running_mean, running_var, weight=None, bias=None: F.batch_norm(
                         input, running_mean, running_var, weight, bias, training, momentum, eps),
                     ["input", "weight", "bias"] if affine else ["input"]))

# ---- log_softmax ----
for shape, dim in [((4, 5), 1), ((3, 4, 2), 1), ((3, 4, 2), -1), ((6,), 0)]:
    cases.append(run("log_softmax", {"dim": dim}, {"input": torch.randn(shape) * 3},
                     lambda input: F.log_softmax(input, dim), ["input"]))

# ---- nll_loss / cross_entropy ----
REDUCTIONS = ["none", "mean", "sum"]
for op, fn in [("nll_loss", F.nll_loss), ("cross_entropy", F.cross_entropy)]:
    for reduction in REDUCTIONS:
        for weighted in (False, True):
            for ignore_index in (-100, 2):
                n, c = 6, 4
                x = torch.randn(n, c)
                if op == "nll_loss":
                    x = F.log_softmax(x, 1)
                target = torch.tensor([0, 2, 3, 2, 1, 3])
                inputs = {"input": x, "target": target}
                if weighted:
                    inputs["weight"] = torch.rand(c) + 0.5
                args = {"reduction": reduction, "ignore_index": ignore_index, "weighted": weighted}
                cases.append(run(op, args, inputs,
                                 lambda input, target, weight=None: fn(input, target, weight,
                                                                       ignore_index=ignore_index,
                                                                       reduction=reduction),
                                 ["input"]))
    # a single sample: [C] input, 0-d target
    inputs = {"input": torch.randn(5), "target": torch.tensor(3), "weight": torch.rand(5) + 0.5}
    cases.append(run(op, {"reduction": "mean", "ignore_index": -100, "weighted": True}, inputs,
                     lambda input, target, weight: fn(input, target, weight), ["input"]))

# ---- mse_loss ----
for reduction in REDUCTIONS:
    cases.append(run("mse_loss", {"reduction": reduction}, {"input": torch.randn(3, 4), "target": torch.randn(3, 4)},
                     lambda input, target: F.mse_loss(input, target, reduction=reduction), ["input", "target"]))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {out}")
