#!/bin/sh
# bench_ops goes on past a row that fails validation (issue 32): the row is reported as failed
# and not timed, the rows after it are timed, the JSON lists it under "failed", exit status 1.
# The failure is forced with bench_ops' test hook GRADRING_TEST_FAIL_ROW (--ops sum selects
# sum_lastdim too: 4 rows).
set -u
bench=$1
out=$(GRADRING_TEST_FAIL_ROW=relu OMP_NUM_THREADS=1 timeout 120 "$bench" --ops add,relu,sum --repeat 1 --json 2>&1)
rc=$?
fail() { echo "test_bench_ops_failed_row: $1"; echo "$out"; exit 1; }
[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
echo "$out" | grep -Eq '^relu +.*FAILED validation: relative error inf > 0; not timed' || fail "no FAILED relu row"
echo "$out" | grep -Eq '^add +.* ok \(' || fail "the row before it was not timed"
echo "$out" | grep -Eq '^sum +.* ok \(' || fail "the row after it was not timed"
json=$(echo "$out" | grep '^{' | tail -n 1)
echo "$json" | grep -q '"failed":\[{"error":"validation: relative error inf > 0","row":"relu ' || fail "the JSON does not list the failed row"
echo "$json" | grep -q '"op":"sum"' || fail "the JSON lacks the row after the failed one"
echo "$out" | grep -q 'bench_ops: 1 of 4 rows failed (not timed)' || fail "no summary of the failed rows"
echo "test_bench_ops_failed_row: ok"
