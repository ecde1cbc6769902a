# shellcheck shell=bash
# Sourced by run-apiserver-lab.sh and run-node-lab.sh (the two parts of run.sh): the lab's
# command line, what is running now and where its output goes. When a step fails, the last
# lines CI keeps name it and its failing tasks or tests, after the labs' logs rather than
# before them. Sourced with the script's arguments (for pytest); each script sets its own EXIT trap.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit
narrowed=no
[ "$#" -gt 0 ] && narrowed=yes
lab() { "$root/.venv/bin/python" "$root/lab/lab.py" "$@"; }
stage="start"
stage_log=""
mkdir -p "$root/.lab/logs"
summarise_failure() {
  echo "=== integration FAILED during: $stage"
  if [ -n "$stage_log" ] && [ -f "$stage_log" ]; then
    grep -E '^(fatal|failed): |FAILED!|^(FAILED|ERROR) |^CRITICAL|ERROR +Ansible return code' "$stage_log" | grep -v 'FAILED - RETRYING' | awk '!seen[$0]++' | tail -n 20 | cut -c1-600 || true
  fi
}
# pytest exits 5 when it collects nothing: fine when the script's arguments narrowed the selection
# (`run.sh -k NAME` matches tests of one run only), an error when the whole suite runs.
# --durations: the slowest tests of each run in the log, for the test budget (docs/benchmarks.md).
run_pytest() {
  local rc=0 t0=$SECONDS
  # Every test's time also goes to a JUnit file beside the log: tests/benchmarks/test_times.py
  # sums them per file and per fixture set-up for the budget table.
  python -m pytest -q -p no:cacheprovider --durations=15 ${stage_log:+--junitxml="${stage_log%.log}.xml"} "$@" 2>&1 \
    | tee "$stage_log" || rc=$?
  echo "=== $stage: done in $((SECONDS - t0))s"
  if [ "$rc" -eq 5 ] && [ "$narrowed" = yes ]; then rc=0; fi
  return "$rc"
}
molecule_test() {
  echo "=== molecule test -s $1${2:+ ($2)}"
  stage="molecule test -s $1${2:+ ($2)}"
  stage_log="$root/.lab/logs/molecule-$1.log"
  local t0=$SECONDS
  molecule test -s "$1" 2>&1 | tee "$stage_log"
  echo "=== molecule test -s $1: ok in $((SECONDS - t0))s"
}
