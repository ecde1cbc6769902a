#!/usr/bin/env bash
# Run `ansible-test <command>` on a copy of the collection in .../ansible_collections/dra/gpu:
# ansible-test insists on that path and on a real directory, and the copy must sit outside
# this git repository, or ansible-test would list files through our git (which ignores it).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest="${TMPDIR:-/tmp}/dra-gpu-ansible-test-$(id -u)/$(echo "$here" | md5sum | cut -c1-8)/ansible_collections/dra/gpu"
rm -rf "$dest"
mkdir -p "$dest"
# Tracked and new-but-not-ignored files only: no venv, lab state or build output.
(cd "$here" && git ls-files -z --cached --others --exclude-standard) \
  | (cd "$here" && xargs -0 -r tar --no-recursion -cf - 2>/dev/null) | tar -xf - -C "$dest" 2>/dev/null || true
# Dependencies (kubernetes.core, from the pinned `ansible` package) beside the copy, where
# ansible-test looks for them: validate-modules resolves their doc fragments there.
deps="$dest/../.."
site=$("$here/.venv/bin/python" -c 'import ansible_collections.kubernetes.core as c; print(list(c.__path__)[0])')
mkdir -p "$deps/kubernetes"
rm -rf "$deps/kubernetes/core" && cp -r "$site" "$deps/kubernetes/core"
cd "$dest"
# ansible-test bootstraps pip in its sanity virtualenvs with a script it downloads from a
# host these machines cannot reach; give it our PyPI-based stand-in under the cached name.
pip_version=$("$here/.venv/bin/python" - <<'PY'
import re, ansible_test, os
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
print(re.search(r"pip='([0-9.]+)'", src).group(1))
PY
)
get_pip="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
if ! cmp -s "$here/tests/sanity/offline-get-pip.py" "$get_pip"; then
  mkdir -p "$(dirname "$get_pip")" && cp "$here/tests/sanity/offline-get-pip.py" "$get_pip"
fi
export PATH="$here/.venv/bin:$PATH"
case "$1" in
  sanity) shift; exec ansible-test sanity --python 3.11 --color no "$@" ;;
  units) shift; exec ansible-test units --python 3.11 --color no "$@" ;;
  *) exec ansible-test "$@" ;;
esac
