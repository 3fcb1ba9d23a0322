#!/usr/bin/env bash
# The flight recorder end to end: gradring_flight_scenario's last rank goes wrong at
# iteration 3 (skips the loss all-reduce, all-reduces another shape, is SIGKILLed, or
# broadcasts where the others all-reduce) on 2 and 4 ranks of gloo and shm (under
# gradring-run) and MPI (under mpirun, when given; skip and shape under
# GRADRING_DISTRIBUTED_DEBUG=DETAIL there); every run must end within its timeout
# with dumps in GRADRING_FLIGHT_RECORDER_DIR from which gradring-flight names the last rank
# and the call. Then: the call site with GRADRING_FLIGHT_RECORDER_STACKS=1 and a ring of 5
# entries; no dumps with GRADRING_FLIGHT_RECORDER_SIZE=0; a successful job.
# Usage: test_flight.sh <gradring-run> <gradring-flight> <gradring_flight_scenario> [mpirun]
set -uo pipefail
run=$1
flight=$2
scenario=$3
mpirun=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GRADRING_FLIGHT_RECORDER_SIZE \
  GRADRING_FLIGHT_RECORDER_STACKS GRADRING_DISTRIBUTED_DEBUG
failures=0
fail() {
  echo "flight_recorder: FAILED: $*"
  echo "--- job output:"; cat "$tmp/job.log"
  echo "--- gradring-flight:"; cat "$tmp/report.txt" 2>/dev/null
  failures=$((failures + 1))
}

# job LAUNCHER BACKEND N SCENARIO: runs the scenario with a 2 s collective timeout; the
# dumps go to $tmp/dumps; the analysis to $tmp/report.json and $tmp/report.txt.
job() {
  local launcher=$1 backend=$2 n=$3 sc=$4
  rm -rf "$tmp/dumps"
  mkdir "$tmp/dumps"
  local start=$SECONDS
  if [ "$launcher" = mpirun ]; then
    # mpirun stops the survivors of a dead rank with SIGTERM and, 1 s later by default,
    # SIGKILL: 5 s leaves time for their SIGTERM dumps on a loaded machine.
    GRADRING_FLIGHT_RECORDER_DIR="$tmp/dumps" timeout 60 "$mpirun" -np "$n" --oversubscribe \
      --mca odls_base_sigkill_timeout 5 "$scenario" "$sc" "$backend" 2000 > "$tmp/job.log" 2>&1
  else
    GRADRING_FLIGHT_RECORDER_DIR="$tmp/dumps" timeout 60 "$run" --standalone --nproc-per-node "$n" \
      "$scenario" "$sc" "$backend" 2000 > "$tmp/job.log" 2>&1
  fi
  local rc=$?
  [ $rc != 124 ] || fail "$backend $n ranks $sc: the job did not end within 60 s"
  "$flight" --json "$tmp/dumps" > "$tmp/report.json" 2>&1
  "$flight" "$tmp/dumps" > "$tmp/report.txt" 2>&1
  echo "flight_recorder: $backend $n ranks $sc: exit $rc after $((SECONDS - start)) s; $(grep '^summary:' "$tmp/report.txt")"
}

# expect WHAT...: the culprit is the last rank and its JSON holds every WHAT.
expect() {
  local culprit
  culprit=$(grep -o '"culprit":{[^}]*}' "$tmp/report.json") || { fail "$label: no culprit in $(cat "$tmp/report.json")"; return; }
  grep -q "\"ranks\":\[$((n - 1))\]" <<< "$culprit" || fail "$label: the culprit is not rank $((n - 1)): $culprit"
  for what in "$@"; do
    grep -qF -- "$what" <<< "$culprit" || fail "$label: the culprit lacks '$what': $culprit"
  done
}

