#!/usr/bin/env python3
"""Times the same benchmark from two builds of gradring, alternating them, and prints the median
of each and their ratio: for a change that must leave the speed as it was (a refactor, a move).

  bench/compare_builds.py BEFORE_BUILD AFTER_BUILD [--rounds 5] [--ops sgemm,add,...] [--gpt]

Each round runs bench_ops --json (every op of --ops, --threads, --repeat) from BEFORE then AFTER
(then the other way round on the next round, so drift on a noisy machine hits both alike), and
with --gpt train_gpt --model tiny (--gpt-steps steps, --json) the same way. Prints a markdown
table: op, median ms before, after, after/before time (above 1: slower now).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"compare_builds: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit(f"compare_builds: no JSON line from {' '.join(cmd)}")
    return json.loads(lines[-1])


def bench_ops(build, args):
    cmd = [os.path.join(build, "apps", "bench_ops"), "--threads", str(args.threads), "--repeat",
           str(args.repeat), "--ops", args.ops, "--json"]
    return {f"{r['op']} {r['shape']}": r["ms"] for r in run_json(cmd)["results"]}


def train_gpt(build, args):
    cmd = [os.path.join(build, "apps", "train_gpt"), "--model", "tiny", "--steps", str(args.gpt_steps),
           "--eval-every", "0", "--sample", "0", "--threads", str(args.threads), "--json"]
    if args.data:
        cmd += ["--data", args.data]
    result = run_json(cmd)
    # Time per thousand tokens, so that larger is slower like the rest of the table.
    return {"train_gpt tiny (ms per 1k tokens)": 1e6 / result["tokens_per_sec"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ops", default="sgemm,add,relu,sum,softmax,gather,conv2d,gelu,logsumexp")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=10, help="bench_ops' timed runs per op (it reports the best)")
    p.add_argument("--gpt", action="store_true", help="also time train_gpt --model tiny")
    p.add_argument("--gpt-steps", type=int, default=20)
    p.add_argument("--data", help="train_gpt --data FILE (default: its own default corpus)")
    args = p.parse_args()
    for build in (args.before, args.after):
        if not os.path.isfile(os.path.join(build, "apps", "bench_ops")):
            sys.exit(f"compare_builds: {build}/apps/bench_ops not found (build the bench_ops target there)")

    times = {"before": {}, "after": {}}
    for r in range(args.rounds):
        order = ("before", "after") if r % 2 == 0 else ("after", "before")
        for which in order:
            build = args.before if which == "before" else args.after
            figures = bench_ops(build, args)
            if args.gpt:
                figures.update(train_gpt(build, args))
            for name, ms in figures.items():
                times[which].setdefault(name, []).append(ms)
        print(f"compare_builds: round {r + 1} of {args.rounds} done", file=sys.stderr)

    print(f"| benchmark ({args.threads} thread(s), median of {args.rounds}) | before ms | after ms | after/before |")
    print("|---|---|---|---|")
    for name, before in times["before"].items():
        after = times["after"].get(name)
        if not after:
            print(f"| {name} | {statistics.median(before):.3f} | (missing) | |")
            continue
        b, a = statistics.median(before), statistics.median(after)
        print(f"| {name} | {b:.3f} | {a:.3f} | {a / b:.3f} |")


if __name__ == "__main__":
    main()
