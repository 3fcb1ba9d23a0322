#!/usr/bin/env python3
"""Per-op time breakdown of a GPT training step, gradring against PyTorch, from two Chrome traces.

  build/apps/train_gpt --model tiny --steps 33 --threads 1 --sample 0 --eval-every 0 --profile gr.json
  python bench/gpt_torch.py --model tiny --steps 33 --threads 1 --eval-every 0 --profile torch.json
  python tools/profile_breakdown.py --gradring gr.json --torch torch.json --steps 30
  (several traces per side: each row is the median over them, for a noisy machine)

Both programs profile the steps after their first three and mark the phases of a step with
spans of the same names (batch, zero_grad, forward, backward, clip_grad_norm_, optimizer.step).
Every microsecond of a trace is charged to one row: by phase, then in the forward by the
outermost op (torch's aten op, gradring's kernel), in the backward by the autograd node; what
no op or node covers (Python, module calls, autograd recording and the engine's own work) gets
an "overhead" row. Profiler overhead inflates both sides; compare shares and differences.
"""
import argparse
import json
import re
import statistics
from collections import defaultdict

PHASES = ("batch", "zero_grad", "forward", "backward", "clip_grad_norm_", "optimizer.step")

# (row, regex) in order; the first match names an op's or a node's row. Names are gradring's
# kernel stubs and nodes and torch's aten ops and autograd nodes.
CATEGORIES = [
    ("attention", r"attention|flash"),
    ("layer_norm", r"layer_?norm"),
    ("GEMM (linear, matmul)", r"gemm|addmm|\bmm|bmm|matmul|linear|unsafeview"),
    ("gelu", r"gelu"),
    ("cross-entropy", r"softmax|nll|cross_entropy|logsumexp"),
    ("embedding", r"embedding|index_select|index_add|index_gather|index_scatter|arange"),
    ("dropout", r"dropout"),
    ("adds/copies/views", r"add|copy|clone|contiguous|view|transpose|reshape|split|unbind|expand|permute|aten::t$|"
                          r"^t$|tbackward|fill|zero|empty|stack|cat|mul|div|sum|convert|to_dtype|aten::to\b|slice|"
                          r"as_strided"),
]


def category(name):
    for row, pattern in CATEGORIES:
        if re.search(pattern, name, re.IGNORECASE):
            return row
    return "other (" + name + ")"


def load(path):
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    out = []
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        if e.get("cat") not in (None, "kernel", "backward", "module", "user", "cpu_op", "user_annotation",
                                "python_function"):
            continue
        out.append((e.get("tid"), float(e["ts"]), float(e["dur"]), e["name"], e.get("cat")))
    return out


def node_name(name, cat):
    """The autograd node an event stands for, or None."""
    if cat == "backward":  # gradring's engine spans
        return name
    m = re.match(r"autograd::engine::evaluate_function: (.*)", name)
    return m.group(1) if m else None


def breakdown(path):
    """Milliseconds per (phase, row) over the whole trace."""
    events = load(path)
    events.sort(key=lambda e: (e[0], e[1], -e[2]))
    totals = defaultdict(float)
    # Per thread: a stack of open events; each event's self time is its duration less its children's.
    stack = []  # (end, name, cat, child_time_list_index)
    selfs = []
    info = []

    def close_until(t, tid):
        while stack and (stack[-1][0] <= t or stack[-1][4] != tid):
            stack.pop()

    for tid, ts, dur, name, cat in events:
        close_until(ts, tid)
        ancestors = [(s[1], s[2]) for s in stack]
        idx = len(selfs)
        selfs.append(dur)
        if stack:
            selfs[stack[-1][3]] -= dur
        info.append((name, cat, ancestors))
        stack.append((ts + dur, name, cat, idx, tid))

    for (name, cat, ancestors), self_us in zip(info, selfs):
        chain = ancestors + [(name, cat)]
        phase = next((n for n, c in chain if n in PHASES and c in ("user", "user_annotation")), None)
        if phase is None:
            continue  # outside the training steps' phases (evaluation, setup)
        if phase in ("batch", "zero_grad", "clip_grad_norm_", "optimizer.step"):
            row = {"batch": "batch (data)", "zero_grad": "zero_grad", "clip_grad_norm_": "clip_grad_norm_",
                   "optimizer.step": "AdamW step"}[phase]
            totals[("step", row)] += self_us
            continue
        inner = chain[[n for n, _ in chain].index(phase) + 1:]
        if phase == "forward":
            ops = [(n, c) for n, c in inner if c in ("kernel", "cpu_op")]
            row = category(ops[0][0]) if ops else "overhead (framework, Python)"
            totals[("forward", row)] += self_us
        else:
            nodes = [node_name(n, c) for n, c in inner]
            nodes = [n for n in nodes if n is not None]
            if not nodes:
                row = "overhead (engine)"
            elif re.search(r"AccumulateGrad", nodes[0]):
                row = "gradient accumulation"
            else:
                own_wrapper = node_name(name, cat) is not None or re.fullmatch(r"\w+Backward\d*", name)
                row = "overhead (engine, nodes)" if own_wrapper else category(nodes[0])
            totals[("backward", row)] += self_us
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gradring", required=True, nargs="+", help="one or more traces (rows: the median)")
    ap.add_argument("--torch", required=True, nargs="+", help="one or more traces (rows: the median)")
    ap.add_argument("--steps", type=int, required=True, help="training steps each trace holds")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()

    def median_rows(paths):
        runs = [breakdown(p) for p in paths]
        keys = set().union(*runs)
        return defaultdict(float, {k: statistics.median(r[k] for r in runs) for k in keys})

    g, t = median_rows(a.gradring), median_rows(a.torch)
    keys = sorted(set(g) | set(t), key=lambda k: (["forward", "backward", "step"].index(k[0]), -max(g[k], t[k])))
    gt, tt = sum(g.values()), sum(t.values())
    fmt = "| {:<9} | {:<30} | {:>8} | {:>6} | {:>8} | {:>6} | {:>8} |" if a.markdown else \
        "{:<9} {:<30} {:>8} {:>6} {:>8} {:>6} {:>8}"
    print(fmt.format("phase", "row", "gr ms", "gr %", "torch ms", "torch %", "gr-torch"))
    if a.markdown:
        print("|" + "|".join("-" * w for w in (11, 32, 10, 8, 10, 8, 10)) + "|")
    for k in keys:
        gm, tm = g[k] / 1e3 / a.steps, t[k] / 1e3 / a.steps
        print(fmt.format(k[0], k[1][:30], f"{gm:.2f}", f"{100 * g[k] / gt:.1f}", f"{tm:.2f}", f"{100 * t[k] / tt:.1f}",
                         f"{gm - tm:+.2f}"))
    print(fmt.format("total", "", f"{gt / 1e3 / a.steps:.2f}", "100", f"{tt / 1e3 / a.steps:.2f}", "100",
                     f"{(gt - tt) / 1e3 / a.steps:+.2f}"))


if __name__ == "__main__":
    main()
