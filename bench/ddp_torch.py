#!/work/venv/bin/python
"""The PyTorch DDP peer of apps/bench_ddp: one training step (zero_grad, forward, backward, SGD
with momentum 0.9) of the reference CNN (batch 64, 1x28x28) or ResNet-18 (torchvision's layout,
batch 32, 3x32x32) on synthetic data, Gloo, in the modes overlap (DDP's defaults: 25 MiB buckets),
after-backward (one bucket) and none (no_sync), taking turns step by step after a barrier, as
bench_ddp does. Step time: median over steps of the slowest rank. Without a trace, the hidden
fraction of communication is read from step times: exposed = step - step(none), and
hidden = 1 - exposed(overlap) / exposed(after-backward).

Start it under a launcher that sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (torchrun or
gradring-run), e.g. on the emulated cluster:
  bench/cluster.sh --nodes 2 --rate 2500mbit --launcher /work/venv/bin/torchrun -- bench/ddp_torch.py --model resnet18
Rank 0 prints a table and, with --json, one JSON object as the last line.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mnist_torch import Net  # noqa: E402  (bench_ddp's reference CNN)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (self.downsample(x) if self.downsample is not None else x))


class ResNet18(nn.Module):
    """apps/common/resnet.h: torchvision's resnet18 layout, log-probabilities out."""

    def __init__(self, cin=3, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        chans = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for i, (a, b, s) in enumerate(chans, 1):
            setattr(self, f"layer{i}", nn.Sequential(BasicBlock(a, b, s), BasicBlock(b, b, 1)))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        h = self.layer4(self.layer3(self.layer2(self.layer1(h))))
        return F.log_softmax(self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1)), dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["reference", "resnet18"], default="resnet18")
    p.add_argument("--modes", default="overlap,after-backward,none")
    p.add_argument("--batch-size", type=int, default=0, help="per rank (default: 64 reference, 32 resnet18)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--bucket-cap-mb", type=float, default=25)
    p.add_argument("--gradient-as-bucket-view", action="store_true")
    p.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", "1")))
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(a.threads)
    modes = a.modes.split(",")
    batch = a.batch_size or (64 if a.model == "reference" else 32)
    shape = [batch, 1, 28, 28] if a.model == "reference" else [batch, 3, 32, 32]
    g = torch.Generator().manual_seed(7919 + rank)
    x, y = torch.randn(shape, generator=g), torch.randint(0, 10, (batch,), generator=g)

    runs = []
    for mode in modes:
        torch.manual_seed(1)
        model = Net() if a.model == "reference" else ResNet18()
        cap = 1e9 if mode == "after-backward" else a.bucket_cap_mb
        ddp = DistributedDataParallel(model, bucket_cap_mb=cap, gradient_as_bucket_view=a.gradient_as_bucket_view)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        runs.append((mode, ddp, opt, []))

    def step(mode, ddp, opt):
        t0 = time.perf_counter()
        opt.zero_grad()
        if mode == "none":
            with ddp.no_sync():
                F.nll_loss(ddp(x), y).backward()
        else:
            F.nll_loss(ddp(x), y).backward()
        opt.step()
        return (time.perf_counter() - t0) * 1e3

    for s in range(a.warmup + a.steps):
        for mode, ddp, opt, times in runs:
            dist.barrier()
            t = step(mode, ddp, opt)
            if s >= a.warmup:
                times.append(t)
    result = {}
    for mode, _, _, times in runs:
        t = torch.tensor(times, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        result[mode] = {"step_ms": statistics.median(t.tolist()), "step_min_ms": min(t.tolist()),
                        "step_series_ms": t.tolist()}
    out = {"torch": torch.__version__, "model": a.model, "ranks": world, "threads": a.threads, "batch_size": batch,
           "bucket_cap_mb": a.bucket_cap_mb, "gradient_as_bucket_view": a.gradient_as_bucket_view, "steps": a.steps, "modes": result}
    if "none" in result and "overlap" in result and "after-backward" in result:
        none = result["none"]["step_ms"]
        exposed = {m: result[m]["step_ms"] - none for m in ("overlap", "after-backward")}
        if exposed["after-backward"] > 0:
            out["hidden_fraction_by_step_time"] = 1 - exposed["overlap"] / exposed["after-backward"]
        o, b = result["overlap"]["step_series_ms"], result["after-backward"]["step_series_ms"]
        out["overlap_speedup_paired_median"] = statistics.median(bb / oo for oo, bb in zip(o, b))
    if rank == 0:
        print(f"# PyTorch {torch.__version__} DDP (gloo), {a.model}, {world} ranks, batch {batch} per rank, "
              f"{a.threads} thread(s), {a.steps} steps (+{a.warmup}), modes taking turns")
        for mode, r in result.items():
            print(f"  {mode:16s} step {r['step_ms']:9.2f} ms (min {r['step_min_ms']:.2f})")
        if "hidden_fraction_by_step_time" in out:
            print(f"# hidden by step time: {100 * out['hidden_fraction_by_step_time']:.0f}%; overlap vs after-backward "
                  f"(paired median) {out['overlap_speedup_paired_median']:.2f}x")
        if a.json:
            print(json.dumps(out))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
