#!/usr/bin/python3
"""Reference trajectories for gradring's optimizers, made with PyTorch (python3-torch).

A small float64 problem, loss = mean((X W^T + b - Y)^2) + 0.1 * sum(W^4), is optimised for
6 steps by each optimizer configuration; the parameters after every step are recorded.
Also recorded: learning rates of StepLR and CosineAnnealingLR over several epochs, and
clip_grad_norm_ results for three norm types.

Run: /usr/bin/python3 tests/data/make_optim_reference.py  (writes optim_reference.json)
"""
import json
import math
import os

import torch

torch.manual_seed(7)
torch.set_default_dtype(torch.float64)
X = torch.randn(5, 4)
Y = torch.randn(5, 3)
W0 = torch.randn(3, 4) * 0.5
B0 = torch.randn(3) * 0.5
STEPS = 6


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def loss_fn(w, b):
    return ((X @ w.t() + b - Y) ** 2).mean() + 0.1 * (w ** 4).sum()


def trajectory(make):
    w = W0.clone().requires_grad_(True)
    b = B0.clone().requires_grad_(True)
    opt = make([w, b])
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss_fn(w, b).backward()
        opt.step()
        out.append({"w": flat(w), "b": flat(b)})
    return out


optim = torch.optim
configs = {
    "sgd": lambda p: optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda p: optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True),
    "adam": lambda p: optim.Adam(p, lr=0.01),
    "adam_wd_amsgrad": lambda p: optim.Adam(p, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True),
    "adamw": lambda p: optim.AdamW(p, lr=0.01),
    "adamw_amsgrad": lambda p: optim.AdamW(p, lr=0.03, weight_decay=0.05, amsgrad=True),
    "adadelta": lambda p: optim.Adadelta(p),
    "adadelta_wd": lambda p: optim.Adadelta(p, lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.02),
}


def lrs(make_sched, epochs):
    w = torch.zeros(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    sched = make_sched(opt)
    out = []
    for _ in range(epochs):
        opt.step()
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out


def clip(norm_type):
    ps = [torch.zeros(3, 2, requires_grad=True), torch.zeros(4, requires_grad=True)]
    g = torch.arange(10, dtype=torch.float64) - 4.5
    ps[0].grad = g[:6].reshape(3, 2).clone()
    ps[1].grad = g[6:].clone()
    total = torch.nn.utils.clip_grad_norm_(ps, max_norm=2.0, norm_type=norm_type)
    return {"norm_type": "inf" if math.isinf(norm_type) else norm_type, "total": float(total),
            "grads": [flat(p.grad) for p in ps]}


ref = {
    "torch_version": torch.__version__,
    "X": flat(X), "Y": flat(Y), "W0": flat(W0), "B0": flat(B0),
    "trajectories": {name: trajectory(make) for name, make in configs.items()},
    "step_lr": lrs(lambda o: optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5), 10),
    "cosine_lr": lrs(lambda o: optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.01), 13),
    "clip": [clip(2.0), clip(1.0), clip(float("inf"))],
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_reference.json")
with open(out, "w") as f:
    json.dump(ref, f)
print("wrote", out)
