#!/usr/bin/env python3
"""Writes gpt_reference.safetensors: PyTorch's 5 AdamW steps of a small GPT in float64.

The model, optimizer and schedule are bench/gpt_torch.py's (train_gpt's peer). Holds the
initial weights ("init.<name>"), the fixed batches ("x.<step>", "y.<step>"), the loss of every
step ("losses") and the final weights ("final.<name>"); tests/apps/test_gpt_parity.cpp starts
gradring's GPT from the same weights and must match every loss and weight to 1e-9.
Needs current PyTorch (F.scaled_dot_product_attention) and safetensors:
  /work/venv/bin/python tests/data/make_gpt_reference.py
"""
import os
import sys

import torch
from safetensors.torch import save_file

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "bench"))
import gpt_torch  # noqa: E402

CONFIG = dict(layers=2, heads=2, embd=16, block=8, batch_size=4, dropout=0.0)
STEPS, LR, WARMUP, MIN_LR, WEIGHT_DECAY, CLIP = 5, 1e-2, 2, 1e-3, 0.1, 1.0


def main():
    torch.manual_seed(0)
    model = gpt_torch.GPT(CONFIG).double()
    out = {"init." + k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    opt = gpt_torch.make_optimizer(model, LR, WEIGHT_DECAY)
    gen = torch.Generator().manual_seed(1)
    losses = []
    for step in range(STEPS):
        x = torch.randint(0, 256, (CONFIG["batch_size"], CONFIG["block"]), generator=gen)
        y = torch.randint(0, 256, (CONFIG["batch_size"], CONFIG["block"]), generator=gen)
        out[f"x.{step}"], out[f"y.{step}"] = x, y
        for g in opt.param_groups:
            g["lr"] = gpt_torch.lr_at(step, LR, WARMUP, STEPS, MIN_LR)
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        opt.step()
        losses.append(loss.item())
    out["losses"] = torch.tensor(losses, dtype=torch.float64)
    out.update({"final." + k: v.detach().clone().contiguous() for k, v in model.state_dict().items()})
    save_file(out, os.path.join(here, "gpt_reference.safetensors"),
              metadata={"torch": torch.__version__, "config": repr(CONFIG),
                        "training": f"steps={STEPS} lr={LR} warmup={WARMUP} min_lr={MIN_LR} "
                                    f"weight_decay={WEIGHT_DECAY} clip={CLIP}"})
    print("losses", losses)


if __name__ == "__main__":
    main()
