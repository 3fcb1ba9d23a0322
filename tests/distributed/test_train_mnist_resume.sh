#!/usr/bin/env bash
# train_mnist --snapshot/--save-every: a run SIGKILLed at an arbitrary step and started again
# ends with a model bitwise identical (cmp of the --save files) to an uninterrupted run with
# the same seed, crossing epoch boundaries after the resume: on one process (killed, then
# rerun by hand) and on 2 ranks (rank 1 killed, the group restarted by gradring-run
# --max-restarts 1). A truncated or corrupt snapshot is refused with a clear error.
# Uses the test hook GRADRING_TEST_KILL_AT_STEP / GRADRING_TEST_KILL_RANK (apps/train_mnist.cpp)
# and a synthetic MNIST-format set (make_port_data: 640 training images, 10 batches of 64 per
# epoch, and 500 test images), so it runs the same on every machine.
# Usage: test_train_mnist_resume.sh <gradring-run> <train_mnist> <make_port_data>
set -euo pipefail
run=$1
app=$2
make_data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "train_mnist_resume: FAILED: $*"; echo "--- output:"; cat "$tmp/out.log"; exit 1; }
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GRADRING_RESTART_COUNT
unset GRADRING_TEST_KILL_AT_STEP GRADRING_TEST_KILL_RANK
: > "$tmp/out.log"

mkdir "$tmp/data"
"$make_data" mnist "$tmp/data" 640 500 || fail "make_port_data: exit code $?"
common=(--data "$tmp/data" --threads 1 --seed 3)

# 1. One process: 25 steps over 3 epochs. B is killed after step 17 (its last snapshot is
#    from step 16, mid-epoch 2), then rerun: it resumes at step 16 and crosses into epoch 3.
timeout 300 "$app" "${common[@]}" --epochs 3 --max-steps 25 --save "$tmp/a.st" > "$tmp/out.log" 2>&1 ||
  fail "uninterrupted run: exit code $?"
set +e
GRADRING_TEST_KILL_AT_STEP=17 timeout 300 "$app" "${common[@]}" --epochs 3 --max-steps 25 --save "$tmp/b.st" \
  --snapshot "$tmp/b.snap" --save-every 4 > "$tmp/out.log" 2>&1
rc=$?
set -e
[ "$rc" = 137 ] || fail "the run to be killed: exit code $rc, expected 137 (SIGKILL)"
[ -s "$tmp/b.snap" ] || fail "no snapshot after the kill"
[ ! -e "$tmp/b.st" ] || fail "the killed run wrote its --save file"
timeout 300 "$app" "${common[@]}" --epochs 3 --max-steps 25 --save "$tmp/b.st" --snapshot "$tmp/b.snap" \
  --save-every 4 > "$tmp/out.log" 2>&1 || fail "resumed run: exit code $?"
grep -q "resuming from .*: epoch 2, batch 6, step 16" "$tmp/out.log" || fail "the rerun did not resume at step 16"
cmp "$tmp/a.st" "$tmp/b.st" || fail "one process: the resumed model differs from the uninterrupted one"

# 2. A truncated and a corrupt snapshot are refused, naming the file.
# refused WHAT SNAPSHOT PATTERN: train_mnist exits with 1 and prints PATTERN.
refused() {
  set +e
  "$app" "${common[@]}" --max-steps 1 --snapshot "$2" > "$tmp/out.log" 2>&1
  local rc=$?
  set -e
  [ "$rc" = 1 ] || fail "$1 snapshot: exit code $rc, expected 1"
  grep -q "$3" "$tmp/out.log" || fail "$1 snapshot: no error matching '$3'"
}
bytes=$(stat -c %s "$tmp/b.snap")
head -c $((bytes - 100)) "$tmp/b.snap" > "$tmp/t.snap"
refused truncated "$tmp/t.snap" "load_snapshot: .*t.snap"
cp "$tmp/b.snap" "$tmp/c.snap"
printf '\x55' | dd of="$tmp/c.snap" bs=1 seek=$((bytes - 1000)) conv=notrunc status=none
refused corrupt "$tmp/c.snap" "is corrupt: checksum"

# 3. Two ranks (5 batches per rank and epoch): rank 1 SIGKILLs itself after step 13; the
#    launcher restarts both, they resume from rank 0's snapshot of step 12 and finish.
launch=("$run" --nproc-per-node 2 --standalone)
t0=$(date +%s.%N)
timeout 300 "${launch[@]}" "$app" "${common[@]}" --epochs 4 --max-steps 18 --save "$tmp/d.st" > "$tmp/out.log" 2>&1 ||
  fail "2 ranks, uninterrupted: exit code $?"
t1=$(date +%s.%N)
GRADRING_TEST_KILL_AT_STEP=13 GRADRING_TEST_KILL_RANK=1 timeout 300 "${launch[@]}" --max-restarts 1 "$app" "${common[@]}" \
  --epochs 4 --max-steps 18 --save "$tmp/e.st" --snapshot "$tmp/e.snap" --save-every 3 > "$tmp/out.log" 2>&1 ||
  fail "2 ranks, killed and restarted: exit code $?"
grep -q "resuming from .*: epoch 3, batch 2, step 12" "$tmp/out.log" || fail "2 ranks: the restart did not resume at step 12"
t2=$(date +%s.%N)
cmp "$tmp/d.st" "$tmp/e.st" || fail "2 ranks: the resumed model differs from the uninterrupted one"
grep -q "restart" "$tmp/out.log" || fail "2 ranks: no restart by gradring-run in the output"
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "fault-figure: 2 ranks, rank 1 SIGKILLed after step 13 of 18: 1 restart, run %.1f s vs %.1f s uninterrupted, final model cmp-identical\n", c - b, b - a }'
echo "train_mnist_resume: OK"
