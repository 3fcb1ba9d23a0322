#!/work/venv/bin/python
"""Writes a small PyTorch model's state_dict with safetensors.torch.save_file, for gradring's
test that gr::load reads PyTorch-written checkpoints of the same architecture.

  pytorch_model.safetensors     state_dict of Sequential(Conv2d(1, 2, 3), BatchNorm2d(2),
                                ReLU(), Flatten(), Linear(18, 3)) after one training step
                                (so the BatchNorm running stats are not the defaults)
  pytorch_model_io.safetensors  "input" [2, 1, 5, 5] and the model's eval-mode "output" [2, 3]

Run: /work/venv/bin/python tests/data/make_pytorch_checkpoint.py
"""
import os

import torch
from safetensors.torch import save_file

torch.manual_seed(3)
model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(18, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(4, 1, 5, 5)).pow(2).mean().backward()
opt.step()
model.eval()
x = torch.randn(2, 1, 5, 5)
with torch.no_grad():
    y = model(x)
here = os.path.dirname(os.path.abspath(__file__))
save_file({k: v.contiguous() for k, v in model.state_dict().items()}, os.path.join(here, "pytorch_model.safetensors"))
save_file({"input": x, "output": y}, os.path.join(here, "pytorch_model_io.safetensors"))
print("wrote", sorted(model.state_dict()))
