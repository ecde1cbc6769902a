# shellcheck shell=bash
# Sourced by tests/run-all.sh (make test) and tests/integration/run.sh (make integration): parts
# of the integration tests that run beside the other steps instead of after them, each in a
# session of its own with its own lab:
#   node lab   run-node-lab.sh (root): it spends most of its time waiting on kubeadm, kubelets
#              and static pods restarting on four systemd-nspawn machines;
#   molecule   run-molecule-lab.sh: the molecule scenarios and the installed tarball's tests, on
#              an API-server lab of its own.
# Why beside: run one after the other, each part added its whole length. The machine has two
# cores and the kernel shares them between sessions (autogroup) before processes: a part in a
# session of its own gets its share when another load holds the other core, as in CI
# (docs/benchmarks.md has the figures).
# Each part's output goes to a log of its own, shown whole once it ends, so parts never
# interleave; its stage lines are shown as they come, tagged with its name.
#   part_start NAME COMMAND...   start a part in the background (NAME: "node lab" or "molecule")
#   part_wait NAME               wait for it, show its log, return its exit code
#   parts_stop                   on an early exit: stop every part still running (each stops its
#                                lab) and show its end
parts_log_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.lab/logs"
declare -A part_pids=()
# .lab/logs/integration-nodes.log and integration-molecule.log (the make targets' names).
part_log() { local slug=${1%% *}; echo "$parts_log_dir/integration-${slug/node/nodes}.log"; }
part_start() {
  local name=$1 log
  shift
  log=$(part_log "$name")
  mkdir -p "$parts_log_dir"
  # setsid: its own session and process group, so parts_stop reaches the playbooks and pytest under it.
  setsid "$@" >"$log" 2>&1 </dev/null &
  part_pids[$name]=$!
  echo "=== integration, $name: started beside the other steps (pid $!, log $log)"
  # Its stage lines as they come, so a run cut short (CI's time limit) still shows how far it got.
  tail -n +1 -F --pid="$!" "$log" 2>/dev/null \
    | grep --line-buffered -E '^(=== |integration: )' | sed -u "s/^/[$name] /" &
}
part_wait() {
  local name=$1 rc=0 pid=${part_pids[$1]:-}
  [ -n "$pid" ] || return 0
  wait "$pid" || rc=$?
  unset "part_pids[$name]"
  echo "=== integration, $name: its log ($(part_log "$name"))"
  cat "$(part_log "$name")"
  return "$rc"
}
parts_stop() {
  local name pid
  for name in "${!part_pids[@]}"; do
    pid=${part_pids[$name]}
    echo "=== integration, $name: stopping it (the other steps failed)"
    # TERM to the group; the part's trap takes its lab down. Up to 3 minutes for that.
    kill -TERM -- "-$pid" 2>/dev/null || true
    timeout 180 tail --pid="$pid" -f /dev/null || kill -KILL -- "-$pid" 2>/dev/null || true
    unset "part_pids[$name]"
    echo "--- last lines of $(part_log "$name")"
    tail -n 40 "$(part_log "$name")"
  done
}
