#!/usr/bin/env bash
# DDP across an emulated cluster (bench/cluster.sh: 2 network namespaces x 1 rank, 1 Gbit/s
# links) equals one process on the concatenated batch: train_gpt in float64, 3 steps, the
# weights to 1e-12 (rank r's windows are rows r, r + 2, ... of the one process's batch).
# Where cluster.sh cannot build its cluster for want of tc, a bridge or the tbf qdisc (the
# rate limit does not bear on the result), the two nodes run on a plain veth pair instead
# (netns_pair.sh). Usage: test_cluster_ddp.sh <gradring-run> <train_gpt>. Exits 77 (skipped)
# only where no network namespace can be made.
set -euo pipefail
run=$1
app=$2
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/../../bench/cluster.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "cluster_ddp: FAILED: $*"; echo "--- output:"; cat "$tmp/out.log"; exit 1; }
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GRADRING_RESTART_COUNT OMP_NUM_THREADS
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

for ((i = 0; i < 2000; ++i)); do echo "to be or not to be that is the question $((i * 7919 % 1000))"; done > "$tmp/corpus.txt"
common=(--data "$tmp/corpus.txt" --dtype float64 --layers 2 --heads 2 --embd 32 --block 16 --warmup 1
        --eval-every 0 --eval-windows 8 --seed 5 --steps 3 --sample 0 --threads 1)

timeout 300 "$app" "${common[@]}" --batch-size 8 --save "$tmp/one.st" > "$tmp/out.log" 2>&1 ||
  fail "train_gpt (one process): exit code $?"
status=0
how="2 emulated nodes x 1 rank (1 Gbit/s links)"
"$cluster" --nodes 2 --rate 1gbit --timeout 300 --launcher "$run" -- "$app" "${common[@]}" --batch-size 4 \
  --save "$tmp/cluster.st" --json > "$tmp/out.log" 2>&1 || status=$?
if [ "$status" = 77 ]; then
  why=$(grep -m1 "SKIPPED" "$tmp/out.log" || true)
  echo "cluster_ddp: bench/cluster.sh could not build its cluster ($why); running on a veth pair instead"
  how="2 nodes x 1 rank on a veth pair (no rate limit: $why)"
  status=0
  "$here/netns_pair.sh" "$run" 1 -- "$app" "${common[@]}" --batch-size 4 --save "$tmp/cluster.st" --json \
    > "$tmp/out.log" 2>&1 || status=$?
  if [ "$status" = 77 ]; then
    cat "$tmp/out.log"
    echo "cluster_ddp: SKIPPED: cannot create network namespaces"
    exit 77
  fi
fi
[ "$status" = 0 ] || fail "$how, train_gpt: exit code $status"
grep '^\[node 0\] \[rank 0\] {' "$tmp/out.log" | tail -1 | sed 's/^[^{]*//' |
  "$py" -c 'import json, sys; sys.exit(json.loads(sys.stdin.read())["world_size"] != 2)' || fail "not 2 ranks"
# The same tensor names, shapes and dtypes, and every value within 1e-12 (NaN fails).
d=$("$py" "$here/../apps/safetensors_maxdiff.py" --max 1e-12 "$tmp/one.st" "$tmp/cluster.st") ||
  fail "the weights differ from one process's: $d"
echo "cluster_ddp: $how vs one process: max difference $d"
