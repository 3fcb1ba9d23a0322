#!/usr/bin/env bash
# Trains the GPT with gradring (apps/train_gpt) and with PyTorch (bench/gpt_torch.py, the same
# model, batches and optimizer) in one go, alternating the two, on the tiny and small presets
# in float32: 1 process x 1 thread, and 2 ranks x 1 thread under DDP (gradring-run with Gloo;
# torch.distributed.run with Gloo). Prints tokens/s, the ratio, MFU and peak resident memory;
# each cell is the median of --repeat runs. The peer is current PyTorch (a venv with
# `pip install torch`), not Debian's 1.13. Usage:
#   bench/compare_gpt.sh --python VENV/bin/python [--steps N] [--repeat R] [--presets "tiny small"] [--build DIR]
#                        [--device cpu|cuda]   (both trainers run there; MFU against that device's peak)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
python=
steps=60
repeat=3
presets="tiny small"
device=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --python) python=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --presets) presets=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    *) echo "compare_gpt: unknown argument $1 (expected --python PY, --steps N, --repeat R, --presets LIST, --build DIR, --device D)" >&2; exit 2 ;;
  esac
done
[ -n "$python" ] || { echo "compare_gpt: --python PY is required (current PyTorch, e.g. a venv's bin/python)" >&2; exit 2; }
"$python" -c "import torch; assert hasattr(torch.nn.functional, 'scaled_dot_product_attention')" 2>/dev/null ||
  { echo "compare_gpt: $python has no PyTorch with F.scaled_dot_product_attention" >&2; exit 1; }
app=$build/apps/train_gpt
launcher=$build/apps/gradring-run
[ -x "$app" ] || { echo "compare_gpt: $app not found; build first (cmake --build $build)" >&2; exit 1; }
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT

field() { "$python" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
median() { "$python" -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
common=(--steps "$steps" --eval-every 0 --eval-windows 16 --threads 1 --seed 1 --device "$device")

printf "%-7s %-6s %12s %12s %7s %7s %9s %10s %10s\n" preset ranks "gradring t/s" "torch t/s" ratio "gr MFU" "torch MFU" "gr RSS MB" "torch RSS"
for preset in $presets; do
  for ranks in 1 2; do
    gs=(); ts=(); gm=(); tm=(); gr_rss=(); t_rss=()
    for ((i = 0; i < repeat; i++)); do
      if [ "$ranks" -eq 1 ]; then
        g=$(OMP_NUM_THREADS=1 "$app" --model "$preset" "${common[@]}" --sample 0 --json)
        t=$(OMP_NUM_THREADS=1 "$python" "$root/bench/gpt_torch.py" --model "$preset" "${common[@]}" --json)
      else
        g=$("$launcher" --nproc-per-node 2 --standalone "$app" --model "$preset" "${common[@]}" --sample 0 --json | grep -o '{.*}' | tail -1)
        t=$(OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --nproc-per-node 2 --standalone \
            "$root/bench/gpt_torch.py" --model "$preset" "${common[@]}" --json 2>/dev/null | grep -o '{.*}' | tail -1)
      fi
      gs+=("$(echo "$g" | field tokens_per_sec)"); ts+=("$(echo "$t" | field tokens_per_sec)")
      gm+=("$(echo "$g" | field mfu)")
      peak=$(echo "$g" | field peak_gflops)
      fpt=$(echo "$t" | field flops_per_token)
      tm+=("$("$python" -c "print($(echo "$t" | field tokens_per_sec) * $fpt / ($peak * 1e9))")")
      gr_rss+=("$(echo "$g" | field peak_rss_mb)"); t_rss+=("$(echo "$t" | field peak_rss_mb)")
    done
    g=$(median "${gs[@]}"); t=$(median "${ts[@]}")
    printf "%-7s %-6s %12.0f %12.0f %6.2fx %6.1f%% %8.1f%% %10.0f %10.0f\n" "$preset" "$ranks" "$g" "$t" \
      "$("$python" -c "print($g / $t)")" "$("$python" -c "print(100 * $(median "${gm[@]}"))")" \
      "$("$python" -c "print(100 * $(median "${tm[@]}"))")" "$(median "${gr_rss[@]}")" "$(median "${t_rss[@]}")"
  done
done
