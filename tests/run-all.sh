#!/usr/bin/env bash
# `make test`: every check, in the order that fails fastest. Each step prints its time. Two parts
# of the integration tests, the node lab's and molecule's, start once the host packages are there
# and run beside the other steps (tests/integration/beside.sh); their logs are shown when they end.
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
trap 'parts_stop' EXIT
part_start "node lab" make -s integration-nodes
part_start molecule make -s integration-molecule
step "sanity (ansible-test)" make -s sanity
step "lint (ansible-lint, production profile)" make -s lint
step "docs (antsibull-docs lint, sphinx -W, a page per module and role)" make -s docs
step "units" make -s units
step "integration, API-server lab (lab + pytest)" make -s integration-apiserver
step "integration, molecule (started beside the steps above)" part_wait molecule
step "integration, node lab (started beside the steps above)" part_wait "node lab"
echo "=== all tests passed in $((SECONDS - total0))s"
