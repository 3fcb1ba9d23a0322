#!/usr/bin/env python3
"""train_gpt's model and training in PyTorch: the peer that apps/train_gpt is compared with.

Same model (GPT, pre-LayerNorm, tied LM head, GPT-2 init), same parameter names in safetensors
(weights load both ways), same AdamW / clipping / warmup-cosine schedule, and the same batches:
the windows of the byte corpus are chosen exactly as gradring's TokenDataset chooses them (Note
[Token windows] in data/datasets/tokens.h), so the two loss curves see identical data.

  python bench/gpt_torch.py --model tiny --steps 200 --threads 1
  python -m torch.distributed.run --nproc-per-node 2 bench/gpt_torch.py --model tiny   (DDP, gloo)
  python bench/gpt_torch.py --model small --device cuda    (model, batches and autocast on the GPU)
"""
import argparse
import contextlib
import json
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {
    "tiny": dict(layers=4, heads=4, embd=128, block=64, batch_size=12),
    "small": dict(layers=6, heads=6, embd=384, block=256, batch_size=8),
}
VOCAB = 256  # tokens are bytes


# ---- data: gradring's TokenDataset, bit for bit ----
def mt19937_64_first(seed):
    """The first output of C++'s std::mt19937_64 seeded with `seed`."""
    mask = (1 << 64) - 1
    n, m = 312, 156
    mt = [seed & mask]
    for i in range(1, n):
        mt.append((6364136223846793005 * (mt[-1] ^ (mt[-1] >> 62)) + i) & mask)
    x = (mt[0] & 0xFFFFFFFF80000000) | (mt[1] & 0x7FFFFFFF)
    y = mt[m] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
    y ^= (y >> 29) & 0x5555555555555555
    y ^= (y << 17) & 0x71D67FFFEDA60000
    y ^= (y << 37) & 0xFFF7EEE000000000
    y ^= y >> 43
    return y & mask


class TokenWindows:
    """The windows of `tokens` (a uint8 tensor) for one epoch on one rank (tokens.cpp)."""

    def __init__(self, tokens, window, seed, rank=0, replicas=1):
        self.tokens, self.window, self.seed, self.rank, self.replicas = tokens, window, seed, rank, replicas
        self.epoch = None

    def set_epoch(self, epoch):
        n, L, R = self.tokens.numel(), self.window, self.replicas
        m = (n - 1) // L
        slack = n - 1 - m * L
        seed = self.seed + epoch  # data/sampler.cpp epoch_seed
        offset = mt19937_64_first(seed) % (slack + 1)
        order = torch.randperm(m, generator=torch.Generator().manual_seed(seed))
        self.starts = offset + order[self.rank::R][: m // R] * L
        self.epoch = epoch

    def __len__(self):
        return (((self.tokens.numel() - 1) // self.window) // self.replicas)

    def batch(self, first, count):
        starts = self.starts[first:first + count]
        idx = starts[:, None] + torch.arange(self.window + 1)[None, :]
        w = self.tokens[idx].long()
        return w[:, :-1], w[:, 1:]


def load_corpus(path):
    with open(path, "rb") as f:
        data = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
    split = int(data.numel() * 0.9)  # 90% train, 10% validation (train_gpt's split)
    return data[:split], data[split:]


# ---- the model ----
SDPA = hasattr(F, "scaled_dot_product_attention")  # torch >= 2.0; Debian's 1.13 has none


def causal_attention(q, k, v, dropout_p):
    """softmax(q k^T / sqrt(d) + causal mask) v: fused where torch has it, else the composite
    (what nanoGPT did before torch 2.0), so that Debian's torch 1.13 can be a peer too."""
    if SDPA:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
    T = q.size(-2)
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    weights = F.dropout(F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1), p=dropout_p)
    return weights @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.dropout = c["heads"], c["dropout"]
        self.c_attn = nn.Linear(c["embd"], 3 * c["embd"])
        self.c_proj = nn.Linear(c["embd"], c["embd"])
        self.resid_dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = causal_attention(q, k, v, self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["embd"], 4 * c["embd"])
        self.c_proj = nn.Linear(4 * c["embd"], c["embd"])
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["embd"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c["embd"])
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.wte = nn.Embedding(VOCAB, c["embd"])
        self.wpe = nn.Embedding(c["block"], c["embd"])
        self.drop = nn.Dropout(c["dropout"])
        self.blocks = nn.ModuleList([Block(c) for _ in range(c["layers"])])
        self.ln_f = nn.LayerNorm(c["embd"])
        # GPT-2 init: N(0, 0.02) everywhere, zero biases, residual projections / sqrt(2 * layers).
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c["layers"]))
            elif p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets=None):
        T = idx.size(1)
        x = self.drop(self.wte(idx) + self.wpe(torch.arange(T, device=idx.device)))
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()  # the LM head is the token embedding
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(-1, VOCAB), targets.reshape(-1))

    def num_params(self):
        return sum(p.numel() for p in self.parameters())


