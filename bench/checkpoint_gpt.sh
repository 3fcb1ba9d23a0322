#!/usr/bin/env bash
# train_gpt with and without --checkpoint-activations (every transformer block but the last a
# gr::utils::checkpoint), 1 process x 1 thread and 2 ranks x 1 thread (DDP, Gloo), alternating
# run by run for --repeat rounds: tokens/s (medians over the rounds), the step-time ratio, and
# the activation memory of the largest micro-step (kept by forward, peak; train_gpt's --json
# figures from the allocator; the peak is the step's above its start, gradient memory held at
# that moment included: Note [Activation peak] in apps/common/activation_memory.h). The bound: checkpointing adds one forward of the blocks, so the
# step may cost at most (F + B + F) / (F + B), F and B the forward and backward times of a
# step without it, read from one profiled run per rank count (train_gpt --profile's "forward"
# and "backward" spans, rank 0). Timing needs a quiet machine (docs/benchmarks.md). Usage:
#   bench/checkpoint_gpt.sh [--presets "small"] [--ranks "1 2"] [--steps N] [--repeat R] [--build DIR] [--data FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
presets="small"
ranks_list="1 2"
steps=20
repeat=3
data=()
while [ $# -gt 0 ]; do
  case "$1" in
    --presets) presets=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --data) data=(--data "$2"); shift 2 ;;
    *) echo "checkpoint_gpt: unknown argument $1 (expected --presets LIST, --ranks LIST, --steps N, --repeat R," \
            "--build DIR, --data FILE)" >&2; exit 2 ;;
  esac
done
app=$build/apps/train_gpt
launcher=$build/apps/gradring-run
for f in "$app" "$launcher"; do
  [ -x "$f" ] || { echo "checkpoint_gpt: $f not found; build first (cmake --build $build --target train_gpt gradring-run)" >&2; exit 1; }
done
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# checkpoint_gpt: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# machine: $(python3 "$root/bench/peers.py" machine)"
echo "# gradring: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (modified)'), $app"
echo "# protocol: $repeat rounds; in each, per preset and rank count: without, then with --checkpoint-activations;" \
     "$steps steps per run (the first min(3, steps / 2) untimed); medians over the rounds"

common=(--eval-every 0 --eval-windows 8 --threads 1 --seed 1 --sample 0 "${data[@]}")
# run PRESET RANKS [options]: train_gpt's output (options include --steps, which train_gpt takes once)
run() {
  local preset=$1 ranks=$2
  shift 2
  if [ "$ranks" -eq 1 ]; then
    OMP_NUM_THREADS=1 "$app" --model "$preset" "${common[@]}" "$@"
  else
    OMP_NUM_THREADS=1 "$launcher" --nproc-per-node "$ranks" --standalone "$app" --model "$preset" "${common[@]}" "$@"
  fi
}

for preset in $presets; do
  for ranks in $ranks_list; do
    run "$preset" "$ranks" --steps 6 --profile "$tmp/trace_${preset}_$ranks.json" > /dev/null ||
      { echo "checkpoint_gpt: the profiled run ($preset, $ranks ranks) failed" >&2; exit 1; }
  done
done
for ((round = 1; round <= repeat; round++)); do
  for preset in $presets; do
    for ranks in $ranks_list; do
      for mode in plain checkpoint; do
        flag=()
        [ "$mode" = checkpoint ] && flag=(--checkpoint-activations)
        out=$(run "$preset" "$ranks" --steps "$steps" "${flag[@]}" --json | grep -o '{.*}' | tail -1) ||
          { echo "checkpoint_gpt: the $mode run ($preset, $ranks ranks) failed" >&2; exit 1; }
        [ -n "$out" ] || { echo "checkpoint_gpt: the $mode run ($preset, $ranks ranks) printed no JSON" >&2; exit 1; }
        echo "$round $preset $ranks $mode $out" >> "$tmp/runs"
      done
    done
  done
done

python3 - "$tmp" <<'PY'
import collections, json, statistics, sys
tmp = sys.argv[1]
runs = collections.defaultdict(list)
order = []
for line in open(tmp + "/runs"):
    rnd, preset, ranks, mode, js = line.split(" ", 4)
    if (preset, ranks) not in order:
        order.append((preset, ranks))
    runs[(preset, ranks, mode)].append(json.loads(js))

def spans(preset, ranks):  # total forward and backward ms of the profiled run's steps
    events = json.load(open(f"{tmp}/trace_{preset}_{ranks}.json"))["traceEvents"]
    total = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("name") in ("forward", "backward"):
            total[e["name"]] += e["dur"]
    return total["forward"], total["backward"]

mib = 1024 * 1024
print("| preset | ranks | tok/s | tok/s ckpt | step ratio | bound (F+B+F)/(F+B) | kept MiB | kept ckpt | peak MiB | peak ckpt | peak falls |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for preset, ranks in order:
    med = lambda mode, field: statistics.median(r[field] for r in runs[(preset, ranks, mode)])
    plain, ckpt = med("plain", "tokens_per_sec"), med("checkpoint", "tokens_per_sec")
    f, b = spans(preset, ranks)
    bound = (f + b + f) / (f + b) if f + b > 0 else float("nan")
    ratio = plain / ckpt
    print(f"| {preset} | {ranks} | {plain:.0f} | {ckpt:.0f} | {ratio:.3f}{'' if ratio <= bound else ' OVER'} | {bound:.3f} "
          f"| {med('plain', 'activation_kept_bytes') / mib:.1f} | {med('checkpoint', 'activation_kept_bytes') / mib:.1f} "
          f"| {med('plain', 'activation_peak_bytes') / mib:.1f} | {med('checkpoint', 'activation_peak_bytes') / mib:.1f} "
          f"| {med('plain', 'activation_peak_bytes') / med('checkpoint', 'activation_peak_bytes'):.2f}x |")
print("\nevery round's tokens/s (plain, checkpoint):")
for preset, ranks in order:
    pairs = zip((r["tokens_per_sec"] for r in runs[(preset, ranks, "plain")]),
                (r["tokens_per_sec"] for r in runs[(preset, ranks, "checkpoint")]))
    print(f"  {preset} {ranks} ranks: " + ", ".join(f"({p:.0f}, {c:.0f})" for p, c in pairs))
PY
