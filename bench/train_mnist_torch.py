#!/usr/bin/python3
"""The PyTorch peer of apps/train_mnist: the same reference CNN, data, normalisation and
optimizer, timed the same way (training images per second over the measured steps).

Run with Debian's python3 (python3-torch); for a fair peer use OpenBLAS:
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OPENBLAS_CORETYPE=SkylakeX \
    /usr/bin/python3 bench/train_mnist_torch.py --threads 1 --epochs 1
Prints per-epoch lines and, with --json, one JSON object as the last line. --device cuda
puts the model and the data on the GPU (a step's time includes its loss.item(), which waits
for the GPU, as train_mnist's step does).
"""
import argparse
import gzip
import json
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise SystemExit(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(root, stem):
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(root, name)):
            return os.path.join(root, name)
    raise SystemExit(f"missing {stem}(.gz) in {root}; install the Debian package dataset-fashion-mnist")


def load(root, train):
    prefix = "train" if train else "t10k"
    x = read_idx(find(root, f"{prefix}-images-idx3-ubyte")).astype(np.float32) / 255.0
    y = read_idx(find(root, f"{prefix}-labels-idx1-ubyte")).astype(np.int64)
    x = (torch.from_numpy(x).unsqueeze(1) - 0.2860) / 0.3530
    return x, torch.from_numpy(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(1600, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = full epochs)")
    p.add_argument("--warmup", type=int, default=5, help="steps excluded from the images/s figure")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N: the model and the data there")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    xtr, ytr = load(a.data, True)
    xte, yte = load(a.data, False)
    dev = torch.device(a.device)
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    model = Net().to(dev)
    opt = torch.optim.Adadelta(model.parameters(), lr=a.lr)
    steps, timed_images, timed_seconds, loss_sum, loss_n = 0, 0, 0.0, 0.0, 0
    acc = 0.0
    for epoch in range(1, a.epochs + 1):
        model.train()
        perm = torch.randperm(len(xtr)).to(dev)
        for i in range(0, len(xtr), a.batch_size):
            idx = perm[i:i + a.batch_size]
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = F.nll_loss(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            lv = loss.item()
            dt = time.perf_counter() - t0
            steps += 1
            if steps > a.warmup:
                timed_images += len(idx)
                timed_seconds += dt
            loss_sum += lv
            loss_n += 1
            if a.max_steps and steps >= a.max_steps:
                break
        model.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(xte), 1000):
                correct += (model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
        acc = correct / len(xte)
        print(f"epoch {epoch}: train_loss {loss_sum / max(loss_n, 1):.4f} test_accuracy {acc:.4f}", flush=True)
        if a.max_steps and steps >= a.max_steps:
            break
    ips = timed_images / timed_seconds if timed_seconds else 0.0
    result = {"epochs": epoch, "steps": steps, "train_loss": loss_sum / max(loss_n, 1), "test_accuracy": acc,
              "images_per_sec": ips, "world_size": 1, "threads": a.threads, "framework": "torch " + torch.__version__}
    if a.json:
        print(json.dumps(result))
    else:
        print(f"{ips:.0f} images/s")


if __name__ == "__main__":
    sys.exit(main())
