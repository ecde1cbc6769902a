#!/usr/bin/env bash
# Integration tests (`make integration`), in two parts run side by side (beside.sh says why);
# each starts its lab, runs its tests and stops the lab whatever happens:
#   run-apiserver-lab.sh  needs no root: the API-server lab (tests/integration/labs, then
#                         tests/integration, molecule scenarios but node_upgrade, the module tests
#                         and molecule default from the installed tarball)
#   run-node-lab.sh       root: the node lab (its package mirror, tests/integration/labs/test_node_*.py,
#                         molecule node_upgrade, node-down leaving nothing behind); its output
#                         is shown when it ends
# `make integration-apiserver` and `make integration-nodes` run one part alone.
# LAB_* and NODE_LAB_* variables come from the Makefile; arguments go to pytest (e.g. -k NAME).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/beside.sh"
# Both parts' host packages first (root), so the two never install at once.
"$here/../../lab/host-packages.sh"
trap 'node_part_stop' EXIT
node_part_start "$here/run-node-lab.sh" "$@"
"$here/run-apiserver-lab.sh" "$@"
node_part_wait
