#!/usr/bin/env bash
# An emulated cluster on this machine: N nodes, each a network namespace with one veth link to
# a switch namespace holding a bridge, every link rate-limited by a token bucket (tc tbf) on both
# ends. Runs the launcher (gradring-run, or torchrun: the same flags) in each node with a program,
# prints each node's output, and always tears the cluster down (trap on EXIT, INT and TERM; a
# crashed run's leftovers are removed by the next run or by --cleanup). The kernel here has tbf
# and htb but no netem: links have a rate, no added delay. See docs/benchmarks.md.
#   bench/cluster.sh [options] [--] program [args...]
#     --nodes N            nodes (default 2; at most 200)
#     --rate R             each link's rate in each direction: 1gbit, 2500mbit, 10gbit, ... (default 10gbit)
#     --nproc-per-node P   workers per node (default 1)
#     --mtu M              every link's MTU in bytes, 576..65535 (default 1500; 9000 = jumbo frames)
#     --timeout S          seconds the whole run may take; then every node is stopped (default 600; exit 124)
#     --launcher PATH      launcher started in each node (default: build/apps/gradring-run)
#     --logs DIR           keep each node's output in DIR/node<i>.log (default: a temporary folder)
#     --cleanup            only remove the leftovers of crashed runs, then exit
# Node i has the address 10.77.0.<i+1> on the bridge; node 0 is the master (port 29500). Nothing
# outside the namespaces made here is used. Each worker gets OMP_NUM_THREADS = cores / workers in
# the cluster (at least 1) unless it is set. Exits with the first failing node's status, 124 on the
# timeout, 77 (skipped) where namespaces cannot be made, 2 on bad arguments.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nodes=2
rate=10gbit
nproc=1
mtu=1500
limit=600
launcher=$root/build/apps/gradring-run
logs=""
cleanup_only=0
prefix=grc  # every namespace and link this script makes is grc<pid>..., so leftovers are recognised

usage() { echo "cluster: $*" >&2; sed -n '8,16p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=${2:-}; shift 2 ;;
    --rate) rate=${2:-}; shift 2 ;;
    --nproc-per-node) nproc=${2:-}; shift 2 ;;
    --mtu) mtu=${2:-}; shift 2 ;;
    --timeout) limit=${2:-}; shift 2 ;;
    --launcher) launcher=${2:-}; shift 2 ;;
    --logs) logs=${2:-}; shift 2 ;;
    --cleanup) cleanup_only=1; shift ;;
    --) shift; break ;;
    -*) usage "unknown option $1" ;;
    *) break ;;
  esac
