#!/usr/bin/env bash
# Trains the reference CNN with gradring (apps/train_mnist) and with PyTorch
# (bench/train_mnist_torch.py) in one go, alternating the two, at 1 and 2 threads, and prints
# images/s and the ratio. The peer is --python's torch (default Debian's /usr/bin/python3, run
# on OpenBLAS: bench/peers.py); the header names the machine and the peer. Usage:
#   bench/compare_train.sh [--steps N] [--build DIR] [--python PY] [--openblas DIR] [--device cpu|cuda]
#   (default: one full epoch each, on the CPU; --device cuda runs both on the GPU, --python then names a PyTorch with CUDA)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
steps=0
python=/usr/bin/python3
openblas=()
device=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --openblas) openblas=(--openblas "$2"); shift 2 ;;
    --device) device=$2; shift 2 ;;
    *) echo "compare_train: unknown argument $1 (expected --steps N, --build DIR, --python PY, --openblas DIR, --device D)" >&2; exit 2 ;;
  esac
done
app=$build/apps/train_mnist
[ -x "$app" ] || { echo "compare_train: $app not found; build first (cmake --build $build)" >&2; exit 1; }
peer=$(python3 "$root/bench/peers.py" check "$python" "${openblas[@]}") || { echo "compare_train: $peer" >&2; exit 1; }
peer_env=$(python3 "$root/bench/peers.py" env "$python" "${openblas[@]}")
echo "# compare_train: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# machine: $(python3 "$root/bench/peers.py" machine)"
echo "# peer: $peer"

field() { python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

printf "%-8s %14s %14s %8s %10s %10s\n" threads "gradring img/s" "torch img/s" ratio "gr acc" "torch acc"
for threads in 1 2; do
  g=$(OMP_NUM_THREADS=$threads "$app" --threads "$threads" --max-steps "$steps" --device "$device" --json)
  # shellcheck disable=SC2086  # the peer's VAR=VALUE words
  t=$(env OMP_NUM_THREADS=$threads $peer_env "$python" "$root/bench/train_mnist_torch.py" --threads "$threads" \
      --max-steps "$steps" --device "$device" --json)
  gi=$(echo "$g" | field images_per_sec); ti=$(echo "$t" | field images_per_sec)
  ga=$(echo "$g" | field test_accuracy); ta=$(echo "$t" | field test_accuracy)
  printf "%-8s %14.0f %14.0f %7.2fx %10.4f %10.4f\n" "$threads" "$gi" "$ti" "$(echo "$gi / $ti" | bc -l)" "$ga" "$ta"
done
