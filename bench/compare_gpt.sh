#!/usr/bin/env bash
# Trains the GPT with gradring (apps/train_gpt) and with one or more PyTorch peers
# (bench/gpt_torch.py: the same model, batches and optimizer), 1 process x 1 thread and 2
# ranks x 1 thread under DDP (Gloo on both sides; both launched by gradring-run, which sets
# torchrun's variables), in float32 and/or bf16 (CPU autocast on both sides). The alternating protocol: each of
# --repeat rounds runs, per preset and rank count, every dtype's gradring run and then each
# peer's, one after the other, so that all programs see the same phases of the machine;
# each cell is the median over the rounds, and every round's figure is printed after the
# table. The ratio is against the fastest peer of that row (named): on some CPUs Debian's
# torch 1.13 with OpenBLAS beats the pip wheel's MKL on these GEMM-bound steps.
# The header names the machine, gradring's commit and each peer (torch version, BLAS
# actually loaded, attention kind; bench/peers.py). Usage:
#   bench/compare_gpt.sh --python PY [--python PY2 ...] [--dtype "float32 bf16"] [--presets "tiny small"]
#                        [--ranks "1 2"] [--steps N] [--repeat R] [--build DIR] [--openblas DIR] [--data FILE]
#                        [--device cpu|cuda]
#     --python PY   a peer's Python (repeat for several): a venv with `pip install torch`, and/or
#                   Debian's /usr/bin/python3 with python3-torch (run on OpenBLAS, see bench/peers.py)
#     --dtype LIST  float32 (default), bf16, or both; with both, a "bf16 / float32" table follows
#     --steps N     training steps per run, the first 3 untimed (default 60)
#     --repeat R    rounds (default 3)
#     --device D    cpu (default) or cuda: both trainers run there (MFU against that device's peak)
#     --data FILE   the text to train on (default: both programs' default, scripts/setup --with-data's Shakespeare)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
pythons=()
steps=60
repeat=3
presets="tiny small"
ranks_list="1 2"
dtypes="float32"
openblas=()
data=()
device=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --python) pythons+=("$2"); shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --presets) presets=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --dtype) dtypes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --openblas) openblas=(--openblas "$2"); shift 2 ;;
    --data) data=(--data "$2"); shift 2 ;;
    --device) device=$2; shift 2 ;;
    *) echo "compare_gpt: unknown argument $1 (expected --python PY, --dtype LIST, --presets LIST, --ranks LIST," \
            "--steps N, --repeat R, --build DIR, --openblas DIR, --data FILE, --device D)" >&2; exit 2 ;;
  esac
done
[ ${#pythons[@]} -gt 0 ] || { echo "compare_gpt: give at least one peer with --python PY" >&2; exit 2; }
for d in $dtypes; do
  case "$d" in float32|bf16) ;; *) echo "compare_gpt: --dtype: float32 or bf16, not $d" >&2; exit 2 ;; esac
done
app=$build/apps/train_gpt
launcher=$build/apps/gradring-run
for f in "$app" "$launcher"; do
  [ -x "$f" ] || { echo "compare_gpt: $f not found; build first (cmake --build $build --target train_gpt gradring-run)" >&2; exit 1; }
