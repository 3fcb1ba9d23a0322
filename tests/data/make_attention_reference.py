#!/work/venv/bin/python
"""Reference values for gradring's scaled_dot_product_attention, made with PyTorch's
F.scaled_dot_product_attention (float64, CPU): inputs, output, and the gradients of query,
key and value (and of a float mask) for a fixed upstream gradient.

Needs current PyTorch: Debian's python3-torch 1.13 has no F.scaled_dot_product_attention.
Run: /work/venv/bin/python tests/data/make_attention_reference.py  (writes attention_reference.json)
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(2026)


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def case(name, q, k, v, mask=None, is_causal=False, scale=None):
    q, k, v = (torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in (q, k, v))
    m = None
    if mask is not None:
        kind, shape = mask
        if kind == "bool":
            m = torch.rand(*shape) > 0.3
            m[..., 0] = True  # every query sees key 0
        else:
            m = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=is_causal, scale=scale)
    grad = torch.randn_like(out)
    wrt = [q, k, v] + ([m] if m is not None and m.dtype == torch.float64 else [])
    grads = torch.autograd.grad(out, wrt, grad)
    rec = {"name": name, "query": flat(q), "key": flat(k), "value": flat(v), "is_causal": is_causal,
           "scale": scale, "grad": flat(grad), "out": flat(out),
           "grad_query": flat(grads[0]), "grad_key": flat(grads[1]), "grad_value": flat(grads[2])}
    if m is not None:
        rec["mask"] = flat(m.to(torch.float64))
        rec["mask_dtype"] = "bool" if m.dtype == torch.bool else "float64"
        if len(grads) == 4:
            rec["grad_mask"] = flat(grads[3])
    return rec


cases = [
    case("plain", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)),
    case("causal L < S", (1, 2, 6, 4), (1, 2, 9, 4), (1, 2, 9, 3), is_causal=True),
    case("causal L > S", (2, 9, 4), (2, 5, 4), (2, 5, 6), is_causal=True),
    case("bool mask", (2, 2, 6, 5), (2, 2, 8, 5), (2, 2, 8, 5), mask=("bool", (2, 1, 6, 8))),
    case("float mask, scale", (3, 4, 6), (3, 5, 6), (3, 5, 2), mask=("float", (4, 5)), scale=0.4),
    case("broadcast batch", (2, 3, 4, 8), (1, 3, 6, 8), (6, 8)),
    case("off the tile grid", (1, 100, 16), (1, 130, 16), (1, 130, 8), is_causal=True),
]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print("wrote", path, len(cases), "cases")
