#!/work/venv-torch/bin/python
"""Reference values for gradring's bfloat16 matrix products, CPU autocast and bfloat16 ops,
made with PyTorch.

Uses current PyTorch (2.15, /work/venv-torch/bin/python): its CPU bfloat16 GEMM (float32
accumulation, one rounding to bfloat16), torch.autocast("cpu", dtype=torch.bfloat16) and its
bfloat16 CPU kernels. Inputs are random values rounded to bfloat16, stored exactly as floats.
Cases (each later one draws its inputs after the earlier ones, so adding cases at the end
leaves the values of the others unchanged):
- mm: torch.mm of two bfloat16 matrices (b transposed when "trans_b"), a bfloat16 result;
- linear_autocast: F.linear of float32 x, weight, bias under autocast: a bfloat16 result,
  and the float32 gradients of x and weight for an upstream gradient of ones;
- sdpa_autocast: F.scaled_dot_product_attention of float32 q, k, v [2, 3, 6, 8] under
  autocast (causal or not): the bfloat16 output and the float32 gradients of q, k, v for a
  bfloat16 upstream gradient "up";
- layer_norm_bf16: F.layer_norm of bfloat16 x [5, 33] (values around 3 +- 10), weight, bias;
- linear_softmax_bf16: a bfloat16 training step: loss = sum(softmax(F.linear(x, w), 1) * t)
  in bfloat16, its value and the bfloat16 gradient of w.
tests/core/test_gemm_bf16.cpp, tests/autograd/test_autocast.cpp, tests/autograd/test_norm_ops.cpp
and tests/core/test_dtypes.cpp compare.

Run: /work/venv-torch/bin/python tests/data/make_bf16_reference.py  (writes bf16_reference.json)
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

for causal in (True, False):
    q, k, v = (bf16_values(2, 3, 6, 8).float().requires_grad_(True) for _ in range(3))
    up = bf16_values(2, 3, 6, 8).float()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert out.dtype == torch.bfloat16
    (out.float() * up).sum().backward()
    cases.append({"name": "sdpa_autocast", "causal": causal, "q": flat(q), "k": flat(k), "v": flat(v), "up": flat(up),
                  "out": flat(out), "grad_q": flat(q.grad), "grad_k": flat(k.grad), "grad_v": flat(v.grad)})

x = (torch.randn(5, 33) * 10 + 3).to(torch.bfloat16)
w, b = bf16_values(33), bf16_values(33)
y = F.layer_norm(x, [33], w, b)
assert y.dtype == torch.bfloat16
cases.append({"name": "layer_norm_bf16", "x": flat(x), "weight": flat(w), "bias": flat(b), "out": flat(y)})

x, t = bf16_values(8, 5), bf16_values(8, 3)
w = bf16_values(3, 5).requires_grad_(True)
loss = (F.linear(x, w).softmax(1) * t).sum()
assert loss.dtype == torch.bfloat16
loss.backward()
cases.append({"name": "linear_softmax_bf16", "x": flat(x), "weight": flat(w), "t": flat(t), "loss": flat(loss),
              "grad_weight": flat(w.grad)})

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bf16_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print("wrote", path, len(cases), "cases")