done
[[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 200)) || usage "--nodes must be 1..200, got '$nodes'"
[[ $nproc =~ ^[0-9]+$ ]] && ((nproc >= 1)) || usage "--nproc-per-node must be a positive number, got '$nproc'"
[[ $mtu =~ ^[0-9]+$ ]] && ((mtu >= 576 && mtu <= 65535)) || usage "--mtu must be 576..65535 bytes, got '$mtu'"
[[ $limit =~ ^[0-9]+$ ]] && ((limit >= 1)) || usage "--timeout must be a positive number of seconds, got '$limit'"
# The rate in bits/s, for the bucket size: tc's own units for bits (bit, kbit, mbit, gbit).
[[ $rate =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || usage "--rate must be a number with bit, kbit, mbit or gbit, got '$rate'"
declare -A unit=([bit]=1 [kbit]=1000 [mbit]=1000000 [gbit]=1000000000)
bits_per_s=$((BASH_REMATCH[1] * unit[${BASH_REMATCH[2]}]))
((bits_per_s > 0)) || usage "--rate must be above 0"

skip() { echo "cluster: SKIPPED: $*" >&2; exit 77; }
command -v ip >/dev/null 2>&1 || skip "the 'ip' command (iproute2) is not installed"
command -v tc >/dev/null 2>&1 || skip "the 'tc' command (iproute2) is not installed"

# Removes the namespaces and root-namespace links of runs whose script is gone (or, given a
# tag, of that run), stopping what still runs inside those namespaces first. Idempotent.
remove_leftovers() {
  local only=${1:-} name pid pids round
  for name in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}[0-9]+(sw|n[0-9]+)$" || true); do
    pid=${name#"$prefix"}; pid=${pid%%[sn]*}
    if [ -n "$only" ]; then [ "$prefix$pid" = "$only" ] || continue; else kill -0 "$pid" 2>/dev/null && continue; fi
    for round in 1 2 3 4 5 6 7 8 9 10; do  # TERM, then KILL after a second
      pids=$(ip netns pids "$name" 2>/dev/null || true)
      [ -z "$pids" ] && break
      # shellcheck disable=SC2086
      kill -s "$([ "$round" -le 5 ] && echo TERM || echo KILL)" $pids 2>/dev/null || true
      sleep 0.2
    done
    ip netns del "$name" 2>/dev/null || true
  done
  for name in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}[0-9]+[ns][0-9]+$" || true); do
    pid=${name#"$prefix"}; pid=${pid%%[sn]*}
    if [ -n "$only" ]; then [ "$prefix$pid" = "$only" ] || continue; else kill -0 "$pid" 2>/dev/null && continue; fi
    ip link del "$name" 2>/dev/null || true
  done
}
remove_leftovers
((cleanup_only)) && { echo "cluster: leftovers of earlier runs removed"; exit 0; }
(($# > 0)) || usage "no program given"
[ -x "$launcher" ] || command -v "$launcher" >/dev/null 2>&1 || usage "launcher $launcher not found (build gradring-run first)"

tag=$prefix$$
switch=${tag}sw
tmp=$(mktemp -d)
[ -n "$logs" ] || logs=$tmp
mkdir -p "$logs"
declare -a pids=()
teardown() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  remove_leftovers "$tag"
  rm -rf "$tmp"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$switch" 2>/dev/null || skip "cannot create network namespaces (needs root or CAP_SYS_ADMIN)"
ip -n "$switch" link add br0 type bridge 2>/dev/null || skip "cannot create a bridge (no bridge support in this kernel?)"
ip -n "$switch" link set lo up
ip -n "$switch" link set br0 up

# tbf needs a bucket of at least the bytes the link sends in one timer tick (250 Hz here), and
# more than one packet; its queue holds 50 ms of traffic (tail drops beyond, as a switch would).
burst=$((bits_per_s / 8 / 250))
((burst < 65536)) && burst=65536
shape() {  # shape <namespace> <device>
  ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$rate" burst "$burst" latency 50ms ||
    skip "cannot add a tbf qdisc (sch_tbf missing?)"
}
for ((i = 0; i < nodes; ++i)); do
  ns=${tag}n$i
  ip netns add "$ns"
  ip link add "${tag}n$i" type veth peer name "${tag}s$i"
  ip link set "${tag}n$i" netns "$ns"
  ip link set "${tag}s$i" netns "$switch"
  ip -n "$ns" link set "${tag}n$i" name eth0
  ip -n "$switch" link set "${tag}s$i" name "port$i"
  ip -n "$switch" link set "port$i" master br0
  ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 mtu "$mtu"
  ip -n "$switch" link set "port$i" mtu "$mtu"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$switch" link set "port$i" up
  shape "$ns" eth0
  shape "$switch" "port$i"
done

cores=$(nproc)
threads=$((cores / (nodes * nproc)))
((threads >= 1)) || threads=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$threads}
# PyTorch's Gloo binds the address its host name resolves to, which is not inside a namespace.
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GROUP_RANK
echo "cluster: $nodes node(s) x $nproc worker(s), links $rate each way (tbf, burst $burst B, MTU $mtu), no added delay;" \
  "OMP_NUM_THREADS=$OMP_NUM_THREADS; timeout ${limit}s" >&2
for ((i = 0; i < nodes; ++i)); do
  ip netns exec "${tag}n$i" timeout --kill-after=10 "$limit" "$launcher" --nnodes "$nodes" --node-rank "$i" \
    --nproc-per-node "$nproc" --master-addr 10.77.0.1 --master-port 29500 "$@" > "$logs/node$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < nodes; ++i)); do
  s=0
  wait "${pids[$i]}" || s=$?
  ((status == 0)) && status=$s
done
pids=()
for ((i = 0; i < nodes; ++i)); do
  sed "s/^/[node $i] /" "$logs/node$i.log"
done
((status == 124)) && echo "cluster: the run took longer than ${limit}s and was stopped" >&2
((status == 0)) || echo "cluster: a node failed (exit status $status)" >&2
exit "$status"
