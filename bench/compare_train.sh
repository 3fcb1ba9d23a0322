#!/usr/bin/env bash
# Trains the reference CNN with gradring (apps/train_mnist) and with PyTorch
# (bench/train_mnist_torch.py, OpenBLAS) in one go, alternating the two, at 1 and 2
# threads, and prints images/s and the ratio. Usage:
#   bench/compare_train.sh [--steps N] [--build DIR] [--device cpu|cuda] [--python PY]
#   (default: one full epoch each, on the CPU with Debian's python3-torch; --device cuda runs both
#   on the GPU, --python names a PyTorch with CUDA)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
steps=0
device=cpu
python=/usr/bin/python3
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    *) echo "compare_train: unknown argument $1 (expected --steps N, --build DIR, --device D, --python PY)" >&2; exit 2 ;;
  esac
done
app=$build/apps/train_mnist
[ -x "$app" ] || { echo "compare_train: $app not found; build first (cmake --build $build)" >&2; exit 1; }
"$python" -c "import torch" 2>/dev/null || { echo "compare_train: $python has no torch (Debian's python3-torch, or --python PY)" >&2; exit 1; }
openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
[ -d "$openblas" ] || echo "compare_train: warning: libopenblas0-openmp missing; torch will use the slow reference BLAS" >&2

field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

printf "%-8s %14s %14s %8s %10s %10s\n" threads "gradring img/s" "torch img/s" ratio "gr acc" "torch acc"
for threads in 1 2; do
  g=$(OMP_NUM_THREADS=$threads "$app" --threads "$threads" --max-steps "$steps" --device "$device" --json)
  t=$(LD_LIBRARY_PATH=$openblas OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=$threads \
      "$python" "$root/bench/train_mnist_torch.py" --threads "$threads" --max-steps "$steps" --device "$device" --json)
  gi=$(echo "$g" | field images_per_sec); ti=$(echo "$t" | field images_per_sec)
  ga=$(echo "$g" | field test_accuracy); ta=$(echo "$t" | field test_accuracy)
  printf "%-8s %14.0f %14.0f %7.2fx %10.4f %10.4f\n" "$threads" "$gi" "$ti" "$(echo "$gi / $ti" | bc -l)" "$ga" "$ta"
done
