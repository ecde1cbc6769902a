#!/usr/bin/env bash
# Integration tests against the API-server lab, the part that needs no root: start the test lab,
# run pytest and molecule against it (every scenario but node_upgrade, which run-node-lab.sh
# runs), then the module tests and molecule `default` from the installed tarball, and stop the
# lab whatever happens. LAB_* variables come from the Makefile (state dir, ports, mode).
# Arguments go to pytest (e.g. -k NAME).
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
# The module tests and molecule `default` run further down, from the built tarball. The tests
# marked restarts_api_server run last in this run (tests/integration/conftest.py). tests/integration/labs
# ran above, in a run of its own.
stage="pytest tests/integration"
stage_log="$root/.lab/logs/pytest-integration.log"
run_pytest tests/integration --ignore=tests/integration/labs --ignore-glob='*/test_module_*.py' "$@"
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0
if compgen -G "molecule/*/molecule.yml" >/dev/null; then
  for scenario in molecule/*/; do
    name=$(basename "$scenario")
    # default: from the tarball below; node_upgrade: on the node lab (run-node-lab.sh).
    case "$name" in default|node_upgrade) continue ;; esac
    molecule_test "$name"
  done
fi
# What users install is the tarball, not this checkout: build it, install it into a fresh
# collections path and run the module tests and molecule `default` (site.yml end to end) from
# there, with only that path on ANSIBLE_COLLECTIONS_PATH (kubernetes.core comes from the
# virtualenv's site-packages). installed_guard.py, the tests' conftest and the scenario's
# verify.yml each fail when dra.gpu resolves anywhere else, e.g. to build/collections.
stage="build and install the collection tarball"
stage_log=""
t0=$SECONDS
export DRA_GPU_INSTALLED_COLLECTIONS="$root/build/installed-collections"
"$root/tests/collection/build-and-install.sh"
export ANSIBLE_COLLECTIONS_PATH="$DRA_GPU_INSTALLED_COLLECTIONS"
export DRA_GPU_PLAYBOOKS="$DRA_GPU_INSTALLED_COLLECTIONS/ansible_collections/dra/gpu/playbooks"
python "$root/tests/collection/installed_guard.py"
echo "integration: collection tarball built and installed in $((SECONDS - t0))s"
stage="pytest tests/integration/test_module_*.py (installed tarball)"
stage_log="$root/.lab/logs/pytest-modules-installed.log"
run_pytest tests/integration/test_module_*.py "$@"
molecule_test default "installed tarball"
