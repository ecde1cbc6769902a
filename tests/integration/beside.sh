# shellcheck shell=bash
# Sourced by tests/run-all.sh (make test) and tests/integration/run.sh (make integration): the
# node-lab part of the integration tests (run-node-lab.sh, root) runs beside the other steps
# instead of after them. It spends most of its time waiting on kubeadm, kubelets and static pods
# restarting on four systemd-nspawn machines, so on two cores it adds little to the API-server
# part's time while run one after the other it added its whole length (docs/benchmarks.md).
# Its output goes to a log of its own, shown whole once it ends, so the two never interleave.
#   node_part_start COMMAND...      start it (run-node-lab.sh, or make integration-nodes) in the background
#   node_part_wait                  wait for it, show its log, return its exit code
#   node_part_stop                  on an early exit: stop it (it stops its lab) and show its end
node_part_log="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.lab/logs/integration-nodes.log"
node_part_pid=""
node_part_start() {
  mkdir -p "$(dirname "$node_part_log")"
  # setsid: its own process group, so node_part_stop reaches the playbook and pytest under it.
  setsid "$@" >"$node_part_log" 2>&1 </dev/null &
  node_part_pid=$!
  echo "=== integration, node lab: started beside the other steps (pid $node_part_pid, log $node_part_log)"
  # Its stage lines as they come, so a run cut short (CI's time limit) still shows how far it got.
  tail -n +1 -F --pid="$node_part_pid" "$node_part_log" 2>/dev/null \
    | grep --line-buffered -E '^(=== |integration: )' | sed -u 's/^/[node lab] /' &
}
node_part_wait() {
  local rc=0
  [ -n "$node_part_pid" ] || return 0
  wait "$node_part_pid" || rc=$?
  node_part_pid=""
  echo "=== integration, node lab: its log ($node_part_log)"
  cat "$node_part_log"
  return "$rc"
}
node_part_stop() {
  [ -n "$node_part_pid" ] || return 0
  echo "=== integration, node lab: stopping it (the other steps failed)"
  # TERM to the group; run-node-lab.sh's trap takes its lab down. Up to 3 minutes for that.
  kill -TERM -- "-$node_part_pid" 2>/dev/null || true
  timeout 180 tail --pid="$node_part_pid" -f /dev/null || kill -KILL -- "-$node_part_pid" 2>/dev/null || true
  node_part_pid=""
  echo "--- last lines of $node_part_log"
  tail -n 40 "$node_part_log"
}
