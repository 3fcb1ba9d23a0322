#!/usr/bin/python3
"""The PyTorch DDP peer of apps/train_mnist under gradring-run: the reference CNN of
bench/train_mnist_torch.py wrapped in DistributedDataParallel (Gloo), a DistributedSampler
(seed + epoch, torch's order, which gradring's DistributedSampler reproduces), batch size per
rank, Adadelta, 1 thread per rank; metrics averaged over the ranks, evaluation on unpadded
shards. Without WORLD_SIZE in the environment it trains on one process (no DDP).

Start it with the same launcher as train_mnist (gradring-run sets RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, which torch's env:// rendezvous reads), with OpenBLAS:
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=1 \
    build/apps/gradring-run --nproc-per-node 2 --standalone /usr/bin/python3 bench/train_mnist_ddp_torch.py --json
Images/s = training images of all ranks over the slowest rank's time, each step timed from
the end of the previous one (batch gathering included), as train_mnist does. Rank 0 prints
per-epoch lines and, with --json, one JSON object as the last line.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mnist_torch import Net, load  # noqa: E402  (the same model and data as the 1-process peer)


def reduce(values, op=None):
    """Element-wise sum (or `op`) of a few numbers over the ranks; unchanged on one process."""
    if not dist.is_initialized():
        return list(values)
    t = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(t, op=op or dist.ReduceOp.SUM)
    return t.tolist()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64, help="images per step and rank")
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="threads per rank")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = full epochs)")
    p.add_argument("--warmup", type=int, default=5, help="steps excluded from the images/s figure")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")  # env://
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    xtr, ytr = load(a.data, True)
    xte, yte = load(a.data, False)
    model = Net()
    net = DistributedDataParallel(model) if distributed else model  # broadcasts rank 0's weights
    opt = torch.optim.Adadelta(model.parameters(), lr=a.lr)
    sampler = DistributedSampler(range(len(xtr)), num_replicas=world, rank=rank, shuffle=True, seed=a.seed) \
        if distributed else None
    shard = torch.arange(rank, len(xte), world)  # unpadded: every test image once over the ranks

    steps, timed_images, timed_seconds, loss_sum, loss_n = 0, 0, 0.0, 0.0, 0.0
    acc, epoch = 0.0, 0
    stop = False
    for epoch in range(1, a.epochs + 1):
        net.train()
        if sampler is not None:
            sampler.set_epoch(epoch - 1)
            order = torch.tensor(list(iter(sampler)), dtype=torch.int64)
        else:
            order = torch.randperm(len(xtr))
        epoch_loss, epoch_batches = 0.0, 0
        tick = time.perf_counter()
        for i in range(0, len(order), a.batch_size):
            idx = order[i:i + a.batch_size]
            opt.zero_grad()
            loss = F.nll_loss(net(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            epoch_loss += loss.item()
            epoch_batches += 1
            steps += 1
            now = time.perf_counter()
            if steps > a.warmup:
                timed_images += len(idx)
                timed_seconds += now - tick
            tick = now
            if a.max_steps and steps >= a.max_steps:
                stop = True
                break
        s = reduce([epoch_loss, epoch_batches])
        loss_sum += s[0]
        loss_n += s[1]
        net.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(shard), 1000):
                idx = shard[i:i + 1000]
                correct += (net(xte[idx]).argmax(1) == yte[idx]).sum().item()
        c = reduce([correct, len(shard)])
        acc = c[0] / max(c[1], 1)
        if rank == 0 and not a.json:
            print(f"epoch {epoch}: train_loss {s[0] / max(s[1], 1):.4f} test_accuracy {acc:.4f}", flush=True)
        if stop:
            break
    images = reduce([timed_images])[0]
    seconds = reduce([timed_seconds], dist.ReduceOp.MAX if distributed else None)[0]
    ips = images / seconds if seconds else 0.0
    result = {"epochs": epoch, "steps": steps, "train_loss": loss_sum / max(loss_n, 1), "test_accuracy": acc,
              "images_per_sec": ips, "world_size": world, "threads": a.threads,
              "framework": "torch " + torch.__version__}
    if distributed:
        result["backend"] = "gloo"
        dist.destroy_process_group()
    if rank == 0:
        print(json.dumps(result) if a.json else f"{ips:.0f} images/s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
