#!/work/venv/bin/python
"""Reference values for gradring's bfloat16 matrix products and CPU autocast, made with PyTorch.

Uses current PyTorch (2.15, /work/venv/bin/python): its CPU bfloat16 GEMM (float32
accumulation, one rounding to bfloat16) and torch.autocast("cpu", dtype=torch.bfloat16).
Inputs are random values rounded to bfloat16, stored exactly as floats. Cases:
- mm: torch.mm of two bfloat16 matrices (b transposed when "trans_b"), a bfloat16 result;
- linear_autocast: F.linear of float32 x, weight, bias under autocast: a bfloat16 result,
  and the float32 gradients of x and weight for an upstream gradient of ones.
tests/core/test_gemm_bf16.cpp and tests/autograd/test_autocast.cpp compare.

Run: /work/venv/bin/python tests/data/make_bf16_reference.py  (writes bf16_reference.json)
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(17)


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().double().reshape(-1).tolist()}


def bf16_values(*shape):
    return torch.randn(*shape).to(torch.bfloat16)


cases = []
for (m, k, n, trans_b) in [(7, 33, 5, False), (24, 128, 40, False), (13, 300, 20, True), (20, 64, 70, True)]:
    a = bf16_values(m, k)
    b = bf16_values(n, k) if trans_b else bf16_values(k, n)
    out = torch.mm(a, b.t() if trans_b else b)
    assert out.dtype == torch.bfloat16
    cases.append({"name": "mm", "trans_b": trans_b, "a": flat(a), "b": flat(b), "out": flat(out)})

for (rows, fin, fout) in [(6, 20, 12), (17, 64, 24)]:
    x = bf16_values(rows, fin).float().requires_grad_(True)
    w = bf16_values(fout, fin).float().requires_grad_(True)
    bias = bf16_values(fout).float().requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = F.linear(x, w, bias)
    assert y.dtype == torch.bfloat16
    y.float().sum().backward()
    cases.append({"name": "linear_autocast", "x": flat(x), "weight": flat(w), "bias": flat(bias), "out": flat(y),
                  "grad_x": flat(x.grad), "grad_weight": flat(w.grad), "grad_bias": flat(bias.grad)})

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bf16_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print("wrote", path, len(cases), "cases")
