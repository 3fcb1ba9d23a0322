#!/usr/bin/env python3
"""gradring's fused scaled_dot_product_attention against PyTorch's, CPU, float32.

Runs apps/bench_attention --json and PyTorch's F.scaled_dot_product_attention (forward, and
forward + backward via torch.autograd.grad) on the same shapes, alternating the two for
--rounds rounds (the machine is shared) and keeping each side's median over the rounds.
Needs current PyTorch (Debian's 1.13 has no F.scaled_dot_product_attention): --python PY runs
the PyTorch side under PY (default: the interpreter running this script):

    python3 bench/compare_attention.py --python VENV/bin/python --bench build/apps/bench_attention \
        [--T 256,512,1024] [--B 1] [--H 8] [--D 64] [--threads 1] [--rounds 3] [--repeat 7]

The target (issue 16): gradring faster than PyTorch at T = 256, 512 and 1024, head dim 64,
causal, 1 thread, forward + backward.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

peers.run_under_python_option()  # --python PY: this script again under PY, before torch is imported
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def torch_times(B, H, T, D, causal, repeat):
    g = torch.Generator().manual_seed(0)
    q, k, v, go = (torch.randn(B, H, T, D, generator=g) for _ in range(4))
    qg, kg, vg = (x.clone().requires_grad_(True) for x in (q, k, v))

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def fwdbwd():
        out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
        torch.autograd.grad(out, (qg, kg, vg), go)

    result = []
    for fn in (fwd, fwdbwd):
        fn()
        ms = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            ms.append((time.perf_counter() - t0) * 1e3)
        result.append(statistics.median(ms))
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/apps/bench_attention")
    ap.add_argument("--python", help="the Python whose torch is the peer (default: this interpreter)")
    ap.add_argument("--T", default="256,512,1024")
    ap.add_argument("--B", type=int, default=1)
    ap.add_argument("--H", type=int, default=8)
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    lengths = [int(t) for t in args.T.split(",")]
    ours = {T: ([], []) for T in lengths}
    theirs = {T: ([], []) for T in lengths}
    for _ in range(args.rounds):
        out = subprocess.run([args.bench, "--json", "--T", args.T, "--B", str(args.B), "--H", str(args.H), "--D",
                              str(args.D), "--threads", str(args.threads), "--repeat", str(args.repeat)],
                             check=True, capture_output=True, text=True).stdout
        for row in json.loads(out.strip().splitlines()[-1])["rows"]:
            ours[row["T"]][0].append(row["fwd_ms"])
            ours[row["T"]][1].append(row["fwdbwd_ms"])
        for T in lengths:
            f, fb = torch_times(args.B, args.H, T, args.D, True, args.repeat)
            theirs[T][0].append(f)
            theirs[T][1].append(fb)
    print(f"machine: {peers.machine()}")
    print(f"torch {torch.__version__} ({sys.executable}), {args.threads} thread(s), B={args.B} H={args.H} D={args.D}, causal, float32, "
          f"medians of {args.rounds} rounds x {args.repeat} runs")
    print(f"{'T':>6} {'gradring fwd':>13} {'torch fwd':>10} {'ratio':>6} {'gradring f+b':>13} {'torch f+b':>10} {'ratio':>6}")
    ok = True
    for T in lengths:
        gf, gfb = (statistics.median(x) for x in ours[T])
        tf, tfb = (statistics.median(x) for x in theirs[T])
        ok = ok and gfb < tfb
        print(f"{T:>6} {gf:>13.3f} {tf:>10.3f} {tf / gf:>6.2f} {gfb:>13.3f} {tfb:>10.3f} {tfb / gfb:>6.2f}")
    print("ratio = torch time / gradring time (> 1: gradring faster);",
          "target met" if ok else "target NOT met", "(forward + backward faster at every T)")


if __name__ == "__main__":
    main()
