#!/usr/bin/env bash
# Real two-node run on one machine: two network namespaces joined by a veth pair, one
# gradring-run per namespace (2 nodes x 2 processes), and an all-reduce across them whose
# results bench_allreduce checks (exit 0 only if every element is right).
# Usage: multinode_netns.sh <gradring-run> <bench_allreduce>. Exits 77 (skipped) without
# the privilege to create namespaces.
set -euo pipefail
run=$1
bench=$2
tag=gr$$
ns0=${tag}n0 ns1=${tag}n1
cleanup() {
  ip netns del "$ns0" 2>/dev/null || true
  ip netns del "$ns1" 2>/dev/null || true
}
trap cleanup EXIT

if ! command -v ip >/dev/null 2>&1; then
  echo "multinode: SKIPPED: the 'ip' command (iproute2) is not installed"
  exit 77
fi
if ! ip netns add "$ns0" 2>/dev/null; then
  echo "multinode: SKIPPED: cannot create network namespaces (needs root or CAP_SYS_ADMIN)"
  exit 77
fi
ip netns add "$ns1"
ip link add "${tag}a" type veth peer name "${tag}b"
ip link set "${tag}a" netns "$ns0"
ip link set "${tag}b" netns "$ns1"
ip -n "$ns0" addr add 10.231.0.1/24 dev "${tag}a"
ip -n "$ns1" addr add 10.231.0.2/24 dev "${tag}b"
for ns in "$ns0" "$ns1"; do
  ip -n "$ns" link set lo up
done
ip -n "$ns0" link set "${tag}a" up
ip -n "$ns1" link set "${tag}b" up

common=(--nnodes 2 --nproc-per-node 2 --master-addr 10.231.0.1 --master-port 29511)
args=(--backend gloo -b 4K -e 1M -f 16 -n 3 -w 1)
ip netns exec "$ns0" timeout 120 "$run" "${common[@]}" --node-rank 0 "$bench" "${args[@]}" > /tmp/${tag}_node0.log 2>&1 &
node0=$!
ip netns exec "$ns1" timeout 120 "$run" "${common[@]}" --node-rank 1 "$bench" "${args[@]}" > /tmp/${tag}_node1.log 2>&1 &
node1=$!
status=0
wait $node0 || status=$?
wait $node1 || status=$?
cat /tmp/${tag}_node0.log /tmp/${tag}_node1.log
rm -f /tmp/${tag}_node0.log /tmp/${tag}_node1.log
if [ $status -ne 0 ]; then
  echo "multinode: FAILED (exit status $status)"
  exit 1
fi
echo "multinode: 2 nodes x 2 processes across network namespaces: all-reduce correct"
