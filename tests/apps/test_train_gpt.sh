#!/usr/bin/env bash
# train_gpt end to end on a small corpus in float64 with dropout 0:
#   - DDP on 2 and 4 ranks (Gloo, and shm on 2) equals one process on the concatenated batch,
#     to 1e-12 (rank r's windows are rows r, r + R, ... of the one process's batch);
#   - --grad-accum 4 equals one step on a 4x batch, to 1e-12;
#   - killed after a snapshot and started again, it ends bitwise where an uninterrupted run ends;
#   - --zero 1 (ZeRO-1) on 2 ranks equals one process; with rank 1 SIGKILLed mid-run and the
#     group restarted by gradring-run, it resumes from the per-rank sharded snapshots bitwise;
#   - --fsdp (fully_shard: blocks, then the model) on 1, 2 and 4 ranks and with --grad-accum equals
#     one process (1e-12); killed on rank 1 and restarted by gradring-run it resumes from its
#     checkpoint folder bitwise; a checkpoint of 4 ranks resumes on 2 (1e-12 of the 4-rank run);
#   - --checkpoint-activations (dropout 0.1) ends bitwise where the run without ends, on 1 and 2
#     ranks, and its forward keeps less; the activation peak is never below what the forward kept;
#   - --json carries the figures; --deterministic is plumbed and changes no CPU bit; --generate
#     samples from the saved weights; bad input fails clearly;
#   - --dtype bf16 (CPU autocast) trains: the loss falls over 30 steps.
# Usage: test_train_gpt.sh <gradring-run> <train_gpt>
set -euo pipefail
run=$1
app=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "train_gpt: FAILED: $*"; echo "--- output:"; cat "$tmp/out.log"; exit 1; }
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GRADRING_RESTART_COUNT OMP_NUM_THREADS
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

# About 60 KB of text from a small vocabulary: deterministic, and quick to learn a little.
"$py" -c '
import random
r = random.Random(0)
words = "to be or not that is the question whether tis nobler in the mind to suffer slings and arrows".split()
print(" ".join(r.choice(words) for _ in range(14000)))' > "$tmp/corpus.txt"

close() {  # close A B WHAT: the same tensor names and shapes, every weight within 1e-12 (NaN fails)
  local d
  d=$("$py" "$(dirname "$0")/safetensors_maxdiff.py" --max 1e-12 "$1" "$2") || fail "$3: weights differ: $d"
  echo "train_gpt: $3: max difference $d"
}

base=(--data "$tmp/corpus.txt" --dtype float64 --layers 2 --heads 2 --embd 32 --block 16 --warmup 1
      --eval-every 0 --eval-windows 8 --seed 5)
common=("${base[@]}" --steps 3 --sample 0)
gpt() { timeout 300 "$app" --threads 1 "$@" > "$tmp/out.log" 2>&1 || fail "train_gpt $*: exit code $?"; }
one() { gpt "${common[@]}" "$@"; }  # the 3-step runs the equalities compare
ranks() {  # ranks N [options]: N ranks under gradring-run
  local n=$1; shift
  timeout 300 "$run" --nproc-per-node "$n" --standalone "$app" "${common[@]}" "$@" > "$tmp/out.log" 2>&1 ||
    fail "gradring-run --nproc-per-node $n train_gpt $*: exit code $?"
}

one --batch-size 8 --save "$tmp/one.st" --json
tail -1 "$tmp/out.log" | "$py" -c '
import json, sys
j = json.loads(sys.stdin.read())
for k in ("tokens_per_sec", "train_loss", "val_loss", "steps", "world_size", "mfu", "peak_rss_mb", "peak_source"):
    assert k in j, k
assert j["steps"] == 3 and j["world_size"] == 1 and j["tokens_per_sec"] > 0
assert j["deterministic"] is False and j["peak_source"].startswith("measured")' || fail "--json lacks a field"
# --deterministic reaches gr::use_deterministic_algorithms; on the CPU it changes no arithmetic.
one --batch-size 8 --deterministic --save "$tmp/det.st" --json
tail -1 "$tmp/out.log" | "$py" -c 'import json, sys; assert json.loads(sys.stdin.read())["deterministic"] is True' ||
  fail "--deterministic: the JSON does not say deterministic"
d=$("$py" "$(dirname "$0")/safetensors_maxdiff.py" --max 0 "$tmp/one.st" "$tmp/det.st") ||
  fail "--deterministic changed the CPU's weights (max difference $d)"
