#!/usr/bin/env bash
# `make docs`: the docs site of dra.gpu, from its own DOCUMENTATION blocks and argument specs.
#   1. antsibull-docs lint-collection-docs: schema, markup and references of every plugin and role;
#   2. antsibull-docs collection: one reStructuredText page per module, plugin and role;
#   3. sphinx-build -W: the HTML site, any warning an error;
#   4. a page per module and per role really is in the site (an empty site does not pass).
# Output: build/docs-site/html/index.html. Offline: nothing is downloaded.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
site=$root/build/docs-site
export PATH=$root/.venv/bin:$PATH

# Only dra.gpu and kubernetes.core (its dependency, from the pinned `ansible` package) are
# visible: ansible-doc does not walk the ~100 other collections of that package (2.5 minutes
# instead of 10 seconds), and the site documents this collection alone.
colls=$site/collections/ansible_collections
kcore=$(python -c 'import ansible_collections.kubernetes.core as c; print(list(c.__path__)[0])')
mkdir -p "$colls/dra" "$colls/kubernetes"
ln -sfn "$root" "$colls/dra/gpu"
ln -sfn "$kcore" "$colls/kubernetes/core"
export ANSIBLE_COLLECTIONS_PATH=$site/collections ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false

# References to dra.gpu, kubernetes.core and ansible.builtin are checked (all that is visible);
# kubernetes.core's own auth options mention community.okd, which is not installed, so
# references to collections that are not visible stay allowed.
echo "docs: antsibull-docs lint-collection-docs"
antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs=all "$colls/dra/gpu"

echo "docs: generating pages"
rm -rf "$site/rst" "$site/html" "$site/doctrees"
mkdir -m 700 "$site/rst"  # antsibull-docs writes only into a directory no one else can write
antsibull-docs collection --use-current --fail-on-error --dest-dir "$site/rst" dra.gpu >/dev/null
cp docs/site/index.rst "$site/rst/index.rst"

echo "docs: sphinx-build -W"
sphinx-build -b html -W --keep-going -q -d "$site/doctrees" -c docs/site "$site/rst" "$site/html"

# A page per module and per role, each titled with its name.
pages=$site/html/collections/dra/gpu
missing=()
count=0
for path in plugins/modules/*.py roles/*/; do
  name=$(basename "$path" .py)
  case $path in plugins/*) kind=module ;; *) kind=role ;; esac
  [[ $name == __init__ ]] && continue
  if grep -q "<title>dra.gpu.$name $kind " "$pages/${name}_$kind.html" 2>/dev/null; then
    count=$((count + 1))
  else
    missing+=("dra.gpu.$name ($kind)")
  fi
done
if ((${#missing[@]})); then
  echo "docs: no page for: ${missing[*]}" >&2
  exit 1
fi
((count > 0)) || { echo "docs: no module or role found" >&2; exit 1; }
echo "docs: $count module and role pages; open $site/html/index.html"
