#!/usr/bin/env bash
# Integration tests: start the test lab, run pytest and molecule against it, and stop the
# lab whatever happens. LAB_* variables come from the Makefile (state dir, ports, mode).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
lab() { "$root/.venv/bin/python" "$root/tests/lab/lab.py" "$@"; }
trap 'lab down || true' EXIT
t0=$SECONDS
lab up
echo "integration: lab up in $((SECONDS - t0))s"
eval "$(lab env --venv-bin "$root/.venv/bin")"
python -m pytest -q -p no:cacheprovider tests/integration "$@"
if compgen -G "molecule/*/molecule.yml" >/dev/null; then
  for scenario in molecule/*/; do
    name=$(basename "$scenario")
    echo "=== molecule test -s $name"
    molecule test -s "$name"
  done
fi
