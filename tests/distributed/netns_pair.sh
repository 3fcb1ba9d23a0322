#!/usr/bin/env bash
# Two nodes on one machine: two network namespaces joined by a veth pair (no bridge, no rate
# limit: nothing beyond `ip` and veth), one gradring-run per namespace running the program,
# each node's output printed with a "[node i] " prefix (as bench/cluster.sh prints it).
# Usage: netns_pair.sh <gradring-run> <processes per node> [--] program [args...]
# Exits 77 (skipped) without the privilege to create namespaces, 124 after 240 s, otherwise
# with the first failing node's status (0 when both succeed).
set -euo pipefail
run=$1
nproc=$2
shift 2
[ "${1:-}" = -- ] && shift
tag=grp$$
ns0=${tag}n0 ns1=${tag}n1
tmp=$(mktemp -d)
cleanup() {
  ip netns del "$ns0" 2>/dev/null || true
  ip netns del "$ns1" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v ip >/dev/null 2>&1; then
  echo "netns_pair: SKIPPED: the 'ip' command (iproute2) is not installed"
  exit 77
fi
if ! ip netns add "$ns0" 2>/dev/null; then
  echo "netns_pair: SKIPPED: cannot create network namespaces (needs root or CAP_SYS_ADMIN)"
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

common=(--nnodes 2 --nproc-per-node "$nproc" --master-addr 10.231.0.1 --master-port 29511)
pids=()
for i in 0 1; do
  ns=${tag}n$i
  ip netns exec "$ns" timeout 240 "$run" "${common[@]}" --node-rank "$i" "$@" > "$tmp/node$i.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1; do
  s=0
  wait "${pids[$i]}" || s=$?
  [ "$status" = 0 ] && status=$s
done
for i in 0 1; do
  sed "s/^/[node $i] /" "$tmp/node$i.log"
done
exit "$status"
