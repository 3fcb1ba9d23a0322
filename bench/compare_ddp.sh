#!/usr/bin/env bash
# Data-parallel training speed, gradring against PyTorch (Gloo both): apps/train_mnist and
# bench/train_mnist_ddp_torch.py on 1 process and on 2 ranks under gradring-run, 1 thread per
# rank, batch 64 per rank, alternating gradring and torch runs. Prints images/s (all ranks'
# images over the slowest rank's time), the ratio gradring/torch and the scaling efficiency
# (2-rank images/s over twice the 1-process images/s). The peer is --python's torch (default
# Debian's /usr/bin/python3, run on OpenBLAS: bench/peers.py); the header names the machine
# and the peer. Usage:
#   bench/compare_ddp.sh [--steps N] [--repeat R] [--ceiling] [--shm] [--mpi] [--build DIR] [--python PY] [--openblas DIR]
#     --steps N   steps per run (default 0: one full epoch)
#     --repeat R  rounds; each figure is the best of R, and a line of medians follows (default 1)
#     --shm       also run gradring's 2 ranks on its shm backend (one machine, shared memory)
#     --mpi       also run gradring's 2 ranks on the MPI backend (mpirun, shared memory)
#     --ceiling   also run two independent 1-process gradring trainings at once (no DDP) and
#                 print their summed images/s: what two ranks can reach on this machine at
#                 all (shared cores, other load), to read the scaling figures against
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
steps=0
repeat=1
ceiling=0
mpi=0
shm=0
python=/usr/bin/python3
openblas=()
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --ceiling) ceiling=1; shift ;;
    --mpi) mpi=1; shift ;;
    --shm) shm=1; shift ;;
    --build) build=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --openblas) openblas=(--openblas "$2"); shift 2 ;;
    *) echo "compare_ddp: unknown argument $1 (expected --steps N, --repeat R, --ceiling, --shm, --mpi, --build DIR," \
            "--python PY, --openblas DIR)" >&2; exit 2 ;;
  esac
done
app=$build/apps/train_mnist
launcher=$build/apps/gradring-run
for f in "$app" "$launcher"; do
  [ -x "$f" ] || { echo "compare_ddp: $f not found; build first (cmake --build $build)" >&2; exit 1; }
done
peer_text=$(python3 "$root/bench/peers.py" check "$python" "${openblas[@]}") || { echo "compare_ddp: $peer_text" >&2; exit 1; }
peer_env=$(python3 "$root/bench/peers.py" env "$python" "${openblas[@]}")
echo "# compare_ddp: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# machine: $(python3 "$root/bench/peers.py" machine)"
echo "# peer: $peer_text"
peer=$root/bench/train_mnist_ddp_torch.py

# Not inherited from a surrounding launcher: the 1-process runs must not see WORLD_SIZE.
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
export OMP_NUM_THREADS=1

# The JSON object on the last line that holds one (the launcher prefixes "[rank 0] ").
field() {
  python3 -c '
import json, sys
lines = [l[l.index("{"):] for l in sys.stdin.read().splitlines() if "{" in l]
print(json.loads(lines[-1])[sys.argv[1]])' "$1"
}
# shellcheck disable=SC2086  # the peer's VAR=VALUE words
torch_env() { env $peer_env "$@"; }

run() {  # run <config>: prints the JSON-bearing output of one run
  case "$1" in
    gr1) "$app" --threads 1 --max-steps "$steps" --json ;;
    gr2) "$launcher" --nproc-per-node 2 --standalone "$app" --threads 1 --max-steps "$steps" --json ;;
    shm2) "$launcher" --nproc-per-node 2 --standalone "$app" --backend shm --threads 1 --max-steps "$steps" --json ;;
    t1) torch_env "$python" "$peer" --threads 1 --max-steps "$steps" --json ;;
    pair)  # two independent processes at once; prints both outputs
      local other
      other=$(mktemp)
      "$app" --threads 1 --max-steps "$steps" --json > "$other" &
      local pid=$!
      "$app" --threads 1 --max-steps "$steps" --json
      wait "$pid"
      cat "$other"
      rm -f "$other" ;;
    mpi2) OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --bind-to none -x OMP_NUM_THREADS=1 \
            --mca btl self,vader --mca btl_vader_single_copy_mechanism cma \
            "$app" --backend mpi --threads 1 --max-steps "$steps" --json 2>/dev/null ;;
    t2) torch_env "$launcher" --nproc-per-node 2 --standalone "$python" "$peer" --threads 1 --max-steps "$steps" --json ;;
  esac
}

# Sum of images_per_sec over every JSON line (the two processes of "pair").
field_sum() {
  python3 -c '
import json, sys
print(sum(json.loads(l[l.index("{"):])[sys.argv[1]] for l in sys.stdin.read().splitlines() if "{" in l))' "$1"
}