def make_optimizer(model, lr, weight_decay):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": other, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def lr_at(step, lr, warmup, steps, min_lr):
    """Linear warmup over `warmup` steps, then cosine decay to min_lr at `steps` (train_gpt's)."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if step >= steps:
        return min_lr
    ratio = (step - warmup) / max(1, steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def flops_per_token(c, params):
    # 6 per parameter (forward + backward) plus attention's scores and sums (PaLM's estimate).
    return 6 * params + 12 * c["layers"] * c["embd"] * c["block"]


@torch.no_grad()
def evaluate(model, windows, eval_windows, batch, rank, world, dtype_ctx):
    """Mean loss over the first `eval_windows` validation windows, split over the ranks."""
    model.eval()
    dev = next(model.parameters()).device
    total = torch.zeros(2, dtype=torch.float64, device=dev)
    mine = list(range(rank, eval_windows, world))
    for i in range(0, len(mine), batch):
        first = mine[i:i + batch]
        starts = windows.starts[first]
        idx = starts[:, None] + torch.arange(windows.window + 1)[None, :]
        w = windows.tokens[idx].long().to(dev)
        with dtype_ctx():
            _, loss = model(w[:, :-1], w[:, 1:])
        total += torch.tensor([loss.item() * len(first), len(first)], dtype=torch.float64, device=dev)
    if world > 1:
        torch.distributed.all_reduce(total)
    model.train()
    return (total[0] / total[1]).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.expanduser("~/.cache/gradring/shakespeare.txt"))
    ap.add_argument("--model", choices=sorted(PRESETS), default="tiny")
    for k in ("layers", "heads", "embd", "block"):
        ap.add_argument("--" + k, type=int)
    ap.add_argument("--batch-size", type=int, help="per rank")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr", type=float, help="default lr / 10")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["float32", "bf16", "float64"], default="float32")
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-windows", type=int, default=256)
    ap.add_argument("--load", help="initial weights (safetensors, train_gpt's names)")
    ap.add_argument("--save", help="write the final weights (safetensors)")
    ap.add_argument("--curve", help="write step,train_loss,val_loss lines to this CSV file")
    ap.add_argument("--profile", help="profile the training steps after the first 3 (torch.profiler): print a "
                    "per-op table and write a Chrome trace here (rank 0's)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N: the model, the batches and autocast "
                    "there (under torch.distributed.run, cuda is cuda:<local rank> and the group NCCL)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    c = dict(PRESETS[a.model])
    for k in ("layers", "heads", "embd", "block", "batch_size"):
        if getattr(a, k) is not None:
            c[k] = getattr(a, k)
    c["dropout"] = a.dropout
    torch.set_num_threads(a.threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    dev = torch.device(a.device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
    if world > 1:
        torch.distributed.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    torch.manual_seed(a.seed)
    param_dtype = torch.float64 if a.dtype == "float64" else torch.float32
    model = GPT(c).to(param_dtype)
    if a.load:
        from safetensors.torch import load_file
        model.load_state_dict({k: v.to(param_dtype) for k, v in load_file(a.load).items()}, strict=True)
    model.to(dev)
    params = model.num_params() - model.wpe.weight.numel()
    ddp_devices = [dev.index] if dev.type == "cuda" else None
    net = torch.nn.parallel.DistributedDataParallel(model, device_ids=ddp_devices) if world > 1 else model
    opt = make_optimizer(model, a.lr, a.weight_decay)
    min_lr = a.min_lr if a.min_lr is not None else a.lr / 10

    def dtype_ctx():
        if a.dtype == "bf16":
            return torch.autocast(dev.type, dtype=torch.bfloat16)
        return torch.autocast(dev.type, enabled=False)

    train_tokens, val_tokens = load_corpus(a.data)
    train = TokenWindows(train_tokens, c["block"], a.seed, rank, world)
    val = TokenWindows(val_tokens, c["block"], a.seed)
    val.set_epoch(0)
    B, T = c["batch_size"], c["block"]
    per_epoch = len(train) // B
    curve = open(a.curve, "w") if a.curve and rank == 0 else None
    timed_tokens, timed_seconds, val_loss, loss_value = 0, 0.0, float("nan"), float("nan")
    profiler = None
    for step in range(a.steps):
        if a.profile and step == min(3, a.steps - 1):  # as train_gpt's: after the warm-up steps
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            profiler.__enter__()
        epoch, i = divmod(step, per_epoch)
        if train.epoch != epoch:
            train.set_epoch(epoch)
        x, y = train.batch(i * B, B)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a.lr, a.warmup, a.steps, min_lr)
        # Named phases in the profile (train_gpt's spans).
        span = torch.profiler.record_function if profiler is not None else (lambda name: contextlib.nullcontext())
        t0 = time.perf_counter()
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)  # in the step, as train_gpt's batches
        with span("forward"), dtype_ctx():
            _, loss = net(x, y)
        with span("zero_grad"):
            opt.zero_grad(set_to_none=True)
        with span("backward"):
            loss.backward()
        with span("clip_grad_norm_"):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        with span("optimizer.step"):
            opt.step()
        loss_value = loss.item()
        dt = time.perf_counter() - t0
        if step >= 3:  # the first steps warm the allocator and the kernels' caches
            timed_tokens += B * T * world
            timed_seconds += dt
        if world > 1:
            lt = torch.tensor([loss_value], dtype=torch.float64, device=dev)
            torch.distributed.all_reduce(lt)
            loss_value = lt.item() / world
        last = step + 1 == a.steps
        evaluated = a.eval_every > 0 and ((step + 1) % a.eval_every == 0 or last)
        if evaluated:
            val_loss = evaluate(model, val, a.eval_windows, B, rank, world, dtype_ctx)
        if rank == 0 and not a.json and (step % 10 == 0 or last or evaluated):
            tps = timed_tokens / timed_seconds if timed_seconds > 0 else 0.0
            msg = f"step {step + 1}/{a.steps} loss {loss_value:.4f} lr {opt.param_groups[0]['lr']:.2e} {tps:.0f} tok/s"
            print(msg + (f" val {val_loss:.4f}" if evaluated else ""), flush=True)
        if curve is not None and (evaluated or step % 10 == 0):
            curve.write(f"{step + 1},{loss_value:.6f},{val_loss if evaluated else ''}\n")
    tps = timed_tokens / timed_seconds if timed_seconds > 0 else 0.0
    if profiler is not None:
        profiler.__exit__(None, None, None)
        if rank == 0:
            profiler.export_chrome_trace(a.profile)
            if not a.json:
                print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=40))
    if a.save and rank == 0:
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, a.save)
    if rank == 0:
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out = {"steps": a.steps, "world_size": world, "tokens_per_sec": tps, "train_loss": loss_value,
               "val_loss": val_loss, "params": params, "flops_per_token": flops_per_token(c, params),
               "peak_rss_mb": rss_mb, "torch": torch.__version__, "threads": a.threads,
               "attention": "sdpa" if SDPA else "composite", "dtype": a.dtype}
        print(json.dumps(out) if a.json else f"done: {tps:.0f} tokens/s, val loss {val_loss:.4f}, peak RSS {rss_mb:.0f} MB")
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
