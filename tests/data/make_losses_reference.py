#!/usr/bin/python3
"""Reference values for gradring's losses (nn/functional/loss.h), made with PyTorch.

Uses Debian's python3-torch 1.13 (/usr/bin/python3). Each case evaluates one loss in float64
on fixed random tensors, backpropagates a fixed upstream gradient and records the output
and the gradient of every floating input. tests/nn/test_losses.cpp builds the same loss by
case name and compares.

Run: /usr/bin/python3 tests/data/make_losses_reference.py  (writes losses_reference.json)
"""
import json
import math
import os

import torch
import torch.nn.functional as F

torch.manual_seed(2024)
torch.set_default_dtype(torch.float64)
cases = []


def flat(t):
    """{shape, values}; a NaN or infinite value (torch's gradients at the edges) is null."""
    values = [v if math.isfinite(v) else None for v in t.detach().reshape(-1).tolist()]
    return {"shape": list(t.shape), "values": values,
            "int": not t.is_floating_point()}


def case(name, fn, *tensors, ngrad=None):
    """The first ngrad tensors (all when None) that are floating require grad; weights do not."""
    ngrad = len(tensors) if ngrad is None else ngrad
    leaves = [t.clone().requires_grad_(True) if t.is_floating_point() and i < ngrad else t
              for i, t in enumerate(tensors)]
    out = fn(*leaves)
    g = torch.randn(out.shape)
    out.backward(g)
    cases.append({"name": name, "tensors": [flat(t) for t in tensors], "output": flat(out), "upstream": flat(g),
                  "grads": [flat(t.grad) if t.requires_grad else None for t in leaves]})


def cls(shape, c, ignore=None):
    t = torch.randint(0, c, shape)
    if ignore is not None:
        t.view(-1)[1] = ignore
    return t


x = torch.randn(4, 5)
y = torch.randn(4, 5)
for red in ["mean", "sum", "none"]:
    case(f"l1_{red}", lambda a, b: F.l1_loss(a, b, reduction=red), x, y)
    case(f"mse_{red}", lambda a, b: F.mse_loss(a, b, reduction=red), x, y)
    case(f"smooth_l1_{red}", lambda a, b: F.smooth_l1_loss(a, b, reduction=red, beta=0.7), x, y)
    case(f"huber_{red}", lambda a, b: F.huber_loss(a, b, reduction=red, delta=0.6), x, y)
case("smooth_l1_beta0", lambda a, b: F.smooth_l1_loss(a, b, beta=0.0), x, y)
case("smooth_l1_default", lambda a, b: F.smooth_l1_loss(a, b), x, y)
case("huber_default", lambda a, b: F.huber_loss(a, b), x, y)

logits = torch.randn(6, 4)
w = torch.rand(4) + 0.5
for red in ["mean", "sum", "none"]:
    case(f"cross_entropy_{red}", lambda a, t: F.cross_entropy(a, t, reduction=red), logits, cls([6], 4))
    case(f"cross_entropy_weight_ignore_{red}",
         lambda a, t, w: F.cross_entropy(a, t, weight=w, ignore_index=2, reduction=red), logits, cls([6], 4), w, ngrad=2)
    case(f"cross_entropy_smoothing_{red}",
         lambda a, t: F.cross_entropy(a, t, label_smoothing=0.15, ignore_index=-100, reduction=red), logits,
         cls([6], 4, ignore=-100))
    case(f"cross_entropy_smoothing_weight_{red}",
         lambda a, t, w: F.cross_entropy(a, t, weight=w, label_smoothing=0.3, ignore_index=1, reduction=red),
         logits, cls([6], 4, ignore=1), w, ngrad=2)
    case(f"cross_entropy_probs_{red}", lambda a, p: F.cross_entropy(a, p, reduction=red), logits,
         torch.softmax(torch.randn(6, 4), 1))
    case(f"cross_entropy_probs_weight_smoothing_{red}",
         lambda a, p, w: F.cross_entropy(a, p, weight=w, label_smoothing=0.2, reduction=red), logits,
         torch.softmax(torch.randn(6, 4), 1), w, ngrad=2)
    case(f"cross_entropy_4d_{red}", lambda a, t: F.cross_entropy(a, t, reduction=red), torch.randn(2, 3, 4, 2),
         cls([2, 4, 2], 3))
    case(f"nll_4d_weight_{red}", lambda a, t, w: F.nll_loss(a, t, weight=w, reduction=red),
         torch.randn(2, 4, 3, 2), cls([2, 3, 2], 4), w, ngrad=2)
    case(f"nll_{red}", lambda a, t: F.nll_loss(a, t, reduction=red), torch.randn(6, 4).log_softmax(1), cls([6], 4))
