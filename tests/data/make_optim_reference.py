#!/work/venv/bin/python
"""Reference trajectories for gradring's optimizers and schedulers, made with PyTorch.

A small float64 problem, loss = mean((X W^T + b - Y)^2) + 0.1 * sum(W^4), is optimised for
8 steps by each optimizer configuration; the parameters after every step are recorded.
LBFGS runs its steps with a closure; "groups" runs two parameter groups with their own
options. Also recorded: the learning rates of every LR scheduler (two parameter groups,
right after construction and after every step; OneCycleLR also the momentum), and
clip_grad_norm_ results for three norm types.

Run: /work/venv/bin/python tests/data/make_optim_reference.py  (writes optim_reference.json)
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
STEPS = 8


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def loss_fn(w, b):
    return ((X @ w.t() + b - Y) ** 2).mean() + 0.1 * (w ** 4).sum()


def trajectory(make):
    w = W0.clone().requires_grad_(True)
    b = B0.clone().requires_grad_(True)
    opt = make([w, b])
    out = []
    def closure():
        opt.zero_grad()
        loss = loss_fn(w, b)
        loss.backward()
        return loss

    for _ in range(STEPS):
        if isinstance(opt, optim.LBFGS):
            opt.step(closure)
        else:
            closure()
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
    "rmsprop": lambda p: optim.RMSprop(p, lr=0.01),
    "rmsprop_centered_momentum": lambda p: optim.RMSprop(p, lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.01,
                                                         momentum=0.8, centered=True),
    "adagrad": lambda p: optim.Adagrad(p, lr=0.1),
    "adagrad_decay": lambda p: optim.Adagrad(p, lr=0.2, lr_decay=0.1, weight_decay=0.05,
                                             initial_accumulator_value=0.5, eps=1e-8),
    "adamax": lambda p: optim.Adamax(p),
    "adamax_wd": lambda p: optim.Adamax(p, lr=0.05, betas=(0.7, 0.9), eps=1e-6, weight_decay=0.1),
    "nadam": lambda p: optim.NAdam(p, lr=0.01),
    "nadam_wd": lambda p: optim.NAdam(p, lr=0.02, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01),
    "nadam_decoupled": lambda p: optim.NAdam(p, lr=0.02, weight_decay=0.1, decoupled_weight_decay=True),
    "radam": lambda p: optim.RAdam(p, lr=0.01),
    "radam_rectified": lambda p: optim.RAdam(p, lr=0.02, betas=(0.8, 0.9), weight_decay=0.1),
    "radam_decoupled": lambda p: optim.RAdam(p, lr=0.02, betas=(0.8, 0.9), weight_decay=0.1,
                                             decoupled_weight_decay=True),
    "lbfgs": lambda p: optim.LBFGS(p, lr=0.5, max_iter=4, history_size=3),
    "lbfgs_wolfe": lambda p: optim.LBFGS(p, lr=1, max_iter=5, line_search_fn="strong_wolfe"),
    "groups": lambda p: optim.Adam([{"params": [p[0]]}, {"params": [p[1]], "lr": 0.05, "betas": (0.5, 0.9),
                                                          "weight_decay": 0.1}], lr=0.01),
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


def groups_opt(kind):
    w0 = torch.zeros(1, requires_grad=True)
    w1 = torch.zeros(1, requires_grad=True)
    if kind == "adam":
        return optim.Adam([{"params": [w0]}, {"params": [w1], "lr": 0.05}], lr=0.1, betas=(0.9, 0.99))
    return optim.SGD([{"params": [w0]}, {"params": [w1], "lr": 0.05}], lr=0.1, momentum=0.9)


def schedule(make_sched, epochs, kind="sgd", metrics=None):
    """lr of both groups (and momentum, or beta1 for Adam) after construction and each step."""
    opt = groups_opt(kind)
    sched = make_sched(opt)

    def record():
        g = opt.param_groups
        m = [x["betas"][0] if kind == "adam" else x["momentum"] for x in g]
        return {"lr": [x["lr"] for x in g], "momentum": m}

    out = [record()]
    for e in range(epochs):
        opt.step()
        if metrics is not None:
            sched.step(metrics[e])
        else:
            sched.step()
        out.append(record())
    return out


S = optim.lr_scheduler
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85]
schedules = {
    "lambda": schedule(lambda o: S.LambdaLR(o, lambda e: 0.95 ** e), 8),
    "lambda_per_group": schedule(lambda o: S.LambdaLR(o, [lambda e: 1.0 / (e + 1), lambda e: 0.5 * e + 1]), 6),
    "multiplicative": schedule(lambda o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.8), 8),
    "step": schedule(lambda o: S.StepLR(o, step_size=3, gamma=0.5), 10),
    "multistep": schedule(lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.5), 10),
    "exponential": schedule(lambda o: S.ExponentialLR(o, gamma=0.9), 8),
    "linear": schedule(lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4), 8),
    "linear_down": schedule(lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=5), 8),
    "cosine": schedule(lambda o: S.CosineAnnealingLR(o, T_max=4, eta_min=0.01), 13),
    "warm_restarts": schedule(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), 16),
    "warm_restarts_1": schedule(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4), 10),
    "one_cycle": schedule(lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=10), 10),
    "one_cycle_linear_3phase": schedule(
        lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.4], total_steps=12, pct_start=0.25, anneal_strategy="linear",
                               three_phase=True, div_factor=10.0, final_div_factor=100.0,
                               base_momentum=0.8, max_momentum=0.9), 12),
    "one_cycle_adam": schedule(lambda o: S.OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=4), 8, kind="adam"),
    "sequential": schedule(lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.ExponentialLR(o, gamma=0.9)], milestones=[3]), 10),
    "sequential_3": schedule(lambda o: S.SequentialLR(
        o, [S.ExponentialLR(o, gamma=0.5), S.StepLR(o, step_size=2, gamma=0.1),
            S.CosineAnnealingLR(o, T_max=3)], milestones=[2, 5]), 10),
    "plateau": schedule(lambda o: S.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=2, threshold=0.01,
                                                      cooldown=1, min_lr=0.01), 15, metrics=PLATEAU_METRICS),
    "plateau_max_abs": schedule(lambda o: S.ReduceLROnPlateau(o, mode="max", factor=0.1, patience=1,
                                                              threshold=0.05, threshold_mode="abs",
                                                              min_lr=[0.0, 0.004]), 15,
                                metrics=[-x for x in PLATEAU_METRICS]),
}


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
    "plateau_metrics": PLATEAU_METRICS,
    "schedules": schedules,
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_reference.json")
with open(out, "w") as f:
    json.dump(ref, f)
print("wrote", out)
