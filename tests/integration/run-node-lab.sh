#!/usr/bin/env bash
# Integration tests on the node lab (root: it boots systemd-nspawn machines, creates a bridge
# and cgroups): build its package mirror, start it (three control planes with stacked etcd and
# a worker), run the mirror's tests and the killed-and-resumed upgrade 1.34.4 -> 1.35.4
# (test_node_upgrade_resume.py), then molecule node_upgrade (the second minor, 1.35.4 -> 1.36.3,
# and the smoke test), stop it and check that it left nothing behind; stopped whatever happens.
# NODE_LAB_* and LAB_* variables come from the Makefile. Arguments go to pytest (e.g. -k NAME).
# shellcheck disable=SC2034,SC2154  # root, stage and stage_log are shared with stages.sh
set -euo pipefail
source "$(dirname "$0")/stages.sh" "$@"
on_exit() {
  local code=$?
  lab node-down || true
  [ "$code" -ne 0 ] && summarise_failure
  exit "$code"
}
trap on_exit EXIT
# Stopped by make test when the other steps failed (beside.sh): take the lab down all the same.
trap 'exit 143' TERM INT
# kubectl, helm and the virtualenv (python, molecule) on PATH, build/collections for Ansible.
# No KUBECONFIG: the API-server lab is not running here; each test and scenario names the
# cluster it talks to (tests/integration/labs/old_lab.py's, the node lab's NODE_LAB_KUBECONFIG).
eval "$(lab env --venv-bin "$root/.venv/bin")"
unset KUBECONFIG
# Host tools: systemd-nspawn, debootstrap, libseccomp-dev, ... (installed when missing).
stage="host packages (node lab tools)"
"$root/lab/host-packages.sh"
# The node lab's package mirror (kubeadm, kubelet, kubectl .debs of both versions): node-up
# serves it to the nodes and tests/integration/labs/test_node_mirror.py checks it with apt.
# The node binaries are compiled here when not cached.
export NODE_LAB_MIRROR_ROOT="${NODE_LAB_MIRROR_ROOT:-$root/.lab/test-mirror}"
# The two hops: the start, the first hop (the resume test), the second (molecule node_upgrade).
export NODE_LAB_MIRROR_VERSIONS="${NODE_LAB_MIRROR_VERSIONS:-1.34.4 1.35.4 1.36.3}"
export NODE_LAB_CONTROL_PLANES="${NODE_LAB_CONTROL_PLANES:-3}"
stage="node lab package mirror"
t0=$SECONDS
# shellcheck disable=SC2086  # one argument per version
lab mirror --root "$NODE_LAB_MIRROR_ROOT" --versions $NODE_LAB_MIRROR_VERSIONS
echo "integration: node lab package mirror ready in $((SECONDS - t0))s"
# kubeadm 1.37, which no node runs: test_node_kubeadm_config_migrate.py checks that it refuses a
# v1beta3 configuration (why cluster_upgrade migrates before the 1.37 hop). Cached after the first run.
stage="kubeadm 1.37.2 for the kubeadm configuration test"
t0=$SECONDS
lab node-build 1.37.2
echo "integration: node binaries of 1.37.2 ready in $((SECONDS - t0))s"
# What this machine runs before the node lab, to compare with after it (outside the lab's
# state directory, whose name counts as the lab's in a command line).
leftovers="${NODE_LAB_STATE_DIR:-$root/.lab/node}-leftovers-before.json"
python3 "$root/tests/integration/labs/node_lab_leftovers.py" snapshot "$leftovers"
# A kubeadm cluster at 1.34.4 on systemd-nspawn machines: cp1, cp2, cp3 (stacked etcd) and w1.
# Builds are cached after the first run.
stage="node lab up"
t0=$SECONDS
lab node-up
echo "integration: node lab up in $((SECONDS - t0))s"
eval "$(lab node-env)"
stage="pytest tests/integration/labs/test_node_*.py"
stage_log="$root/.lab/logs/pytest-node-lab.log"
run_pytest tests/integration/labs/test_node_*.py "$@"
export NO_COLOR=1 ANSIBLE_FORCE_COLOR=0
molecule_test node_upgrade
# Stopping the node lab must leave nothing behind and touch nothing it did not create.
stage="node lab down and leftovers check"
stage_log=""
t0=$SECONDS
lab node-down
echo "integration: node lab down in $((SECONDS - t0))s"
python3 "$root/tests/integration/labs/node_lab_leftovers.py" compare "$leftovers"
