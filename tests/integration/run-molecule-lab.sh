#!/usr/bin/env bash
# Integration tests against an API-server lab of their own (no root), beside run-apiserver-lab.sh's
# pytest run: start the lab, run every molecule scenario but node_upgrade (run-node-lab.sh runs
# it) and default, then build the collection's tarball, install it as users do and run the
# module tests and molecule `default` (site.yml end to end) from that installed copy; stop the
# lab whatever happens. LAB_* variables come from the Makefile (its own state dir and ports).
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
# Stopped by make test when the other steps failed (beside.sh): take the lab down all the same.
trap 'exit 143' TERM INT
stage="lab up"
t0=$SECONDS
lab up
echo "integration: molecule's lab up in $((SECONDS - t0))s"
eval "$(lab env --venv-bin "$root/.venv/bin")"
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0
for scenario in molecule/*/; do
  name=$(basename "$scenario")
  # default: from the tarball below; node_upgrade: on the node lab (run-node-lab.sh).
  case "$name" in default|node_upgrade) continue ;; esac
  molecule_test "$name"
done
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
