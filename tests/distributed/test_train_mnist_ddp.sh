#!/usr/bin/env bash
# train_mnist data-parallel on 2 ranks through gradring-run: the job finishes, only rank 0
# prints the final JSON (world_size 2), --save writes one file, --trace writes one Chrome
# trace per rank; a short --sync-bn run finishes too; --sync-bn without a launcher is refused
# with a message naming gradring-run. Trains on a synthetic MNIST-format set (make_port_data:
# 2560 training, 500 test images), so it runs the same on every machine; a data dir given as
# the fourth argument (e.g. /usr/share/datasets/fashion-mnist) is used instead.
# Usage: test_train_mnist_ddp.sh <gradring-run> <train_mnist> <make_port_data> [data dir]
set -euo pipefail
run=$1
app=$2
make_data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "train_mnist_ddp: FAILED: $*"; echo "--- output:"; cat "$tmp/out.log"; exit 1; }
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
: > "$tmp/out.log"
data=${4:-$tmp/data}
min_accuracy=0.1  # 20 steps beat chance on Fashion-MNIST
if [ -z "${4:-}" ]; then
  mkdir "$data"
  "$make_data" mnist "$data" 2560 500 || fail "make_port_data: exit code $?"
  min_accuracy=0.9  # the synthetic classes (where a bright square sits) are learnt in 20 steps (seen: 1.0)
fi

# 1. Plain DDP, 20 steps of 64 images per rank.
mkdir "$tmp/save"
timeout 300 "$run" --nproc-per-node 2 --standalone "$app" --data "$data" --max-steps 20 --warmup 2 --json \
  --save "$tmp/save/model.safetensors" --trace "$tmp/trace" > "$tmp/out.log" 2>&1 || fail "exit code $?"
json=$(grep -c '^\[rank [0-9]*\] {' "$tmp/out.log" || true)
[ "$json" = 1 ] || fail "expected one JSON line (rank 0's), found $json"
line=$(grep '^\[rank 0\] {' "$tmp/out.log") || fail "no JSON line from rank 0"
num() { echo "$line" | sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p"; }
[ "$(num world_size)" = 2 ] || fail "JSON: world_size is not 2: $line"
[ "$(num steps)" = 20 ] || fail "JSON: steps is not 20: $line"
# The accuracy is above min_accuracy; images/s and the loss are positive (a NaN fails: sed finds no number).
awk -v a="$(num test_accuracy)" -v i="$(num images_per_sec)" -v l="$(num train_loss)" -v m="$min_accuracy" \
  'BEGIN { exit !(a > m && a <= 1 && i > 0 && l > 0) }' || fail "JSON: implausible values: $line"
files=$(ls "$tmp/save" | wc -l)
[ "$files" = 1 ] || fail "--save: expected 1 file, found $files: $(ls "$tmp/save")"
[ -s "$tmp/save/model.safetensors" ] || fail "--save: model.safetensors is empty"
for r in 0 1; do
  [ -s "$tmp/trace/rank$r.json" ] || fail "--trace: no $tmp/trace/rank$r.json"
done

# 2. SyncBatchNorm, a few steps.
timeout 300 "$run" --nproc-per-node 2 --standalone "$app" --data "$data" --max-steps 5 --warmup 1 --json --sync-bn \
  > "$tmp/out.log" 2>&1 || fail "--sync-bn run: exit code $?"
grep -q '^\[rank 0\] {.*"world_size":2' "$tmp/out.log" || fail "--sync-bn run: no JSON with world_size 2 from rank 0"

# 3. --sync-bn outside a distributed run: refused, naming the launcher.
set +e
"$app" --data "$data" --sync-bn > "$tmp/out.log" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "--sync-bn without a launcher: exit code $rc, expected 2"
grep -q "gradring-run" "$tmp/out.log" || fail "--sync-bn without a launcher: message does not name gradring-run"
# 4. --device cuda without a usable GPU (this machine, or a CPU-only build): each rank says why
#    and trains on the CPU (the JSON names the device); --backend nccl without --device cuda
#    is refused. Skipped where the build has CUDA and the machine has a GPU per rank.
if ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi -L > /dev/null 2>&1; then
  timeout 300 "$run" --nproc-per-node 2 --standalone "$app" --data "$data" --max-steps 3 --warmup 1 --json \
    --device cuda > "$tmp/out.log" 2>&1 || fail "--device cuda without a GPU: exit code $?"
  grep -q "running on \(the \)\?CPU" "$tmp/out.log" || fail "--device cuda without a GPU: no CPU notice"
  grep -q '^\[rank 0\] {.*"device":"cpu"' "$tmp/out.log" || fail "--device cuda without a GPU: JSON device is not cpu"
fi
set +e
"$app" --data "$data" --max-steps 1 --backend nccl > "$tmp/out.log" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "--backend nccl on the CPU: exit code $rc, expected 1"
grep -q "needs --device cuda" "$tmp/out.log" || fail "--backend nccl on the CPU: no message naming --device cuda"
echo "train_mnist_ddp: OK"