ranks 2 --batch-size 4 --save "$tmp/two.st"
close "$tmp/one.st" "$tmp/two.st" "2 ranks (gloo) vs one process"
ranks 2 --batch-size 4 --backend shm --save "$tmp/two_shm.st"
close "$tmp/one.st" "$tmp/two_shm.st" "2 ranks (shm) vs one process"
ranks 4 --batch-size 2 --save "$tmp/four.st"
close "$tmp/one.st" "$tmp/four.st" "4 ranks (gloo) vs one process"
one --batch-size 2 --grad-accum 4 --save "$tmp/accum.st"
close "$tmp/one.st" "$tmp/accum.st" "--grad-accum 4 vs a 4x batch"
ranks 2 --batch-size 2 --grad-accum 2 --save "$tmp/two_accum.st"
close "$tmp/one.st" "$tmp/two_accum.st" "2 ranks with --grad-accum 2 (no_sync) vs one process"
ranks 2 --batch-size 4 --zero 1 --save "$tmp/two_zero.st"
close "$tmp/one.st" "$tmp/two_zero.st" "2 ranks with --zero 1 (ZeRO-1) vs one process"

# --checkpoint-activations with dropout: the weights of one process and of 2 ranks equal those
# without checkpointing, bitwise; the forward keeps less (--json's activation figures).
# The peak is never below what the forward kept (Note [Activation peak]).
kept() {
  tail -1 "$tmp/out.log" | "$py" -c 'import json, sys
j = json.loads(sys.stdin.read())
assert j["activation_peak_bytes"] >= j["activation_kept_bytes"] > 0, j
print(j["activation_kept_bytes"])'
}
one --batch-size 8 --dropout 0.1 --save "$tmp/drop.st" --json
kept_plain=$(kept) || fail "the activation figures: peak below kept"
one --batch-size 8 --dropout 0.1 --checkpoint-activations --save "$tmp/drop_ckpt.st" --json
kept_ckpt=$(kept) || fail "the activation figures with --checkpoint-activations: peak below kept"
d=$("$py" "$(dirname "$0")/safetensors_maxdiff.py" --max 0 "$tmp/drop.st" "$tmp/drop_ckpt.st") ||
  fail "--checkpoint-activations: the weights differ from those without (max difference $d)"
[ "$kept_ckpt" -gt 0 ] && [ "$kept_ckpt" -lt "$kept_plain" ] ||
  fail "--checkpoint-activations: the forward kept $kept_ckpt bytes, without $kept_plain"
ranks 2 --batch-size 4 --dropout 0.1 --save "$tmp/two_drop.st"
ranks 2 --batch-size 4 --dropout 0.1 --checkpoint-activations --save "$tmp/two_drop_ckpt.st"
d=$("$py" "$(dirname "$0")/safetensors_maxdiff.py" --max 0 "$tmp/two_drop.st" "$tmp/two_drop_ckpt.st") ||
  fail "--checkpoint-activations on 2 ranks: the weights differ from those without (max difference $d)"
echo "train_gpt: --checkpoint-activations: the same weights bitwise (1 process and 2 ranks, dropout 0.1); the forward kept $kept_ckpt bytes, $kept_plain without"

# Resume: 5 steps straight, against a run SIGKILLed after step 3 (snapshots every step) and
# started again: it resumes at step 3. Dropout on: the generator's state is in the snapshot.
resume=(--batch-size 4 --steps 5 --dropout 0.1 --sample 0)
gpt "${base[@]}" "${resume[@]}" --save "$tmp/straight.st"
set +e
GRADRING_TEST_KILL_AT_STEP=3 timeout 300 "$app" "${base[@]}" --threads 1 "${resume[@]}" --snapshot "$tmp/snap" \
  --save-every 1 > "$tmp/out.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 137 ] || fail "the run to be killed ended with exit code $rc, not 137 (SIGKILL)"
gpt "${base[@]}" "${resume[@]}" --snapshot "$tmp/snap" --save "$tmp/resumed.st"
grep -q "resuming from $tmp/snap at step 3" "$tmp/out.log" || fail "the second start did not resume at step 3"
cmp "$tmp/straight.st" "$tmp/resumed.st" || fail "the resumed run's weights differ from the uninterrupted run's"

# ZeRO-1 resume: 2 ranks, 5 steps straight, against a run whose rank 1 is SIGKILLed after
# step 3 under gradring-run --max-restarts 1: the group restarts and each rank resumes from
# its own snapshot (FILE.rank<r>, its shard of the AdamW state) at step 3.
zero_resume=(--batch-size 2 --steps 5 --dropout 0.1 --sample 0 --zero 1)
zero_ranks() {  # zero_ranks [launcher options] -- [train_gpt options]
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  timeout 300 "$run" --nproc-per-node 2 --standalone "${opts[@]}" "$app" "${base[@]}" --threads 1 "${zero_resume[@]}" \
    "$@" > "$tmp/out.log" 2>&1 || fail "gradring-run ${opts[*]} train_gpt --zero 1 $*: exit code $?"
}
zero_ranks -- --save "$tmp/zero_straight.st"
GRADRING_TEST_KILL_AT_STEP=3 GRADRING_TEST_KILL_RANK=1 zero_ranks --max-restarts 1 -- --snapshot "$tmp/zsnap" \
  --save-every 1 --save "$tmp/zero_resumed.st"
