#!/usr/bin/env bash
# Integration tests (`make integration`), in two parts run one after the other; each starts its
# lab, runs its tests and stops the lab whatever happens, and stops the run when it fails:
#   run-apiserver-lab.sh  needs no root: the API-server lab (tests/lab/integration, then
#                         tests/integration, molecule scenarios but node_upgrade, the module tests
#                         and molecule default from the installed tarball)
#   run-node-lab.sh       root: the node lab (its package mirror, tests/lab/integration/test_node_*.py,
#                         molecule node_upgrade, node-down leaving nothing behind)
# LAB_* and NODE_LAB_* variables come from the Makefile; arguments go to pytest (e.g. -k NAME).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/run-apiserver-lab.sh" "$@"
"$here/run-node-lab.sh" "$@"
