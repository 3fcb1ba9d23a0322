#!/usr/bin/python3
"""gradring's fused scaled_dot_product_attention against PyTorch's, on the CPU or a CUDA device.

Runs apps/bench_attention --json and PyTorch's F.scaled_dot_product_attention on the same shapes
and dtype (forward; backward with the graph kept; forward + backward through
torch.autograd.grad), alternating the two for --rounds rounds (the machine may be shared) and
keeping each side's median over the rounds. Both sides time a run as --iters back-to-back calls
between two device synchronisations and keep the median of --repeat runs. PyTorch runs in a
child process under --python, a command line: this script needs no torch itself, and on the
GPU kit the image's torch runs with its own libraries (`env -u LD_LIBRARY_PATH python3`).

CPU (issue 16's target: forward + backward faster than torch at every T, float32, 1 thread;
defaults B 1, H 8, T 256,512,1024):

    /usr/bin/python3 bench/compare_attention.py --bench build/apps/bench_attention \
        --python VENV/bin/python [--rounds 3] [--repeat 7]

CUDA (issue 31's: forward + backward >= 0.8x torch in bfloat16 and >= 1.0x in float32 at
T 512, 1024, 2048, D 64, causal; defaults B 16, H 12, T 512,1024,2048), on the GPU kit:

    bash .gpu/run.sh python3 bench/compare_attention.py --device cuda --dtype bf16 \
        --bench bench_attention --python "env -u LD_LIBRARY_PATH python3" [--impl own|cudnn|auto]
"""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time

DTYPES = {"f32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16", "f16": "float16",
          "float16": "float16"}


# ---------------------------------------------------------------- torch side (child process)
def torch_worker(spec):
    import torch
    import torch.nn.functional as F

    device, dtype = spec["device"], getattr(torch, spec["dtype"])
    torch.set_num_threads(spec["threads"])
    cuda = device.startswith("cuda")

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def median_ms(fn):
        fn()
        sync()
        ms = []
        for _ in range(spec["repeat"]):
            t0 = time.perf_counter()
            for _ in range(spec["iters"]):
                fn()
            sync()
            ms.append((time.perf_counter() - t0) * 1e3 / spec["iters"])
        return statistics.median(ms)

    rows = []
    for T in spec["T"]:
        g = torch.Generator().manual_seed(0)
        q, k, v, go = (torch.randn(spec["B"], spec["H"], T, spec["D"], generator=g).to(device=device, dtype=dtype)
                       for _ in range(4))
        qg, kg, vg = (x.clone().requires_grad_(True) for x in (q, k, v))
        causal = spec["causal"]

        def fwd():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)

        def bwd():
            torch.autograd.grad(out, (qg, kg, vg), go, retain_graph=True)

        def fwdbwd():
            o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
            torch.autograd.grad(o, (qg, kg, vg), go)

        rows.append({"T": T, "fwd_ms": median_ms(fwd), "bwd_ms": median_ms(bwd), "fwdbwd_ms": median_ms(fwdbwd)})
    print(json.dumps({"torch": torch.__version__, "rows": rows}))


# ---------------------------------------------------------------- driver
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/apps/bench_attention")
    ap.add_argument("--python", default=sys.executable, help="command line of the python with torch")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    ap.add_argument("--T", default=None, help="lengths (default CPU 256,512,1024; CUDA 512,1024,2048)")
    ap.add_argument("--B", type=int, default=None, help="batch (default CPU 1, CUDA 16)")
    ap.add_argument("--H", type=int, default=None, help="heads (default CPU 8, CUDA 12)")
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--iters", type=int, default=None, help="calls per timed run (default CUDA 10, CPU 1)")
    ap.add_argument("--no-causal", action="store_true")
    ap.add_argument("--impl", default="auto", choices=("auto", "own", "cudnn"),
                    help="gradring's path on CUDA in bfloat16/float16: its own kernels, cuDNN's fused attention, "
                         "or auto (GRADRING_CUDNN_ATTENTION's choice); passed to bench_attention --impl")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return torch_worker(json.loads(args.worker))
    cuda = args.device.startswith("cuda")
    T = args.T or ("512,1024,2048" if cuda else "256,512,1024")
    B = args.B or (16 if cuda else 1)
    H = args.H or (12 if cuda else 8)
    iters = args.iters or (10 if cuda else 1)
    dtype = DTYPES[args.dtype]
    causal = not args.no_causal
    lengths = [int(t) for t in T.split(",")]
    spec = {"device": args.device, "dtype": dtype, "T": lengths, "B": B, "H": H, "D": args.D, "causal": causal,
            "threads": args.threads, "repeat": args.repeat, "iters": iters}
    keys = ("fwd_ms", "bwd_ms", "fwdbwd_ms")
    ours = {t: {k: [] for k in keys} for t in lengths}
    theirs = {t: {k: [] for k in keys} for t in lengths}
    tflops = {t: [] for t in lengths}
    version = "?"
    paths = set()
    for _ in range(args.rounds):
        out = subprocess.run([args.bench, "--json", "--device", args.device, "--dtype", dtype, "--T", T, "--B", str(B),
                              "--H", str(H), "--D", str(args.D), "--threads", str(args.threads), "--repeat",
                              str(args.repeat), "--iters", str(iters), "--causal", "true" if causal else "false",
                              "--impl", args.impl],
                             check=True, capture_output=True, text=True).stdout
        for row in json.loads(out.strip().splitlines()[-1])["rows"]:
            for k in keys:
                ours[row["T"]][k].append(row[k])
            tflops[row["T"]].append(row["fwdbwd_tflops"])
            paths.add(row.get("path", "own"))
        out = subprocess.run(shlex.split(args.python) + [__file__, "--worker", json.dumps(spec)], check=True,
                             capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        version = result["torch"]
        for row in result["rows"]:
            for k in keys:
                theirs[row["T"]][k].append(row[k])
    print(f"torch {version}, {args.device}, {dtype}, B={B} H={H} D={args.D}, {'causal' if causal else 'full'}, "
          f"gradring on {'/'.join(sorted(paths))}, {args.threads} CPU thread(s), medians of {args.rounds} rounds x {args.repeat} runs x {iters} calls, ms")
    print(f"{'T':>6} {'fwd':>8} {'torch':>8} {'ratio':>6} {'bwd':>8} {'torch':>8} {'ratio':>6} "
          f"{'f+b':>8} {'torch':>8} {'ratio':>6} {'f+b TF/s':>9}")
    target = 1.0 if not cuda or dtype == "float32" else 0.8
    ok = True
    for t in lengths:
        line = f"{t:>6}"
        for k in keys:
            g, p = statistics.median(ours[t][k]), statistics.median(theirs[t][k])
            line += f" {g:>8.3f} {p:>8.3f} {p / g:>6.2f}"
            if k == "fwdbwd_ms":
                ok = ok and p / g >= target if cuda else ok and g < p
        print(line + f" {statistics.median(tflops[t]):>9.3g}")
    print("ratio = torch time / gradring time (> 1: gradring faster);",
          ("target met" if ok else "target NOT met"),
          f"(forward + backward >= {target}x torch at every T)" if cuda else "(forward + backward faster at every T)")


if __name__ == "__main__":
    main()