grep -q "rank 1 .*signal 9" "$tmp/out.log" || fail "--zero 1: rank 1 was not killed"
grep -q "resuming from $tmp/zsnap.rank0 at step 3" "$tmp/out.log" || fail "--zero 1: the restarted group did not resume at step 3"
[ -f "$tmp/zsnap.rank1" ] || fail "--zero 1: rank 1 wrote no snapshot of its own"
cmp "$tmp/zero_straight.st" "$tmp/zero_resumed.st" || fail "--zero 1: the resumed run's weights differ from the uninterrupted run's"
echo "train_gpt: --zero 1: rank 1 killed after step 3, resumed from the sharded snapshots bitwise"

# --fsdp: 1, 2 and 4 ranks, and 2 ranks accumulating 2 micro-batches, against one process.
ranks 1 --batch-size 8 --fsdp --save "$tmp/one_fsdp.st"
close "$tmp/one.st" "$tmp/one_fsdp.st" "--fsdp on 1 rank vs one process"
ranks 2 --batch-size 4 --fsdp --save "$tmp/two_fsdp.st"
close "$tmp/one.st" "$tmp/two_fsdp.st" "--fsdp on 2 ranks (gloo) vs one process"
ranks 4 --batch-size 2 --fsdp --backend shm --save "$tmp/four_fsdp.st"
close "$tmp/one.st" "$tmp/four_fsdp.st" "--fsdp on 4 ranks (shm) vs one process"
ranks 2 --batch-size 2 --grad-accum 2 --fsdp --save "$tmp/two_fsdp_accum.st"
close "$tmp/one.st" "$tmp/two_fsdp_accum.st" "--fsdp on 2 ranks with --grad-accum 2 vs one process"
# --fsdp evaluation is collective (the units' gathers): 7 windows over 4 ranks at batch 1 give
# rank 0 two batches and rank 3 one, so rank 3 runs an uncounted forward; the validation loss
# still equals one process's.
val_loss() { tail -1 "$tmp/out.log" | "$py" -c 'import json, sys; l = sys.stdin.read(); print(json.loads(l[l.index("{"):])["val_loss"])'; }
ev=(--data "$tmp/corpus.txt" --dtype float64 --layers 2 --heads 2 --embd 32 --block 16 --warmup 1 --eval-every 0
    --eval-windows 7 --seed 5 --steps 3 --sample 0 --json)
gpt "${ev[@]}" --batch-size 4
v_one=$(val_loss)
timeout 300 "$run" --nproc-per-node 4 --standalone "$app" "${ev[@]}" --threads 1 --batch-size 1 --fsdp > "$tmp/out.log" 2>&1 ||
  fail "train_gpt --fsdp on 4 ranks, 7 validation windows: exit code $?"
v_fsdp=$(val_loss)
"$py" -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 1e-12 else 1)' "$v_one" "$v_fsdp" ||
  fail "--fsdp on 4 ranks with 7 validation windows: val loss $v_fsdp, one process $v_one"
echo "train_gpt: --fsdp evaluation over uneven shares of windows: val loss $v_fsdp (one process $v_one)"

# --fsdp resume: rank 1 SIGKILLed after step 3 under --max-restarts 1; the group resumes from the
# checkpoint folder (rank<r>.safetensors + index.json) bitwise (dropout on: the generators are in
# it). Then a 4-rank checkpoint of step 3 continued on 2 ranks ends within 1e-12 of the 4-rank
# run (the same global batches; dropout off, as the masks depend on the ranks' share of a batch).
fsdp_resume=(--steps 5 --sample 0 --fsdp)
fsdp_ranks() {  # fsdp_ranks N [launcher options] -- [train_gpt options]
  local n=$1 opts=()
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  timeout 300 "$run" --nproc-per-node "$n" --standalone "${opts[@]}" "$app" "${base[@]}" --threads 1 "${fsdp_resume[@]}" \
    "$@" > "$tmp/out.log" 2>&1 || fail "gradring-run -n $n ${opts[*]} train_gpt --fsdp $*: exit code $?"
}
fsdp_ranks 2 -- --batch-size 2 --dropout 0.1 --save "$tmp/fsdp_straight.st"
GRADRING_TEST_KILL_AT_STEP=3 GRADRING_TEST_KILL_RANK=1 fsdp_ranks 2 --max-restarts 1 -- --batch-size 2 --dropout 0.1 \
  --snapshot "$tmp/fckpt" --save-every 1 --save "$tmp/fsdp_resumed.st"
