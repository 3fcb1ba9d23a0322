#!/usr/bin/env python3
"""Writes python_written.safetensors with the real `safetensors` package (pip install
safetensors numpy), for gradring's test that reads files made by Python.

The tensors hold simple known values so the C++ test can check them without extra data:
  f32   float32 [2, 3]   arange(6) / 4
  f64   float64 [3]      [-1.5, 0, 2.25]
  i64   int64   [2, 2]   [[-3, 7], [1 << 40, 0]]
  u8    uint8   [4]      [0, 1, 128, 255]
  flags bool    [3]      [True, False, True]
  f16   float16 [2]      [0.5, -65504]
  empty float32 [0, 3]
with metadata {"format": "pt", "source": "python"}.
"""
import os

import numpy as np
from safetensors.numpy import save_file

tensors = {
    "f32": (np.arange(6, dtype=np.float32) / 4).reshape(2, 3),
    "f64": np.array([-1.5, 0.0, 2.25], dtype=np.float64),
    "i64": np.array([[-3, 7], [1 << 40, 0]], dtype=np.int64),
    "u8": np.array([0, 1, 128, 255], dtype=np.uint8),
    "flags": np.array([True, False, True]),
    "f16": np.array([0.5, -65504], dtype=np.float16),
    "empty": np.zeros((0, 3), dtype=np.float32),
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_written.safetensors")
save_file(tensors, out, metadata={"format": "pt", "source": "python"})
print("wrote", out)