configs=(gr1 t1 gr2 t2)
[ "$ceiling" = 1 ] && configs+=(pair)
[ "$shm" = 1 ] && configs+=(shm2)
[ "$mpi" = 1 ] && configs+=(mpi2)
declare -A best acc all
for config in "${configs[@]}"; do best[$config]=0; acc[$config]=0; all[$config]=""; done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
for ((round = 1; round <= repeat; ++round)); do
  for config in "${configs[@]}"; do  # alternating, so a slow phase of the machine hits both
    out=$(run "$config") || { echo "compare_ddp: run $config failed:" >&2; echo "$out" >&2; exit 1; }
    if [ "$config" = pair ]; then ips=$(echo "$out" | field_sum images_per_sec); else ips=$(echo "$out" | field images_per_sec); fi
    echo "round $round $config: $(printf '%.0f' "$ips") img/s" >&2
    all[$config]+="$ips "
    if (($(echo "$ips > ${best[$config]}" | bc -l))); then
      best[$config]=$ips
      acc[$config]=$(echo "$out" | field test_accuracy)
    fi
  done
done

echo "train_mnist, batch 64 per rank, 1 thread per rank, Gloo; steps: $([ "$steps" = 0 ] && echo 'one epoch' || echo "$steps"), best of $repeat"
printf "%-10s %14s %14s %8s %10s %10s\n" ranks "gradring img/s" "torch img/s" ratio "gr acc" "torch acc"
for n in 1 2; do
  g=${best[gr$n]} t=${best[t$n]}
  printf "%-10s %14.0f %14.0f %7.2fx %10.4f %10.4f\n" "$n" "$g" "$t" "$(echo "$g / $t" | bc -l)" "${acc[gr$n]}" "${acc[t$n]}"
done
printf "%-10s %13.1f%% %13.1f%%\n" "scaling" "$(echo "100 * ${best[gr2]} / (2 * ${best[gr1]})" | bc -l)" \
  "$(echo "100 * ${best[t2]} / (2 * ${best[t1]})" | bc -l)"
if [ "$repeat" -gt 1 ]; then  # the best rounds may come from different phases of the machine
  declare -A med
  for config in "${configs[@]}"; do med[$config]=$(echo "${all[$config]}" | median); done
  printf "median of %d rounds: 1 rank %.0f / %.0f, 2 ranks %.0f / %.0f img/s (gradring / torch), ratio at 2 ranks %.2fx, scaling %.1f%% / %.1f%%\n" \
    "$repeat" "${med[gr1]}" "${med[t1]}" "${med[gr2]}" "${med[t2]}" "$(echo "${med[gr2]} / ${med[t2]}" | bc -l)" \
    "$(echo "100 * ${med[gr2]} / (2 * ${med[gr1]})" | bc -l)" "$(echo "100 * ${med[t2]} / (2 * ${med[t1]})" | bc -l)"
fi
other_backend() {  # other_backend <config> <label> <what>: its row, against torch's Gloo and gradring's 1 process
  local c=$1
  printf "%-10s %14.0f %14s %7.2fx %10.4f   (%s; scaling %.1f%%)\n" "$2" "${best[$c]}" "" \
    "$(echo "${best[$c]} / ${best[t2]}" | bc -l)" "${acc[$c]}" "$3" "$(echo "100 * ${best[$c]} / (2 * ${best[gr1]})" | bc -l)"
  if [ "$repeat" -gt 1 ]; then
    printf "%-10s median of %d rounds %.0f img/s: %.2fx torch's median, scaling %.1f%% against gradring's median 1 process\n" "" \
      "$repeat" "${med[$c]}" "$(echo "${med[$c]} / ${med[t2]}" | bc -l)" "$(echo "100 * ${med[$c]} / (2 * ${med[gr1]})" | bc -l)"
  fi
}
[ "$shm" = 1 ] && other_backend shm2 "2 (shm)" "gradring's shm backend: one machine, shared memory"
[ "$mpi" = 1 ] && other_backend mpi2 "2 (mpi)" "gradring on MPI: mpirun, shared memory"
if [ "$ceiling" = 1 ]; then
  printf "ceiling: two independent 1-process gradring runs at once: %.0f img/s in all (%.1f%% of twice the 1-process figure);\n" \
    "${best[pair]}" "$(echo "100 * ${best[pair]} / (2 * ${best[gr1]})" | bc -l)"
  printf "         2-rank DDP reaches %.1f%% of it (DDP's own cost, apart from the machine's)\n" \
    "$(echo "100 * ${best[gr2]} / ${best[pair]}" | bc -l)"
fi
