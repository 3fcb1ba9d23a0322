#!/usr/bin/env bash
# DDP on emulated clusters (bench/cluster.sh), gradring against PyTorch: for every node count,
# link rate and model, bench_ddp (modes overlap, after-backward, per-parameter, none) and
# bench/ddp_torch.py (torchrun, Gloo: overlap, after-backward, none), taking turns, R rounds;
# each run's JSON goes to DIR/<nodes>n_<rate>_<model>_<gr|torch>_<round>.json and
# bench/cluster_table.py DIR prints the medians. 1 rank per node. The peer is --python's torch
# (required unless --no-torch; torch.distributed.run under it, with bench/peers.py's
# environment: Debian's torch 1.13 has a torchrun that fails under Python 3.11, so a venv
# with torch 2.x); DIR/peer.txt names the machine and the peer. Usage:
#   bench/compare_cluster.sh [--nodes "2 4"] [--rates "1gbit 2500mbit 10gbit"] [--models "reference resnet18"]
#                            [--repeat R] [--steps S] [--batch-size B] [--bucket-cap-mb C] [--gradient-as-bucket-view] [--no-torch]
#                            [--out DIR] [--python PY] [-- extra bench_ddp args]
# --batch-size, --bucket-cap-mb and --gradient-as-bucket-view go to both sides (default: each side's own defaults, which agree).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nodes_list="2"
rates="1gbit 2500mbit 10gbit"
models="reference resnet18"
repeat=1
steps=10
torch=1
out=/tmp/compare_cluster
python=
both=()  # arguments for both sides
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes_list=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --batch-size | --bucket-cap-mb) both+=("$1" "$2"); shift 2 ;;
    --gradient-as-bucket-view) both+=("$1"); shift ;;
    --no-torch) torch=0; shift ;;
    --out) out=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "compare_cluster: unknown argument $1" >&2; exit 2 ;;
  esac
done
((torch == 0)) || [ -n "$python" ] || { echo "compare_cluster: --python PY is required (a venv with torch 2.x), or --no-torch" >&2; exit 2; }
mkdir -p "$out"
{
  echo "machine: $(python3 "$root/bench/peers.py" machine)"
  ((torch)) && echo "peer: $(python3 "$root/bench/peers.py" describe "$python")"
} | tee "$out/peer.txt" >&2
# cluster.sh starts one executable per node: torchrun as the peer's Python runs it, with the
# underscore spellings of cluster.sh's flags (torch 1.13's torchrun knows only those).
torchrun=$out/torchrun.sh
if ((torch)); then
  {
    echo '#!/bin/bash'
    echo 'args=(); for a in "$@"; do case "$a" in --node-rank | --nproc-per-node | --master-addr | --master-port) a=${a#--}; a=--${a//-/_} ;; esac; args+=("$a"); done'
    printf 'exec env %s %q -m torch.distributed.run "${args[@]}"\n' "$(python3 "$root/bench/peers.py" env "$python")" "$python"
  } > "$torchrun"
  chmod +x "$torchrun"
fi
# The last JSON object node 0 printed (gradring-run prefixes "[rank 0] ", torchrun nothing).
last_json() { grep -E '^\[node 0\] (\[rank 0\] )?\{' | tail -1 | sed 's/^[^{]*//'; }
for ((round = 1; round <= repeat; ++round)); do
  for n in $nodes_list; do
    for rate in $rates; do
      for model in $models; do
        base=$out/${n}n_${rate}_${model}
        echo "$(date +%T) round $round: $n nodes, $rate, $model (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
        "$root/bench/cluster.sh" --nodes "$n" --rate "$rate" --timeout 590 -- "$root/build/apps/bench_ddp" \
          --model "$model" --steps "$steps" --warmup 2 --json "${both[@]}" "$@" | last_json > "${base}_gr_$round.json" ||
          echo "compare_cluster: gradring run failed" >&2
        if ((torch)); then
          "$root/bench/cluster.sh" --nodes "$n" --rate "$rate" --timeout 590 --launcher "$torchrun" -- \
            "$root/bench/ddp_torch.py" --model "$model" --steps "$steps" --warmup 2 --json "${both[@]}" 2>/dev/null |
            last_json > "${base}_torch_$round.json" || echo "compare_cluster: torch run failed" >&2
        fi
      done
    done
  done
done
python3 "$root/bench/cluster_table.py" "$out"
