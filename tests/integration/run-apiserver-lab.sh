#!/usr/bin/env bash
# Integration tests against the API-server lab, the part that needs no root: start the test lab,
# run pytest against it (tests/integration/labs, then tests/integration but the module tests,
# which run-molecule-lab.sh runs from the installed tarball), and stop the lab whatever happens.
# LAB_* variables come from the Makefile (state dir, ports, mode). Arguments go to pytest (e.g. -k NAME).
# shellcheck disable=SC2034,SC2154  # root, stage and stage_log are shared with stages.sh
set -euo pipefail
source "$(dirname "$0")/stages.sh" "$@"
on_exit() {
  local code=$?
  if [ "$code" -ne 0 ] && [ -d "${LAB_STATE_DIR:-}/run" ]; then
    # The simulator writes its threads' stacks to its log on SIGUSR1.
    [ -f "$LAB_STATE_DIR/run/simulator.pid" ] && kill -USR1 "$(cat "$LAB_STATE_DIR/run/simulator.pid")" 2>/dev/null && sleep 1
    for log in "$LAB_STATE_DIR"/run/*.log; do
      echo "--- last lines of $log"; tail -n 30 "$log"
    done
  fi
  lab down || true
  [ "$code" -ne 0 ] && summarise_failure
  exit "$code"
}
trap on_exit EXIT
# The browser the usage report test opens its page in (installed when missing, which needs root).
stage="host packages (chromium)"
"$root/lab/host-packages.sh" browser
# The preflight test also starts a lab at an older version (tests/integration/labs/old_lab.py);
# building it here keeps that cost visible (seconds when cached).
stage="build Kubernetes 1.34.4 for the preflight test"
t0=$SECONDS
LAB_K8S_VERSION=1.34.4 lab build
echo "integration: Kubernetes 1.34.4 for the preflight test ready in $((SECONDS - t0))s"
# And 1.37.2, the current release, for what 1.35 does not serve: nvidia.com/gpu through a
# DeviceClass's extendedResourceName (test_extended_resource.py) and memory shares of a GPU.
stage="build Kubernetes 1.37.2 for the tests of 1.36+ features"
t0=$SECONDS
LAB_K8S_VERSION=1.37.2 lab build
echo "integration: Kubernetes 1.37.2 for the tests of 1.36+ features ready in $((SECONDS - t0))s"
stage="lab up"
t0=$SECONDS
lab up
echo "integration: lab up in $((SECONDS - t0))s"
eval "$(lab env --venv-bin "$root/.venv/bin")"
# The lab itself first (a real scheduler allocating against the simulated driver): in a pytest
# run of its own, as tests/integration/labs/conftest.py says; the node lab's tests there
# (test_node_*.py) run in run-node-lab.sh.
stage="pytest tests/integration/labs (the lab itself)"
stage_log="$root/.lab/logs/pytest-lab.log"
run_pytest tests/integration/labs --ignore-glob='*/test_node_*.py' "$@"
# The module tests run from the built tarball, in run-molecule-lab.sh. The tests marked
# restarts_api_server run last in this run (tests/integration/conftest.py). tests/integration/labs
# ran above, in a run of its own.
stage="pytest tests/integration"
stage_log="$root/.lab/logs/pytest-integration.log"
run_pytest tests/integration --ignore=tests/integration/labs --ignore-glob='*/test_module_*.py' "$@"