# check_scenarios LAUNCHER BACKEND MISMATCHED_SIZES: MISMATCHED_SIZES "yes" runs skip and
# shape as they are; "detail" runs them under GRADRING_DISTRIBUTED_DEBUG=DETAIL, whose check
# refuses the mismatched call before it is issued and leaves it in the record as failed (its
# all-gathers interleave with the calls, so the sequence numbers differ from the plain run's).
check_scenarios() {
  local launcher=$1 backend=$2 mismatched_sizes=$3
  for n in 2 4; do
    if [ "$mismatched_sizes" = yes ]; then
      label="$backend $n ranks skip"
      job "$launcher" "$backend" "$n" skip
      expect '"seq":7' 'skipped allreduce (sum) float32 [1]'
      label="$backend $n ranks shape"
      job "$launcher" "$backend" "$n" shape
      expect '"seq":6' '"call":"allreduce (sum) float32 [999]"' '"expected":"allreduce (sum) float32 [1000]"'
    elif [ "$mismatched_sizes" = detail ]; then
      label="$backend $n ranks skip (DETAIL)"
      GRADRING_DISTRIBUTED_DEBUG=DETAIL job "$launcher" "$backend" "$n" skip
      expect '"call":"allreduce (sum) float32 [1000]"' '"expected":"allreduce (sum) float32 [1]"'
      label="$backend $n ranks shape (DETAIL)"
      GRADRING_DISTRIBUTED_DEBUG=DETAIL job "$launcher" "$backend" "$n" shape
      expect '"call":"allreduce (sum) float32 [999]"' '"expected":"allreduce (sum) float32 [1000]"'
    fi
    label="$backend $n ranks broadcast"
    job "$launcher" "$backend" "$n" broadcast
    expect '"seq":6' '"call":"broadcast float32 [1000] root 0"' '"expected":"allreduce (sum) float32 [1000]"'
    label="$backend $n ranks kill"
    job "$launcher" "$backend" "$n" kill
    expect 'no flight record' '"seq":6'
  done
}

check_scenarios gradring-run gloo yes
check_scenarios gradring-run shm yes
# MPI: an all-reduce whose counts differ across ranks is erroneous in MPI, which writes past
# the smaller buffer (we saw SIGSEGV and a heap corrupted so badly that the dump hung), so
# skip and shape run under DETAIL there: the mismatch is refused before MPI sees it.
if [ -n "$mpirun" ]; then
  check_scenarios mpirun mpi detail
else
  echo "flight_recorder: SKIPPED on MPI: gradring was built without the MPI backend or mpirun was not found (install openmpi-bin and libopenmpi-dev: scripts/setup)"
fi

# gradring-run asks the survivors of a failed group for their dumps (SIGUSR1) before it
# stops them: in the 4-rank shm kill run every survivor was still waiting.
label="gradring-run's dump request"
job gradring-run gloo 4 skip
grep -qE "asked ranks? .* for their flight recorder dumps" "$tmp/job.log" || fail "$label: no request in the output"

# The call site, with a ring of 5 entries (older calls gone: the analysis starts later).
label="call site"
n=2
GRADRING_FLIGHT_RECORDER_STACKS=1 GRADRING_FLIGHT_RECORDER_SIZE=5 job gradring-run shm 2 shape
expect '"seq":6' '"call_site":' 'main'
grep -q '"stack":' "$tmp/dumps/rank1.json" || fail "$label: no stack in rank 1's dump"
entries=$(grep -c '"state":' "$tmp/dumps/rank1.json")
[ "$entries" = 5 ] || fail "$label: a ring of 5 holds $entries entries"

# Off: no entries at all.
label="size 0"
GRADRING_FLIGHT_RECORDER_SIZE=0 job gradring-run shm 2 shape
! grep -q '"state":' "$tmp/dumps/"*.json 2> /dev/null || fail "$label: GRADRING_FLIGHT_RECORDER_SIZE=0 recorded calls"

# A job that succeeds writes no dump.
label="success"
job gradring-run gloo 2 none
[ -z "$(ls "$tmp/dumps")" ] || fail "$label: a successful job wrote dumps: $(ls "$tmp/dumps")"

[ $failures = 0 ] || { echo "flight_recorder: $failures check(s) failed"; exit 1; }
echo "flight_recorder: all checks passed"
