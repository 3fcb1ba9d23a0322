#!/usr/bin/env python3
"""ResNet-18's CPU training step op by op, gradring (apps/bench_resnet_ops) against PyTorch.

Runs bench_resnet_ops --json and the same rows in PyTorch (--python PY's torch, default this
interpreter's; a venv's bin/python for PyTorch 2.x and oneDNN), alternating for --rounds rounds and keeping
each side's best time per row, then prints them side by side: each convolution of the model
(forward, input gradient, weight gradient, both gradients in one call), batch norm, ReLU, add,
pooling, the head, SGD, zero_grad and whole steps (batch 32, 3x32x32, 1 thread by default).

    python3 bench/compare_resnet_ops.py --python VENV/bin/python [--bench build/apps/bench_resnet_ops]
        [--rounds 2] [--repeat 10] [--threads 1] [--only conv,other,model] [--markdown] [--profile]

--profile also prints torch.profiler's per-op table of 5 PyTorch steps (the gradring side:
bench_resnet_ops --profile).
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
from table_print import print_table  # noqa: E402

peers.run_under_python_option()  # --python PY: this script again under PY, before torch is imported

# (name, count per step, C_in, C_out, H, k, stride, pad, input_grad): apps/bench_resnet_ops.cpp's list.
LAYERS = [
    ("stem 7x7/2", 1, 3, 64, 32, 7, 2, 3, False), ("layer1 3x3", 4, 64, 64, 8, 3, 1, 1, True),
    ("layer2.0.conv1 3x3/2", 1, 64, 128, 8, 3, 2, 1, True), ("layer2 3x3", 3, 128, 128, 4, 3, 1, 1, True),
    ("layer2 downsample 1x1/2", 1, 64, 128, 8, 1, 2, 0, True), ("layer3.0.conv1 3x3/2", 1, 128, 256, 4, 3, 2, 1, True),
    ("layer3 3x3", 3, 256, 256, 2, 3, 1, 1, True), ("layer3 downsample 1x1/2", 1, 128, 256, 4, 1, 2, 0, True),
    ("layer4.0.conv1 3x3/2", 1, 256, 512, 2, 3, 2, 1, True), ("layer4 3x3", 3, 512, 512, 1, 3, 1, 1, True),
    ("layer4 downsample 1x1/2", 1, 256, 512, 2, 1, 2, 0, True)]
# (channels, spatial, batch norms / ReLUs / adds per step at that shape)
ACTS = [(64, 16, 1, 1, 0), (64, 8, 4, 4, 2), (128, 4, 5, 4, 2), (256, 2, 5, 4, 2), (512, 1, 5, 4, 2)]


def best_ms(repeat, fn):
    fn()
    best, total, i = 1e30, 0.0, 0
    while i < repeat or (total < 200 and i < 50 * repeat):
        t0 = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t0) * 1e3
        best, total, i = min(best, ms), total + ms, i + 1
    return best


def torch_rows(N, repeat, steps, only, profile):
    import torch
    import torch.nn.functional as F
    from ddp_torch import ResNet18

    torch.manual_seed(0)
    rows = []
    wanted = lambda s: not only or s in only  # noqa: E731
    if wanted("conv"):
        for name, count, cin, cout, H, k, s, p, ig in LAYERS:
            x, w = torch.randn(N, cin, H, H), torch.randn(cout, cin, k, k)
            Ho = (H + 2 * p - k) // s + 1
            gy = torch.randn(N, cout, Ho, Ho)
            shape = f"{N}x{cin}x{H}x{H},w{cout}x{k}x{k}/s{s}->{Ho}x{Ho}"

            def bwd(mask):
                return lambda: torch.ops.aten.convolution_backward(gy, x, w, None, [s, s], [p, p], [1, 1], False,
                                                                   [0, 0], 1, mask)

            add = lambda what, fn: rows.append({"section": "conv", "name": f"{name} {what}", "shape": shape,  # noqa
                                                 "count": count, "ms": best_ms(repeat, fn)})
            add("fwd", lambda: F.conv2d(x, w, None, s, p))
            if ig:
                add("grad_input", bwd([True, False, False]))
            add("grad_weight", bwd([False, True, False]))
            add("bwd", bwd([ig, True, False]))
    if wanted("other"):
        def pair(name, shape, count, fwd, grad):
            f = best_ms(repeat, fwd)
            fb = best_ms(repeat, lambda: fwd().backward(grad))
            rows.append({"section": "other", "name": f"{name} fwd", "shape": shape, "count": count, "ms": f})
            rows.append({"section": "other", "name": f"{name} bwd", "shape": shape, "count": count, "ms": max(0.0, fb - f)})

        dims = lambda t: "x".join(str(d) for d in t.shape)  # noqa: E731
        for C, H, bn, relu, add in ACTS:
            x = torch.randn(N, C, H, H, requires_grad=True)
            g = torch.randn(N, C, H, H)
            wt, b = torch.ones(C, requires_grad=True), torch.zeros(C, requires_grad=True)
            rm, rv = torch.zeros(C), torch.ones(C)
            pair("batch_norm", dims(x), bn, lambda: F.batch_norm(x, rm, rv, wt, b, True, 0.1, 1e-5), g)
            pair("relu_", dims(x), relu, lambda: (x * 1.0).relu_(), g)
            pair("mul (relu_'s input, subtract)", dims(x), 0, lambda: x * 1.0, g)
            z = torch.randn(N, C, H, H, requires_grad=True)
            pair("add", dims(x), add, lambda: x + z, g)
        x = torch.randn(N, 64, 16, 16, requires_grad=True)
        pair("max_pool2d 3x3/2", dims(x), 1, lambda: F.max_pool2d(x, 3, 2, 1), torch.randn(N, 64, 8, 8))
        x = torch.randn(N, 512, 1, 1, requires_grad=True)
        pair("adaptive_avg_pool2d", dims(x), 1, lambda: F.adaptive_avg_pool2d(x, 1), torch.randn(N, 512, 1, 1))
        x, w = torch.randn(N, 512, requires_grad=True), torch.randn(10, 512, requires_grad=True)
        b, y = torch.randn(10, requires_grad=True), torch.randint(0, 10, (N,))
        pair("linear+log_softmax+nll_loss", dims(x), 1, lambda: F.nll_loss(F.log_softmax(F.linear(x, w, b), 1), y), None)
    if wanted("model"):
        torch.manual_seed(1)
        model = ResNet18()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = torch.randn(N, 3, 32, 32), torch.randint(0, 10, (N,))

        def step():
            opt.zero_grad()
            F.nll_loss(model(x), y).backward()
            opt.step()

        step()
        add = lambda name, shape, ms: rows.append({"section": "model", "name": name, "shape": shape,  # noqa: E731
                                                   "count": 1, "ms": ms})
        add("SGD step (momentum 0.9)", "11.2M params", best_ms(repeat, opt.step))
        add("zero_grad", "62 tensors", best_ms(repeat, opt.zero_grad))
        add("forward", "", best_ms(repeat, lambda: model(x)))
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        add("step (median)", "", times[len(times) // 2])
        add("step (best)", "", times[0])
        if profile:
            from torch.profiler import ProfilerActivity, profile as prof
            with prof(activities=[ProfilerActivity.CPU]) as p:
                for _ in range(5):
                    step()
            print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=40), file=sys.stderr)
    return rows


def keep_best(best, rows):
    for r in rows:
        key = (r["name"], r["shape"])
        if key not in best or r["ms"] < best[key]["ms"]:
            best[key] = r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default="build/apps/bench_resnet_ops")
    ap.add_argument("--python", help="the Python whose torch is the peer (default: this interpreter)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--only", default="", help="sections: conv, other, model (comma-separated)")
    ap.add_argument("--conv-algorithm", default="auto", help="passed to bench_resnet_ops")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--profile", action="store_true", help="print torch.profiler's table of 5 steps (stderr)")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    only = [s for s in a.only.split(",") if s]
    cmd = [a.bench, "--json", "--repeat", str(a.repeat), "--steps", str(a.steps), "--threads", str(a.threads),
           "--batch", str(a.batch), "--conv-algorithm", a.conv_algorithm] + (["--only", a.only] if a.only else [])
    g_best, t_best, order = {}, {}, []
    for r in range(a.rounds):
        rows = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        if not order:
            order = [(x["name"], x["shape"]) for x in rows]
        keep_best(g_best, rows)
        keep_best(t_best, torch_rows(a.batch, a.repeat, a.steps, only, a.profile and r == 0))
    load = os.getloadavg()
    print(f"# machine: {peers.machine()}")
    print(f"# compare_resnet_ops: gradring vs PyTorch {torch.__version__} ({sys.executable}), batch {a.batch}, {a.threads} thread(s), "
          f"best of {a.rounds} rounds x {a.repeat} runs, conv algorithm {a.conv_algorithm}; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    head = ["op", "shape", "count", "gradring ms", "torch ms", "torch/gradring", "gradring per step", "torch per step"]
    lines, tot_g, tot_t = [], 0.0, 0.0
    for key in order:
        g, t = g_best[key], t_best.get(key)
        if t is None:
            continue
        c = g["count"]
        if g["section"] != "model" and "grad_" not in g["name"]:
            tot_g, tot_t = tot_g + g["ms"] * c, tot_t + t["ms"] * c
        ratio = t["ms"] / g["ms"] if g["ms"] > 0 else float("inf")
        lines.append([key[0], key[1], str(c), f"{g['ms']:.3f}", f"{t['ms']:.3f}", f"{ratio:.2f}x",
                      f"{g['ms'] * c:.2f}", f"{t['ms'] * c:.2f}"])
    if tot_g:  # only where per-op rows ran (not with --only model)
        lines.append(["sum of fwd + bwd rows x count", "", "", "", "", f"{tot_t / tot_g:.2f}x",
                      f"{tot_g:.1f}", f"{tot_t:.1f}"])
    print_table(head, lines, a.markdown)


if __name__ == "__main__":
    main()
