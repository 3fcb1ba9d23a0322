#!/usr/bin/env bash
# All-reduce of float32 (sum) on 2 ranks at 4 KiB, 1 MiB and 25 MiB: gradring's Gloo, shm and
# MPI process groups beside torch.distributed's Gloo, in one go. The peer is --python's torch
# (default Debian's /usr/bin/python3); the header names the machine and the torch version. Usage:
#   bench/compare_allreduce.sh [--build DIR] [--iters N] [--python PY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
iters=50
python=/usr/bin/python3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    *) echo "compare_allreduce: unknown argument $1 (expected --build DIR, --iters N, --python PY)" >&2; exit 2 ;;
  esac
done
run=$build/apps/gradring-run
bench=$build/apps/bench_allreduce
for f in "$run" "$bench"; do [ -x "$f" ] || { echo "compare_allreduce: $f not found; build first" >&2; exit 1; }; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The all-reduce uses no BLAS: the peer runs as it is, whatever its BLAS.
peer_text=$(python3 "$root/bench/peers.py" describe "$python")
case "$peer_text" in *"no usable torch"*) echo "compare_allreduce: $peer_text" >&2; exit 1 ;; esac
echo "# compare_allreduce: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $iters all-reduces per size, best of 3"
echo "# machine: $(python3 "$root/bench/peers.py" machine)"
echo "# peer: $peer_text"

last_json() { grep -o '{.*}' | tail -1; }
sizes="4096 1048576 26214400"
gloo=""; shm=""; mpi=""; torch_gloo=""
for attempt in 1 2 3; do  # alternate the four, keep each one's best run
  g=$("$run" --nproc-per-node 2 --standalone "$bench" --backend gloo -b 4K -e 25M -f 256 -n "$iters" --json | last_json)
  s=$("$run" --nproc-per-node 2 --standalone "$bench" --backend shm -b 4K -e 25M -f 256 -n "$iters" --json | last_json)
  m=$(mpirun -np 2 --mca btl self,vader --mca btl_vader_single_copy_mechanism cma "$bench" --backend mpi -b 4K -e 25M -f 256 -n "$iters" --json 2>/dev/null | last_json || true)
  t=$("$run" --nproc-per-node 2 --standalone "$python" "$root/bench/allreduce_torch.py" --sizes 4K 1M 25M --iters "$iters" | last_json)
  gloo="$gloo$g"$'\n'; shm="$shm$s"$'\n'; mpi="$mpi$m"$'\n'; torch_gloo="$torch_gloo$t"$'\n'
done
python3 - "$gloo" "$mpi" "$torch_gloo" "$shm" <<'PY'
import json, sys
def best(blob, key):
    out = {}
    for line in blob.strip().splitlines():
        if not line.strip(): continue
        for row in json.loads(line)["rows"]:
            t = row[key]["time_us"] if key else row["time_us"]
            out[row["size"]] = min(out.get(row["size"], 1e18), t)
    return out
g, m, t = best(sys.argv[1], "in_place"), best(sys.argv[2], "in_place") if sys.argv[2].strip() else {}, best(sys.argv[3], None)
s = best(sys.argv[4], "in_place")
print(f"{'size':>10} {'torch gloo':>14} {'gradring gloo':>15} {'ratio':>7} {'gradring shm':>14} {'ratio':>7} {'gradring mpi':>14} {'ratio':>7}")
for size in sorted(t):
    bw = lambda us: size / us / 1e3  # busbw = algbw for 2 ranks
    line = f"{size:>10} {t[size]:>9.1f} us {bw(t[size]):4.2f} {g[size]:>9.1f} us {bw(g[size]):4.2f} {t[size]/g[size]:>6.2f}x"
    line += f" {s[size]:>9.1f} us {bw(s[size]):4.2f} {t[size]/s[size]:>6.2f}x"
    if size in m: line += f" {m[size]:>9.1f} us {bw(m[size]):4.2f} {t[size]/m[size]:>6.2f}x"
    print(line)
print("(time per all-reduce, busbw in GB/s; ratio = torch time / gradring time, higher is better)")
PY
