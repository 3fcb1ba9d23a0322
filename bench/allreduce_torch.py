#!/usr/bin/python3
"""The torch.distributed peer of apps/bench_allreduce: float32 sum all-reduce timings with
the same method (iterations issued back to back, the slowest rank's average, busbw =
algbw * 2(n-1)/n). Start one process per rank with the usual variables (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT), e.g. under gradring-run:
  gradring-run --nproc-per-node 2 --standalone /usr/bin/python3 bench/allreduce_torch.py --sizes 4K 1M 25M
Prints one JSON object (rank 0) as the last line.
"""
import argparse
import json
import time

import torch
import torch.distributed as dist


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1], 1)
    return int(float(s[:-1] if s[-1] in "KMG" else s) * mult)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", nargs="+", default=["4K", "1M", "25M"])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--backend", default="gloo")
    a = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group(a.backend, init_method="env://")
    n, rank = dist.get_world_size(), dist.get_rank()
    rows = []
    for s in a.sizes:
        size = parse_size(s)
        x = torch.ones(size // 4, dtype=torch.float32)
        for _ in range(a.warmup):
            dist.all_reduce(x)
        dist.barrier()
        t0 = time.perf_counter()
        works = [dist.all_reduce(x, async_op=True) for _ in range(a.iters)]
        works[-1].wait()
        us = (time.perf_counter() - t0) / a.iters * 1e6
        t = torch.tensor([us], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        us = t.item()
        algbw = size / us / 1e3
        rows.append({"size": size, "time_us": us, "algbw": algbw, "busbw": algbw * 2 * (n - 1) / n})
    if rank == 0:
        print(json.dumps({"ranks": n, "backend": "torch " + a.backend, "rows": rows}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