done
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The header: what ran where.
echo "# compare_gpt: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# machine: $(python3 "$root/bench/peers.py" machine)"
echo "# gradring: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (modified)'), $app"
labels=(A B C D E F G H)
[ ${#pythons[@]} -le ${#labels[@]} ] || { echo "compare_gpt: at most ${#labels[@]} peers" >&2; exit 2; }
peer_envs=()
for i in "${!pythons[@]}"; do
  desc=$(python3 "$root/bench/peers.py" check "${pythons[$i]}" "${openblas[@]}") ||
    { echo "compare_gpt: peer ${pythons[$i]} is not usable: $desc" >&2; exit 1; }
  echo "# peer ${labels[$i]}: $desc"
  peer_envs+=("$(python3 "$root/bench/peers.py" env "${pythons[$i]}" "${openblas[@]}")")
done
echo "# protocol: $repeat rounds; in each, per preset and rank count: for each dtype gradring, then every peer;" \
     "$steps steps per run (the first 3 untimed); medians over the rounds"

common=(--steps "$steps" --eval-every 0 --eval-windows 16 --threads 1 --seed 1 --device "$device" "${data[@]}")
# run PROGRAM PRESET RANKS DTYPE: one run's JSON line. PROGRAM: gr or a peer's index.
run() {
  local program=$1 preset=$2 ranks=$3 dtype=$4
  if [ "$program" = gr ]; then
    if [ "$ranks" -eq 1 ]; then
      OMP_NUM_THREADS=1 "$app" --model "$preset" "${common[@]}" --dtype "$dtype" --sample 0 --json
    else
      OMP_NUM_THREADS=1 "$launcher" --nproc-per-node "$ranks" --standalone "$app" --model "$preset" "${common[@]}" \
        --dtype "$dtype" --sample 0 --json
    fi
  else
    local py=${pythons[$program]}
    # shellcheck disable=SC2086  # the peer's VAR=VALUE words
    if [ "$ranks" -eq 1 ]; then
      env OMP_NUM_THREADS=1 ${peer_envs[$program]} "$py" "$root/bench/gpt_torch.py" --model "$preset" "${common[@]}" \
        --dtype "$dtype" --json
    else
      # gradring-run sets torchrun's variables; Debian's torchrun (1.13) fails under Python 3.11.
      env OMP_NUM_THREADS=1 ${peer_envs[$program]} "$launcher" --nproc-per-node "$ranks" --standalone "$py" \
        "$root/bench/gpt_torch.py" --model "$preset" "${common[@]}" --dtype "$dtype" --json 2>/dev/null
    fi
  fi | grep -o '{.*}' | tail -1
}

programs=(gr)
for i in "${!pythons[@]}"; do programs+=("$i"); done
for ((round = 1; round <= repeat; round++)); do
  for preset in $presets; do
    for ranks in $ranks_list; do
      for dtype in $dtypes; do
        for program in "${programs[@]}"; do
          out=$(run "$program" "$preset" "$ranks" "$dtype") ||
            { echo "compare_gpt: the $program run ($preset, $ranks ranks, $dtype) failed" >&2; exit 1; }
          [ -n "$out" ] || { echo "compare_gpt: the $program run ($preset, $ranks ranks, $dtype) printed no JSON" >&2; exit 1; }
          echo "$round $preset $ranks $dtype $program $out" >> "$tmp/runs"
        done
      done
    done
  done
done

python3 - "$tmp/runs" "${#pythons[@]}" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)  # (preset, ranks, dtype, program) -> [json]
order = []
for line in open(sys.argv[1]):
    rnd, preset, ranks, dtype, program, js = line.split(" ", 5)
    key = (preset, int(ranks), dtype)
    if key not in order:
        order.append(key)
    runs[key + (program,)].append(json.loads(js))
peers = [str(i) for i in range(int(sys.argv[2]))]
name = lambda p: "gradring" if p == "gr" else chr(65 + int(p))
med = lambda key, field: statistics.median(r[field] for r in runs[key])

def mfu(key, peak_key):
    peak = med(peak_key, "peak_gflops") * 1e9  # the same peak for both sides: gradring's measured one
    if key[-1] == "gr":
        return med(key, "mfu")
    return statistics.median(r["tokens_per_sec"] * r["flops_per_token"] for r in runs[key]) / peak

head = ["preset", "ranks", "dtype", "gradring t/s"] + [f"{name(p)} t/s" for p in peers] + ["vs best peer", "gr MFU"] + \
       [f"{name(p)} MFU" for p in peers] + ["gr RSS MB"] + [f"{name(p)} RSS" for p in peers]
rows = []
for key in order:
    gr = key + ("gr",)
    g = med(gr, "tokens_per_sec")
    t = {p: med(key + (p,), "tokens_per_sec") for p in peers}
    best = max(peers, key=lambda p: t[p])
    rows.append([key[0], str(key[1]), key[2], f"{g:.0f}"] + [f"{t[p]:.0f}" for p in peers] +
                [f"{g / t[best]:.2f}x ({name(best)})", f"{100 * mfu(gr, gr):.1f}%"] +
                [f"{100 * mfu(key + (p,), gr):.1f}%" for p in peers] +
                [f"{med(gr, 'peak_rss_mb'):.0f}"] + [f"{med(key + (p,), 'peak_rss_mb'):.0f}" for p in peers])
widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
for r in [head] + rows:
    print("  ".join(c.rjust(w) if i > 2 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))

dtypes = sorted({k[2] for k in order})
if dtypes == ["bf16", "float32"]:
    print("\nbf16 / float32 (tokens/s, medians):")
    for preset, ranks in dict.fromkeys((k[0], k[1]) for k in order):
        parts = []
        for p in ["gr"] + peers:
            f32, b16 = (med((preset, ranks, d, p), "tokens_per_sec") for d in ("float32", "bf16"))
            parts.append(f"{name(p)} {b16 / f32:.2f}x")
        print(f"  {preset} {ranks} rank(s): " + ", ".join(parts))

print("\nevery round (tokens/s):")
for key in order:
    cells = [f"{name(p)} " + " ".join(f"{r['tokens_per_sec']:.0f}" for r in runs[key + (p,)]) for p in ["gr"] + peers]
    print(f"  {key[0]} {key[1]} {key[2]}: " + "; ".join(cells))
PY
