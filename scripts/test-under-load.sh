#!/usr/bin/env bash
# Runs the whole jest suite while other processes keep every core busy, the way a loaded CI machine would, to find
# tests that depend on timing. Usage: scripts/test-under-load.sh [runs (1)] [busy processes (one per core)].
# Prints each run's wall time and result; the busy processes stop with it.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
busy=${2:-$(nproc)}
pids=()
stop_load() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null; }
trap stop_load EXIT
for _ in $(seq "$busy"); do
  node -e 'for (;;) {}' &
  pids+=($!)
done
status=0
for run in $(seq "$runs"); do
  start=$(date +%s)
  npx jest "${@:3}" >"${TMPDIR:-/tmp}/test-under-load-$run.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || status=1
  echo "run $run of $runs with $busy busy processes: exit $rc after $(($(date +%s) - start)) s" \
    "(log: ${TMPDIR:-/tmp}/test-under-load-$run.log)"
  grep -E "^(Tests|FAIL)" "${TMPDIR:-/tmp}/test-under-load-$run.log"
done
exit $status
