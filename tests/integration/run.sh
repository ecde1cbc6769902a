#!/usr/bin/env bash
# Integration tests (`make integration`), in three parts run side by side (beside.sh says why);
# each starts its lab, runs its tests and stops the lab whatever happens:
#   run-apiserver-lab.sh  (make integration-apiserver) no root: the API-server test lab, pytest
#                         (tests/integration/labs, then tests/integration but the module tests)
#   run-molecule-lab.sh   (make integration-molecule) no root: an API-server lab of its own, the
#                         molecule scenarios but node_upgrade, then the module tests and molecule
#                         default from the installed tarball; its output is shown when it ends
#   run-node-lab.sh       (make integration-nodes) root: the node lab (its package mirror,
#                         tests/integration/labs/test_node_*.py, molecule node_upgrade, node-down
#                         leaving nothing behind); its output is shown when it ends
# `make integration` gives each part its LAB_* and NODE_LAB_* variables (TEST_*_ENV, one
# assignment per word). Arguments go to pytest (e.g. -k NAME).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/beside.sh"
# The parts' host packages first (root), so that no two install at once.
"$here/../../lab/host-packages.sh"
trap 'parts_stop' EXIT
# shellcheck disable=SC2086  # one assignment per word
part_start "node lab" env $TEST_LAB_ENV $TEST_NODE_LAB_ENV "$here/run-node-lab.sh" "$@"
# shellcheck disable=SC2086
part_start molecule env $TEST_MOLECULE_LAB_ENV "$here/run-molecule-lab.sh" "$@"
# shellcheck disable=SC2086
env $TEST_LAB_ENV "$here/run-apiserver-lab.sh" "$@"
part_wait molecule
part_wait "node lab"
