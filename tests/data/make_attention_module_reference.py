#!/work/venv/bin/python
"""Reference values for gradring's nn::MultiheadAttention, made with torch.nn.MultiheadAttention
(float64, eval mode, so no dropout): the state_dict (PyTorch's names), inputs, masks, the
output and attention weights, and the gradients of the query and of in_proj_weight (or
q_proj_weight) for a fixed upstream gradient.

Run: /work/venv/bin/python tests/data/make_attention_module_reference.py
     (writes attention_module_reference.json; current PyTorch, as make_attention_reference.py)
"""
import json
import os

import torch

torch.manual_seed(2027)


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().to(torch.float64).reshape(-1).tolist()}


def case(name, E, H, L, S, N, kdim=None, vdim=None, bias=True, add_bias_kv=False, add_zero_attn=False,
         batch_first=False, kpm=None, attn_mask=None, need_weights=True, average=True, unbatched=False):
    m = torch.nn.MultiheadAttention(E, H, bias=bias, add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn,
                                    kdim=kdim, vdim=vdim, batch_first=batch_first, dtype=torch.float64).eval()
    with torch.no_grad():  # non-zero biases, so the test sees them
        for n, p in m.named_parameters():
            if "bias" in n:
                p.normal_()

    def shape(T, W):
        if unbatched:
            return (T, W)
        return (N, T, W) if batch_first else (T, N, W)

    q = torch.randn(*shape(L, E), dtype=torch.float64, requires_grad=True)
    k = torch.randn(*shape(S, kdim or E), dtype=torch.float64)
    v = torch.randn(*shape(S, vdim or E), dtype=torch.float64)
    kp = None
    if kpm == "bool":
        kp = torch.zeros((S,) if unbatched else (N, S), dtype=torch.bool)
        kp[..., -1] = True
    elif kpm == "float":
        kp = torch.randn((S,) if unbatched else (N, S), dtype=torch.float64)
    am = None
    if attn_mask == "bool":
        am = torch.ones(L, S, dtype=torch.bool).triu(1)  # causal: True = not attended
    elif attn_mask == "float3":
        am = torch.randn(N * H, L, S, dtype=torch.float64)
    out, w = m(q, k, v, key_padding_mask=kp, need_weights=need_weights, attn_mask=am,
               average_attn_weights=average)
    g = torch.randn_like(out)
    wname = "in_proj_weight" if m._qkv_same_embed_dim else "q_proj_weight"
    gq, gw = torch.autograd.grad(out, [q, getattr(m, wname)], g)
    rec = {"name": name, "E": E, "H": H, "kdim": kdim or E, "vdim": vdim or E, "bias": bias,
           "add_bias_kv": add_bias_kv, "add_zero_attn": add_zero_attn, "batch_first": batch_first,
           "need_weights": need_weights, "average": average,
           "state": {n: flat(t) for n, t in m.state_dict().items()},
           "query": flat(q), "key": flat(k), "value": flat(v), "out": flat(out), "grad": flat(g),
           "grad_query": flat(gq), "grad_weight_name": wname, "grad_weight": flat(gw)}
    if w is not None:
        rec["weights"] = flat(w)
    if kp is not None:
        rec["key_padding_mask"] = flat(kp)
        rec["key_padding_mask_dtype"] = "bool" if kp.dtype == torch.bool else "float64"
    if am is not None:
        rec["attn_mask"] = flat(am)
        rec["attn_mask_dtype"] = "bool" if am.dtype == torch.bool else "float64"
    return rec


cases = [
    case("plain", 8, 2, 5, 7, 3),
    case("need_weights=false (fused)", 8, 4, 6, 6, 2, need_weights=False),
    case("per-head weights", 6, 3, 4, 5, 2, average=False),
    case("key_padding_mask bool, causal attn_mask bool", 8, 2, 5, 5, 3, kpm="bool", attn_mask="bool"),
    case("float masks [N*H, L, S], fused", 8, 2, 4, 6, 2, kpm="float", attn_mask="float3", need_weights=False),
    case("kdim, vdim, batch_first", 8, 2, 5, 6, 2, kdim=5, vdim=3, batch_first=True),
    case("bias_kv, zero_attn, no bias", 8, 2, 4, 5, 2, bias=False, add_bias_kv=True, add_zero_attn=True),
    case("bias_kv, zero_attn, key_padding_mask, fused", 8, 2, 4, 5, 2, add_bias_kv=True, add_zero_attn=True,
         kpm="bool", need_weights=False),
    case("unbatched", 6, 2, 3, 4, 1, unbatched=True, kpm="bool"),
]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_module_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
print("wrote", path, len(cases), "cases")