grep -q "rank 1 .*signal 9" "$tmp/out.log" || fail "--fsdp: rank 1 was not killed"
grep -q "resuming from $tmp/fckpt at step 3 (saved on 2 ranks)" "$tmp/out.log" || fail "--fsdp: the group did not resume at step 3"
[ -f "$tmp/fckpt/rank1.safetensors" ] && [ -f "$tmp/fckpt/index.json" ] || fail "--fsdp: no checkpoint folder"
cmp "$tmp/fsdp_straight.st" "$tmp/fsdp_resumed.st" || fail "--fsdp: the resumed run's weights differ from the uninterrupted run's"
echo "train_gpt: --fsdp: rank 1 killed after step 3, resumed from the checkpoint folder bitwise"
fsdp_ranks 4 -- --batch-size 1 --save "$tmp/fsdp4_straight.st"
set +e  # every rank killed after step 3 (no restarts): the folder holds the checkpoint of step 3
GRADRING_TEST_KILL_AT_STEP=3 timeout 300 "$run" --nproc-per-node 4 --standalone "$app" "${base[@]}" --threads 1 \
  "${fsdp_resume[@]}" --batch-size 1 --snapshot "$tmp/fckpt4" --save-every 1 > "$tmp/out.log" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] && [ -f "$tmp/fckpt4/index.json" ] || fail "--fsdp: the 4-rank run to be killed ended with $rc, or left no checkpoint"
fsdp_ranks 2 -- --batch-size 2 --snapshot "$tmp/fckpt4" --save "$tmp/fsdp4_on_2.st"
grep -q "resuming from $tmp/fckpt4 at step 3 (saved on 4 ranks)" "$tmp/out.log" || fail "--fsdp: 2 ranks did not resume the 4-rank checkpoint"
close "$tmp/fsdp4_straight.st" "$tmp/fsdp4_on_2.st" "--fsdp: a 4-rank checkpoint continued on 2 ranks vs the 4-rank run"

# --dtype bf16 (float32 weights, CPU autocast): the loss is finite and falls over 30 steps
# (the curve's first and last train losses), and --json names the dtype.
bf16=(--data "$tmp/corpus.txt" --dtype bf16 --layers 2 --heads 2 --embd 32 --block 16 --batch-size 8 --warmup 5
      --eval-every 0 --eval-windows 8 --seed 5 --steps 30 --sample 0)
gpt "${bf16[@]}" --curve "$tmp/bf16.csv" --json
"$py" -c '
import json, math, sys
j = json.loads(open(sys.argv[1]).read().splitlines()[-1])
rows = [l.split(",") for l in open(sys.argv[2]).read().split()]
first, last = float(rows[0][1]), float(rows[-1][1])
assert j["dtype"] == "bf16" and math.isfinite(j["val_loss"]), j
assert math.isfinite(last) and last < first - 0.3, (first, last)
print("train_gpt: --dtype bf16: train loss %.3f -> %.3f, val loss %.3f" % (first, last, j["val_loss"]))' \
  "$tmp/out.log" "$tmp/bf16.csv" || fail "--dtype bf16: the loss did not fall"

# Sampling from the saved weights, and clear errors.
gpt "${base[@]}" --generate --load "$tmp/one.st" --sample 40 --prompt "to be"
[ "$(head -c 5 "$tmp/out.log")" = "to be" ] || fail "--generate does not continue the prompt"
if "$app" --data "$tmp/absent.txt" --steps 1 > "$tmp/out.log" 2>&1; then fail "a missing corpus was accepted"; fi
grep -q "no corpus at '$tmp/absent.txt'" "$tmp/out.log" || fail "the missing-corpus error does not name the file"
if "$app" --model huge > "$tmp/out.log" 2>&1; then fail "--model huge was accepted"; fi
if "$app" --generate > "$tmp/out.log" 2>&1; then fail "--generate without --load was accepted"; fi
grep -q "needs --load" "$tmp/out.log" || fail "--generate without --load: unclear error"
if "$app" --data "$tmp/corpus.txt" --steps 1 --zero 1 > "$tmp/out.log" 2>&1; then fail "--zero 1 on one process was accepted"; fi
grep -q "start train_gpt under gradring-run" "$tmp/out.log" || fail "--zero 1 on one process: unclear error"
if "$app" --data "$tmp/corpus.txt" --embd 30 --heads 4 --steps 1 > "$tmp/out.log" 2>&1; then fail "a width not divisible by the heads was accepted"; fi
grep -q "must be a multiple of the heads" "$tmp/out.log" || fail "width/heads: unclear error"
echo "train_gpt: PASSED"
