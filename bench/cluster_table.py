#!/usr/bin/env python3
"""Tables of bench/compare_cluster.sh's results: for every nodes x rate x model, the median over
rounds of each mode's step time (bench_ddp: median of the slowest rank's steps), the share of
communication hidden behind backward (bench_ddp: from the trace; torch: by step time against
no_sync), overlap against after-backward (median of paired steps), and gradring against torch.
Usage: cluster_table.py DIR"""
import glob
import json
import os
import re
import statistics
import sys

runs = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    m = re.match(r"(\d+)n_(\w+?)_(reference|resnet18)_(gr|torch)_(\d+)\.json", os.path.basename(path))
    if not m:
        continue
    try:
        j = json.load(open(path))
    except ValueError:
        continue
    runs.setdefault(m.groups()[:3], {}).setdefault(m.group(4), []).append(j)


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def rate_bits(rate):
    n, unit = re.match(r"(\d+)(\w+)", rate).groups()
    return int(n) * {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[unit]


def fmt(x, spec, suffix=""):
    return "-" if x is None or x != x else format(x, spec) + suffix


print("| nodes | link | model | mode | gradring step (ms) | cpu (ms) | comm (ms) | hidden | torch step (ms) | torch hidden | torch / gradring step |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(runs, key=lambda k: (int(k[0]), rate_bits(k[1]), k[2])):
    n, rate, model = key
    gr = [j["models"][0] for j in runs[key].get("gr", [])]
    tr = runs[key].get("torch", [])
    for mode in ("overlap", "after-backward", "per-parameter", "none"):
        rows = [r for g in gr for r in g["modes"] if r["mode"] == mode]
        step = med([r["step_ms"] for r in rows])
        comm = med([r["comm_ms"] for r in rows])
        cpu = med([r["cpu_ms"] for r in rows])
        hidden = med([r["hidden_fraction"] for r in rows])
        tstep = med([t["modes"][mode]["step_ms"] for t in tr if mode in t["modes"]])
        thidden = med([t.get("hidden_fraction_by_step_time") for t in tr]) if mode == "overlap" else None
        ratio = tstep / step if step == step and tstep == tstep else float("nan")
        print(f"| {n} | {rate} | {model} | {mode} | {fmt(step, '.0f')} | {fmt(cpu, '.0f')} | {fmt(comm, '.0f')} | "
              f"{'-' if mode == 'none' else fmt(100 * hidden, '.0f', '%')} | {fmt(tstep, '.0f')} | "
              f"{'' if thidden is None else fmt(100 * thidden, '.0f', '%')} | {fmt(ratio, '.2f', 'x')} |")
    paired = med([g.get("overlap_speedup_paired_median") for g in gr])
    share = med([g.get("comm_share_after_backward") for g in gr])
    tpaired = med([t.get("overlap_speedup_paired_median") for t in tr])
    print(f"| {n} | {rate} | {model} | **overlap vs after-backward** (paired steps) | **{fmt(paired, '.2f', 'x')}** | | "
          f"comm {fmt(100 * share, '.0f', '%')} of the after-backward step | | {fmt(tpaired, '.2f', 'x')} | | "
          f"rounds: {len(gr)} gradring, {len(tr)} torch |")
