#!/usr/bin/python3
"""gradring's GEMMs (bench_ops sgemm and bgemm rows) against torch.mm, on a CUDA device.

Runs apps/bench_ops --device cuda --ops sgemm,bgemm --json and torch.mm on the same shapes,
dtypes and transposes, alternating the two for --rounds rounds and keeping each side's best.
Both sides time a run as --iters back-to-back calls between two device synchronisations (a
training step's products run back to back, so this is the rate that matters; one call per
run would measure launch-and-wait latency) and keep the best of --repeat runs. float32 runs
without TF32 on both sides (torch.backends.cuda.matmul.allow_tf32 = False, PyTorch's default);
bfloat16 on tensor cores with float32 accumulation. PyTorch runs in a child process under
--python, a command line: on the GPU kit the image's torch runs with its own libraries.

Issue 31's target: bfloat16 >= 0.9x torch.mm's rate at 1024^3 and 4096^3.

    bash .gpu/run.sh python3 bench/compare_gemm.py --bench bench_ops \\
        --python "env -u LD_LIBRARY_PATH python3" [--rounds 3] [--iters 20] [--repeat 10]
"""
import argparse
import json
import shlex
import subprocess
import sys
import time

TARGETS = [("bgemm", "1024x1024x1024"), ("bgemm", "4096x4096x4096")]


def parse_shape(op, shape):
    """'MxNxK[,A^T|,B^T]' -> (M, N, K, trans_a, trans_b), as bench_ops labels its rows."""
    dims, _, flag = shape.partition(",")
    m, n, k = (int(x) for x in dims.split("x"))
    return m, n, k, flag == "A^T", flag == "B^T"


# ---------------------------------------------------------------- torch side (child process)
def torch_worker(spec):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device(spec["device"])
    # --device cpu checks the script on a machine without a GPU; nothing to wait for there.
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    rows = []
    for op, shape in spec["rows"]:
        m, n, k, ta, tb = parse_shape(op, shape)
        dt = torch.bfloat16 if op == "bgemm" else torch.float32
        g = torch.Generator().manual_seed(0)
        a = torch.randn(*((k, m) if ta else (m, k)), generator=g).to(dev, dt)
        b = torch.randn(*((n, k) if tb else (k, n)), generator=g).to(dev, dt)
        x, y = (a.t() if ta else a), (b.t() if tb else b)
        for _ in range(3):
            torch.mm(x, y)
        sync()
        best = 1e30
        for _ in range(spec["repeat"]):
            t0 = time.perf_counter()
            for _ in range(spec["iters"]):
                torch.mm(x, y)
            sync()
            best = min(best, (time.perf_counter() - t0) / spec["iters"])
        rows.append({"op": op, "shape": shape, "ms": best * 1e3, "gflops": 2.0 * m * n * k / best / 1e9})
    print(json.dumps({"torch": torch.__version__, "rows": rows}))


# ---------------------------------------------------------------- driver
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/apps/bench_ops")
    ap.add_argument("--python", default=sys.executable, help="command line of the python with torch")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--ops", default="sgemm,bgemm")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return torch_worker(json.loads(args.worker))
    ours, theirs, version = {}, {}, "?"
    for _ in range(args.rounds):
        out = subprocess.run([args.bench, "--json", "--device", args.device, "--ops", args.ops, "--repeat",
                              str(args.repeat), "--iters", str(args.iters)], check=True, capture_output=True,
                             text=True).stdout
        rows = json.loads(out.strip().splitlines()[-1])["results"]
        for r in rows:
            key = (r["op"], r["shape"])
            ours[key] = max(ours.get(key, 0.0), r["gflops"])
        spec = {"device": args.device, "rows": [list(k) for k in ours], "repeat": args.repeat, "iters": args.iters}
        out = subprocess.run(shlex.split(args.python) + [__file__, "--worker", json.dumps(spec)], check=True,
                             capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        version = result["torch"]
        for r in result["rows"]:
            key = (r["op"], r["shape"])
            theirs[key] = max(theirs.get(key, 0.0), r["gflops"])
    print(f"torch {version}, {args.device}, best of {args.rounds} rounds x {args.repeat} runs x {args.iters} calls; "
          "TFLOP/s")
    print(f"{'op':6} {'shape':28} {'gradring':>9} {'torch':>9} {'ratio':>6}")
    ok = True
    for key in ours:
        g, p = ours[key] / 1e3, theirs.get(key, float("nan")) / 1e3
        ratio = g / p if p > 0 else float("nan")
        mark = ""
        if key in TARGETS:
            good = ratio >= 0.9
            ok = ok and good
            mark = "  target >= 0.90: " + ("met" if good else "NOT met")
        print(f"{key[0]:6} {key[1]:28} {g:9.1f} {p:9.1f} {ratio:6.2f}{mark}")
    print("ratio = gradring rate / torch.mm rate;", "targets met" if ok else "targets NOT met")


if __name__ == "__main__":
    main()
