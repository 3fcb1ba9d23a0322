#!/usr/bin/python3
"""Runs gradring's bench_ops and the same ops in PyTorch, in one go, and prints them side by side.

For each thread count, gradring (apps/bench_ops --json) and each PyTorch peer run alternately
for --rounds rounds (the machine is shared; each side keeps its best time over the rounds).
Each peer runs in a child process with OMP_NUM_THREADS=<n>, torch.set_num_threads(<n>) and
its fastest BLAS (bench/peers.py: OpenBLAS with OPENBLAS_CORETYPE=SkylakeX for Debian's torch).

    python3 bench/compare_ops.py --bench build/apps/bench_ops [--threads 1,2]
        [--repeat 20] [--rounds 3] [--ops sgemm,conv2d] [--markdown] [--python PY [--python PY2]]

--python names a peer's Python and may be repeated (default Debian's /usr/bin/python3 with
torch 1.13; a venv's bin/python for current PyTorch). With several peers the torch columns
show, per row, the fastest peer (named in the last column): speedups are against it.
Prints a table (markdown with --markdown) and whether the targets hold: SGEMM >= 0.9x torch
(GFLOP/s) at every size and thread count, conv2d fwd+bwd of 64x32x13x13 * 64x32x3x3 >= 1.25x
torch (time) at 1 thread.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
from table_print import print_table  # noqa: E402

CONV_TARGET = ("conv2d_fwdbwd", "64x32x13x13,w64x32x3x3")

# (label, N, C, H, W, O, k, bias, input_grad): the same shapes as apps/bench_ops.cpp.
CONV_SHAPES = [
    ("64x32x13x13,w64x32x3x3", 64, 32, 13, 13, 64, 3, False, True),
    ("mnist.conv1:64x1x28x28,w32x1x3x3,bias", 64, 1, 28, 28, 32, 3, True, False),
    ("mnist.conv2:64x32x13x13,w64x32x3x3,bias", 64, 32, 13, 13, 64, 3, True, True),
]
# conv_transpose2d runs on the first shape's conv: its input is that conv's output.
OPS = ["sgemm", "bgemm", "conv2d_fwd", "conv2d_fwdbwd", "conv_transpose2d_fwd", "conv_transpose2d_fwdbwd", "add", "relu", "sum",
       "gather", "scatter_add", "index_select", "sum_lastdim", "amax_lastdim",
       "logsumexp_lastdim", "softmax_lastdim", "masked_fill", "gelu_fwd", "gelu_bwd",
       "where", "where_scalar", "logical_and", "lt_scalar", "any_lastdim", "nonzero", "masked_select", "masked_scatter"]


def selected(filters, op):
    return not filters or any(f == op or f == op.rsplit("_", 1)[0] for f in filters)


# ---------------------------------------------------------------- torch side (child process)
def torch_worker(threads, repeat, filters):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(0)

    def best_ms(fn):
        fn()
        best, total, i = 1e30, 0.0, 0
        while i < repeat or (total < 0.3 and i < 50 * repeat):
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            best, total, i = min(best, dt), total + dt, i + 1
        return best * 1e3

    results = []

    def add(op, shape, fn, work, is_bytes):
        ms = best_ms(fn)
        rate = work / (ms * 1e-3) / 1e9
        results.append({"op": op, "shape": shape, "ms": ms, ("gbps" if is_bytes else "gflops"): rate})

    if selected(filters, "sgemm"):
        for n in (256, 512, 1024, 2048):
            a, b = torch.randn(n, n), torch.randn(n, n)
            add("sgemm", f"{n}x{n}x{n}", lambda: torch.mm(a, b), 2.0 * n ** 3, False)
        # train_gpt tiny's weight gradients: dW [out, in] = dY^T X over 768 tokens (A transposed).
        for out, inp in ((384, 128), (128, 128), (512, 128), (128, 512), (256, 128)):
            a, b = torch.randn(768, out), torch.randn(768, inp)
            add("sgemm", f"{out}x{inp}x768,A^T", lambda: torch.mm(a.t(), b), 2.0 * out * inp * 768, False)
    if selected(filters, "bgemm"):
        # train_gpt tiny's bfloat16 products: forward x W^T, input gradient dY W, weight gradient dY^T X.
        bf = torch.bfloat16
        for out, inp in ((384, 128), (512, 128), (128, 512)):
            x, w, dy = torch.randn(768, inp, dtype=bf), torch.randn(out, inp, dtype=bf), torch.randn(768, out, dtype=bf)
            fl = 2.0 * 768 * out * inp
            add("bgemm", f"768x{out}x{inp},B^T", lambda x=x, w=w: torch.mm(x, w.t()), fl, False)
            add("bgemm", f"768x{inp}x{out}", lambda dy=dy, w=w: torch.mm(dy, w), fl, False)
            add("bgemm", f"{out}x{inp}x768,A^T", lambda dy=dy, x=x: torch.mm(dy.t(), x), fl, False)
        a, b = torch.randn(1024, 1024, dtype=bf), torch.randn(1024, 1024, dtype=bf)
        add("bgemm", "1024x1024x1024", lambda: torch.mm(a, b), 2.0 * 1024 ** 3, False)
    for label, N, C, H, W, O, k, bias, input_grad in CONV_SHAPES:
        x, w = torch.randn(N, C, H, W), torch.randn(O, C, k, k)
        b = torch.randn(O) if bias else None
        Ho, Wo = H - k + 1, W - k + 1
        gy = torch.randn(N, O, Ho, Wo)
        fwd = 2.0 * N * O * Ho * Wo * C * k * k

        def forward(x=x, w=w, b=b):
            with torch.no_grad():
                F.conv2d(x, w, b)

        def train_step(x=x, w=w, b=b, gy=gy, input_grad=input_grad):
            xi = x.detach().requires_grad_(True) if input_grad else x
            wi = w.detach().requires_grad_(True)
            bi = b.detach().requires_grad_(True) if b is not None else None
            F.conv2d(xi, wi, bi).backward(gy)

        if selected(filters, "conv2d_fwd"):
            add("conv2d_fwd", label, forward, fwd, False)
        if selected(filters, "conv2d_fwdbwd"):
            add("conv2d_fwdbwd", label, train_step, fwd * (3 if input_grad else 2), False)
    _, N, C, H, W, O, k, _, _ = CONV_SHAPES[0]
    Ho, Wo = H - k + 1, W - k + 1
    t, w, u = torch.randn(N, O, Ho, Wo), torch.randn(O, C, k, k), torch.randn(N, C, H, W)
    label = f"{N}x{O}x{Ho}x{Wo},w{O}x{C}x{k}x{k}"
    fwd = 2.0 * N * O * Ho * Wo * C * k * k

    def transposed_forward():
        with torch.no_grad():
            F.conv_transpose2d(t, w)

    def transposed_train_step():
        ti, wi = t.detach().requires_grad_(True), w.detach().requires_grad_(True)
        F.conv_transpose2d(ti, wi).backward(u)

    if selected(filters, "conv_transpose2d_fwd"):
        add("conv_transpose2d_fwd", label, transposed_forward, fwd, False)
    if selected(filters, "conv_transpose2d_fwdbwd"):
        add("conv_transpose2d_fwdbwd", label, transposed_train_step, 3 * fwd, False)
    n = 1 << 22
    a, b = torch.randn(n), torch.randn(n)
    e = 4.0 * n
    if selected(filters, "add"):
        add("add", str(n), lambda: a + b, 3 * e, True)
    if selected(filters, "relu"):
        add("relu", str(n), lambda: torch.relu(a), 2 * e, True)
    if selected(filters, "sum"):
        add("sum", str(n), lambda: a.sum(), e, True)
    # The breadth ops on a [4096, 1024] matrix, as bench_ops' breadth() (same shapes and work).
    R, C, K = 4096, 1024, 256
    x, src, grad = torch.randn(R, C), torch.randn(R, K), torch.randn(R, C)
    idx, rows = torch.randint(0, C, (R, K)), torch.randint(0, R, (R // 2,))
    mask = torch.rand(R, C) < 0.5
    f, i64, full, part, sh = 4.0, 8.0, float(R * C), float(R * K), f"{R}x{C}"
    breadth = [
        ("gather", f"{sh},dim1,index{R}x{K}", lambda: x.gather(1, idx), part * (2 * f + i64)),
        ("scatter_add", f"{sh},dim1,index{R}x{K}", lambda: x.scatter_add(1, idx, src), 2 * full * f + part * (f + i64)),
        ("index_select", f"{sh},dim0,index{R // 2}", lambda: x.index_select(0, rows), full * f + R // 2 * i64),
        ("sum_lastdim", sh, lambda: x.sum(-1), full * f),
        ("amax_lastdim", sh, lambda: x.amax(-1), full * f),
        ("logsumexp_lastdim", sh, lambda: x.logsumexp(-1), full * f),
        ("softmax_lastdim", sh, lambda: x.softmax(-1), 2 * full * f),
        ("masked_fill", f"{sh},bool mask", lambda: x.masked_fill(mask, 0.0), full * (2 * f + 1)),
        ("gelu_fwd", sh, lambda: F.gelu(x), 2 * full * f),
        ("gelu_bwd", sh, lambda: torch.ops.aten.gelu_backward(grad, x), 3 * full * f),
    ]
    # Bool selects and predicates, as bench_ops' bool_selects().
    y, other = torch.randn(R, C), torch.rand(R, C) < 0.5
    sparse = x > 3.5
    nnz = float(mask.sum())
    breadth += [
        ("where", f"{sh},bool cond", lambda: torch.where(mask, x, y), full * (3 * f + 1)),
        ("where_scalar", f"{sh},bool cond", lambda: torch.where(mask, x, 0.0), full * (2 * f + 1)),
        ("logical_and", f"{sh},bool", lambda: mask.logical_and(other), 3 * full),
        ("lt_scalar", sh, lambda: x.lt(0.5), full * (f + 1)),
        ("any_lastdim", f"{sh},bool", lambda: sparse.any(-1), full),
        ("nonzero", f"{sh},bool", lambda: mask.nonzero(), full + nnz * 2 * i64),
        ("masked_select", f"{sh},bool mask", lambda: x.masked_select(mask), full * (f + 1) + nnz * f),
        ("masked_scatter", f"{sh},bool mask", lambda: x.masked_scatter(mask, y), full * (2 * f + 1) + nnz * f),
    ]
    for op, shape, fn, work in breadth:
        if selected(filters, op):
            add(op, shape, fn, work, True)
    print(json.dumps({"bench": "torch", "threads": threads, "torch": torch.__version__, "results": results}))


# ---------------------------------------------------------------- driver
def last_json_line(text, who):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    sys.exit(f"compare_ops: no JSON line in the output of {who}:\n{text}")


def run_gradring(bench, threads, repeat, ops):
    cmd = [bench, "--json", "--threads", str(threads), "--repeat", str(repeat)] + (["--ops", ops] if ops else [])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_ops: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return last_json_line(p.stdout, "bench_ops")


peer_envs = {}  # python -> its bench/peers.py environment


def run_torch(python, threads, repeat, ops):
    cmd = [python, os.path.abspath(__file__), "--torch-worker", "--threads", str(threads),
           "--repeat", str(repeat)] + (["--ops", ops] if ops else [])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **peer_envs[python])
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_ops: the torch run failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return last_json_line(p.stdout, "the torch run")


def keep_best(best, run):
    for r in run["results"]:
        key = (r["op"], r["shape"])
        if key not in best or r["ms"] < best[key]["ms"]:
            best[key] = r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default="build/apps/bench_ops", help="path to the bench_ops executable")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per op (best is kept)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating gradring/torch rounds per thread count")
    ap.add_argument("--ops", default="", help="op filter passed to both sides (e.g. sgemm,conv2d)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--python", action="append",
                    help="a peer's Python, repeatable (default Debian's /usr/bin/python3 with torch 1.13; current "
                    "PyTorch: a venv's bin/python); speedups are against the fastest peer of each row")
    ap.add_argument("--openblas", default=os.environ.get("GRADRING_OPENBLAS_DIR", peers.DEFAULT_OPENBLAS),
                    help="the folder of OpenBLAS's libblas.so.3 for peers on Debian's torch (bench/peers.py)")
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    try:
        threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        ap.error(f"--threads: expected comma-separated integers, got '{args.threads}'")
    if not threads or min(threads) < 1:
        ap.error("--threads: thread counts must be positive")
    if args.repeat < 1 or args.rounds < 1:
        ap.error("--repeat and --rounds must be positive")
    filters = [f for f in args.ops.split(",") if f]
    for f in filters:
        if not any(selected([f], op) for op in OPS):
            ap.error(f"--ops: unknown op '{f}'; choose from {', '.join(OPS)} (or a family: sgemm, conv2d, conv_transpose2d)")
    if args.torch_worker:
        torch_worker(threads[0], args.repeat, filters)
        return
    if not os.access(args.bench, os.X_OK):
        ap.error(f"--bench: {args.bench} is not an executable (build apps/bench_ops first)")
    pythons = args.python or ["/usr/bin/python3"]
    labels = {py: chr(65 + i) for i, py in enumerate(pythons)}
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    print(f"compare_ops: {when}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; machine: "
          f"{peers.machine()}; gradring best of {args.rounds} rounds x {args.repeat} runs against each peer's best")
    for py in pythons:
        text, info = peers.describe(py, args.openblas)
        print(f"peer {labels[py]}: {text}")
        if info is None or info["blas"].startswith("reference BLAS"):
            sys.exit(f"compare_ops: {py} is not a usable peer (no torch, or torch on the reference BLAS: install "
                     f"libopenblas0-openmp or pass --openblas DIR)")
        peer_envs[py] = peers.peer_env(py, args.openblas)

    rows, ok = [], True
    for t in threads:
        g_best, t_best = {}, {py: {} for py in pythons}
        for _ in range(args.rounds):
            keep_best(g_best, run_gradring(args.bench, t, args.repeat, args.ops))
            for py in pythons:
                keep_best(t_best[py], run_torch(py, t, args.repeat, args.ops))
        for key, g in g_best.items():
            found = [(t_best[py][key], py) for py in pythons if key in t_best[py]]
            if not found:
                continue
            tr, py = min(found, key=lambda f: f[0]["ms"])
            unit = "gbps" if "gbps" in g else "gflops"
            speedup = tr["ms"] / g["ms"]
            rows.append((key[0], key[1], t, g["ms"], tr["ms"], g[unit], tr[unit], unit, speedup, labels[py]))

    head = ["op", "shape", "threads", "gradring ms", "torch ms", "gradring rate", "torch rate", "speedup"]
    if len(pythons) > 1:
        head.append("peer")
    lines = []
    for op, shape, t, gms, tms, grate, trate, unit, sp, peer in rows:
        u = "GB/s" if unit == "gbps" else "GFLOP/s"
        lines.append([op, shape, str(t), f"{gms:.3f}", f"{tms:.3f}", f"{grate:.1f} {u}", f"{trate:.1f} {u}",
                      f"{sp:.2f}x"] + ([peer] if len(pythons) > 1 else []))
    print_table(head, lines, args.markdown)

    # Targets: SGEMM >= 0.9x torch's GFLOP/s everywhere; the conv2d training step >= 1.25x at 1 thread.
    for op, shape, t, gms, tms, grate, trate, unit, sp, _ in rows:
        if op == "sgemm":
            good = sp >= 0.9
            print(f"target sgemm {shape} @ {t} thread(s): {sp:.2f}x torch (need >= 0.90): {'met' if good else 'NOT met'}")
            ok &= good
        if (op, shape) == CONV_TARGET and t == 1:
            good = sp >= 1.25
            print(f"target conv2d fwd+bwd {shape} @ 1 thread: {sp:.2f}x torch (need >= 1.25): {'met' if good else 'NOT met'}")
            ok &= good
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