case("cross_entropy_1d", lambda a, t: F.cross_entropy(a, t), torch.randn(5), torch.tensor(3))
case("cross_entropy_1d_probs", lambda a, p: F.cross_entropy(a, p, label_smoothing=0.1), torch.randn(5),
     torch.softmax(torch.randn(5), 0))

probs = torch.rand(4, 3) * 0.9 + 0.05
bt = torch.rand(4, 3)
bw = torch.rand(4, 3)
for red in ["mean", "sum", "none"]:
    case(f"bce_{red}", lambda a, t: F.binary_cross_entropy(a, t, reduction=red), probs, bt)
    case(f"bce_weight_{red}", lambda a, t, w: F.binary_cross_entropy(a, t, weight=w, reduction=red), probs, bt, bw, ngrad=2)
    case(f"bce_logits_{red}", lambda a, t: F.binary_cross_entropy_with_logits(a, t, reduction=red),
         torch.randn(4, 3) * 3, bt)
    case(f"bce_logits_weights_{red}",
         lambda a, t, w, pw: F.binary_cross_entropy_with_logits(a, t, weight=w, pos_weight=pw, reduction=red),
         torch.randn(4, 3) * 3, bt, bw, torch.rand(3) * 2, ngrad=2)
case("bce_logits_large", lambda a, t: F.binary_cross_entropy_with_logits(a, t, reduction="sum"),
     torch.tensor([[-800.0, -30.0, 0.0, 30.0, 800.0]]), torch.tensor([[1.0, 0.0, 0.5, 1.0, 0.0]]))
case("bce_saturated", lambda a, t: F.binary_cross_entropy(a, t, reduction="none"), torch.tensor([0.0, 1.0, 0.5]),
     torch.tensor([1.0, 0.0, 0.5]))

logp = torch.randn(3, 5).log_softmax(1)
q = torch.softmax(torch.randn(3, 5), 1)
q0 = q.clone()
q0[0, 1] = 0.0
for red in ["mean", "sum", "none", "batchmean"]:
    case(f"kl_div_{red}", lambda a, t: F.kl_div(a, t, reduction=red), logp, q0)
    case(f"kl_div_log_target_{red}", lambda a, t: F.kl_div(a, t, reduction=red, log_target=True), logp, q.log())

x1 = torch.randn(5, 4)
x2 = torch.randn(5, 4)
tpm = torch.tensor([1, -1, 1, -1, -1])
for red in ["mean", "sum", "none"]:
    case(f"cosine_embedding_{red}", lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.2, reduction=red), x1,
         x2, tpm)
    case(f"margin_ranking_{red}", lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3, reduction=red),
         torch.randn(5), torch.randn(5), tpm.double())
    case(f"triplet_margin_{red}", lambda a, p, n: F.triplet_margin_loss(a, p, n, reduction=red), x1, x2,
         torch.randn(5, 4))
case("cosine_embedding_1d", lambda a, b, t: F.cosine_embedding_loss(a, b, t), torch.randn(4), torch.randn(4),
     torch.tensor(-1))
case("triplet_margin_p1_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0, p=1, eps=1e-3, swap=True),
     x1, x2, torch.randn(5, 4))
case("triplet_margin_1d", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0), torch.randn(4), torch.randn(4),
     torch.randn(4))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "losses_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {out}")
