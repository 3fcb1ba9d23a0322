#!/usr/bin/env bash
# Real two-node run on one machine: two network namespaces joined by a veth pair
# (netns_pair.sh), one gradring-run per namespace (2 nodes x 2 processes), and an all-reduce
# across them whose results bench_allreduce checks (exit 0 only if every element is right).
# Usage: multinode_netns.sh <gradring-run> <bench_allreduce>. Exits 77 (skipped) without
# the privilege to create namespaces.
set -euo pipefail
run=$1
bench=$2
here=$(cd "$(dirname "$0")" && pwd)
status=0
"$here/netns_pair.sh" "$run" 2 -- "$bench" --backend gloo -b 4K -e 1M -f 16 -n 3 -w 1 || status=$?
if [ $status -eq 77 ]; then
  echo "multinode: SKIPPED: cannot create network namespaces (see above)"
  exit 77
fi
if [ $status -ne 0 ]; then
  echo "multinode: FAILED (exit status $status)"
  exit 1
fi
echo "multinode: 2 nodes x 2 processes across network namespaces: all-reduce correct"
