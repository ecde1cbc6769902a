#!/usr/bin/env bash
# Integration tests: start the test lab, run pytest and molecule against it, and stop the
# lab whatever happens. LAB_* variables come from the Makefile (state dir, ports, mode).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
lab() { "$root/.venv/bin/python" "$root/tests/lab/lab.py" "$@"; }
# What is running now, and where its output goes: when a step fails, the last lines CI
# keeps name it and its failing tasks or tests, after the labs' logs rather than before them.
stage="start"
stage_log=""
summarise_failure() {
  echo "=== integration FAILED during: $stage"
  if [ -n "$stage_log" ] && [ -f "$stage_log" ]; then
    grep -E '^(fatal|failed): |FAILED!|^(FAILED|ERROR) |^CRITICAL|ERROR +Ansible return code' "$stage_log" | grep -v 'FAILED - RETRYING' | awk '!seen[$0]++' | tail -n 20 | cut -c1-600 || true
  fi
}
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
  lab node-down || true
  [ "$code" -ne 0 ] && summarise_failure
  exit "$code"
}
trap on_exit EXIT
# The preflight test also starts a lab at an older version (tests/integration/old_lab.py);
# building it here keeps that cost visible (seconds when cached).
stage="build Kubernetes 1.34.4 for the preflight test"
t0=$SECONDS
LAB_K8S_VERSION=1.34.4 lab build
echo "integration: Kubernetes 1.34.4 for the preflight test ready in $((SECONDS - t0))s"
# And 1.36.3, where DRA serves nvidia.com/gpu through a DeviceClass's extendedResourceName
# (tests/integration/test_extended_resource.py).
stage="build Kubernetes 1.36.3 for the extended-resource test"
t0=$SECONDS
LAB_K8S_VERSION=1.36.3 lab build
echo "integration: Kubernetes 1.36.3 for the extended-resource test ready in $((SECONDS - t0))s"
# The node lab's package mirror (kubeadm, kubelet, kubectl .debs of both versions) for
# tests/integration/test_node_mirror.py; the node binaries are compiled here when not cached.
stage="node lab package mirror"
t0=$SECONDS
lab mirror --root "$root/.lab/test-mirror" --versions 1.34.4 1.35.4
echo "integration: node lab package mirror ready in $((SECONDS - t0))s"
stage="lab up"
t0=$SECONDS
lab up
echo "integration: lab up in $((SECONDS - t0))s"
eval "$(lab env --venv-bin "$root/.venv/bin")"
# The node lab: a kubeadm cluster at 1.34.4 on a systemd-nspawn machine, for the real
# upgrade (molecule/node_upgrade) and the node-lab tests. Builds are cached after the first run.
"$root/tests/lab/host-packages.sh"
leftovers="$root/.lab/node-leftovers-before.json"
python3 "$root/tests/integration/node_lab_leftovers.py" snapshot "$leftovers"
stage="node lab up"
t0=$SECONDS
lab node-up
echo "integration: node lab up in $((SECONDS - t0))s"
eval "$(lab node-env)"
mkdir -p "$root/.lab/logs"
# pytest exits 5 when it collects nothing: fine when run.sh's arguments narrowed the selection
# (`run.sh -k NAME` matches tests of one run only), an error when the whole suite runs.
run_pytest() {
  local rc=0
  python -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$stage_log" || rc=$?
  if [ "$rc" -eq 5 ] && [ "$narrowed" = yes ]; then rc=0; fi
  return "$rc"
}
narrowed=no
[ "$#" -gt 0 ] && narrowed=yes
# The module tests and molecule `default` run further down, from the built tarball.
stage="pytest tests/integration"
stage_log="$root/.lab/logs/pytest-integration.log"
run_pytest tests/integration --ignore-glob='*/test_module_*.py' "$@"
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0
if compgen -G "molecule/*/molecule.yml" >/dev/null; then
  for scenario in molecule/*/; do
    name=$(basename "$scenario")
    [ "$name" = default ] && continue
    echo "=== molecule test -s $name"
    stage="molecule test -s $name"
    stage_log="$root/.lab/logs/molecule-$name.log"
    molecule test -s "$name" 2>&1 | tee "$stage_log"
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
echo "=== molecule test -s default (installed tarball)"
stage="molecule test -s default (installed tarball)"
stage_log="$root/.lab/logs/molecule-default.log"
molecule test -s default 2>&1 | tee "$stage_log"
# Stopping the node lab must leave nothing behind and touch nothing it did not create.
stage="node lab down and leftovers check"
stage_log=""
t0=$SECONDS
lab node-down
echo "integration: node lab down in $((SECONDS - t0))s"
python3 "$root/tests/integration/node_lab_leftovers.py" compare "$leftovers"
