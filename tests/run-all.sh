#!/usr/bin/env bash
# `make test`: every check, in the order that fails fastest. Each step prints its time. The
# node-lab part of the integration tests starts once the host packages are there and runs beside
# the other steps (tests/integration/beside.sh); its log is shown when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/integration/beside.sh
step() {
  local name=$1; shift
  local t0=$SECONDS
  echo "=== $name"
  "$@"
  echo "=== $name: ok in $((SECONDS - t0))s"
}
total0=$SECONDS
step "host packages (node lab tools, chromium)" lab/host-packages.sh
trap 'node_part_stop' EXIT
node_part_start make -s integration-nodes
step "sanity (ansible-test)" make -s sanity
step "lint (ansible-lint, production profile)" make -s lint
step "docs (antsibull-docs lint, sphinx -W, a page per module and role)" make -s docs
step "units" make -s units
step "integration, API-server lab (lab + pytest + molecule)" make -s integration-apiserver
step "integration, node lab (started beside the steps above)" node_part_wait
echo "=== all tests passed in $((SECONDS - total0))s"
