#!/usr/bin/env bash
# `make test`: every check, in the order that fails fastest. Each step prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
step() {
  local name=$1; shift
  local t0=$SECONDS
  echo "=== $name"
  "$@"
  echo "=== $name: ok in $((SECONDS - t0))s"
}
total0=$SECONDS
step "host packages (node lab tools, chromium)" tests/lab/host-packages.sh
step "sanity (ansible-test)" make -s sanity
step "lint (ansible-lint, production profile)" make -s lint
step "docs (antsibull-docs lint, sphinx -W, a page per module and role)" make -s docs
step "units" make -s units
step "integration (lab + pytest + molecule)" make -s integration
echo "=== all tests passed in $((SECONDS - total0))s"
