#!/usr/bin/python3
"""Reference index lists from torch.utils.data.DistributedSampler and torch.randperm (torch 1.13).

For several dataset sizes, world sizes, seeds, shuffle / drop_last settings and epochs, every
rank's indices; and torch.randperm(n) from a generator seeded with a few seeds.

Run: /usr/bin/python3 tests/data/make_sampler_reference.py  (writes sampler_reference.json)
"""
import json
import os

import torch
from torch.utils.data import DistributedSampler


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


cases = []
for n in (1, 7, 10, 64, 1000):
    for replicas in (1, 3, 4):
        for shuffle in (True, False):
            for drop_last in (False, True):
                for seed in (0, 123):
                    if not shuffle and seed:
                        continue
                    if n < replicas and drop_last:
                        continue  # torch yields nothing on any rank (num_samples 0)
                    for epoch in (0, 2):
                        ranks = []
                        for rank in range(replicas):
                            s = DistributedSampler(Sized(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                                                   seed=seed, drop_last=drop_last)
                            s.set_epoch(epoch)
                            ranks.append(list(s))
                        cases.append({"n": n, "replicas": replicas, "shuffle": shuffle, "drop_last": drop_last,
                                      "seed": seed, "epoch": epoch, "indices": ranks})

randperm = []
for n in (0, 1, 2, 5, 100, 5000):
    for seed in (0, 1, 2**32 + 5, 987654321):
        g = torch.Generator().manual_seed(seed)
        randperm.append({"n": n, "seed": seed, "perm": torch.randperm(n, generator=g).tolist()})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sampler_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "distributed_sampler": cases, "randperm": randperm}, f)
print(f"wrote {out}: {len(cases)} sampler cases, {len(randperm)} randperm cases")
