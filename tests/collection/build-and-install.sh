#!/usr/bin/env bash
# `make collection`: build the collection's tarball as a release would (galaxy.yml's
# build_ignore decides what is in it) and install it, as a user does, into a fresh
# collections path. tests/integration/run.sh then runs molecule `default` and the module
# tests from that installed copy, so what is tested is what users get, not the checkout.
#
#   DRA_GPU_DIST_DIR               where the tarball goes (default build/dist)
#   DRA_GPU_INSTALLED_COLLECTIONS  the collections path to install into (default
#                                  build/installed-collections); emptied first
#
# Galaxy cannot be reached here and kubernetes.core comes with the virtualenv's `ansible`
# package, so the install is offline and without dependencies.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/.venv/bin"
dist=${DRA_GPU_DIST_DIR:-$root/build/dist}
dest=${DRA_GPU_INSTALLED_COLLECTIONS:-$root/build/installed-collections}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
# build/collections holds the checkout symlink every other test uses; emptying it or the
# checkout itself would be a disaster, and installing there would test nothing new.
case "$dest" in
  "$root" | "$root/build" | "$root/build/collections" | "$root/build/collections/"* | /)
    echo "collection: refusing to install into $dest (the checkout or its symlinked collections path)" >&2
    exit 2 ;;
esac
rm -f "$dist"/dra-gpu-*.tar.gz
"$bin/ansible-galaxy" collection build --force --output-path "$dist" "$root" >/dev/null
tarballs=("$dist"/dra-gpu-*.tar.gz)
if [ "${#tarballs[@]}" -ne 1 ] || [ ! -f "${tarballs[0]}" ]; then
  echo "collection: expected one dra-gpu-*.tar.gz in $dist, found: ${tarballs[*]}" >&2
  exit 1
fi
tarball=${tarballs[0]}
# A fresh path: nothing of an earlier install (or a stray symlink) may survive into this one.
rm -rf "${dest:?}/ansible_collections"
ANSIBLE_COLLECTIONS_PATH="$dest" "$bin/ansible-galaxy" collection install --offline --no-deps --collections-path "$dest" "$tarball" >/dev/null
installed="$dest/ansible_collections/dra/gpu"
# The installed files must be exactly those the tarball's FILES.json lists, with their checksums.
ANSIBLE_COLLECTIONS_PATH="$dest" "$bin/ansible-galaxy" collection verify --offline dra.gpu >/dev/null
if [ -L "$installed" ] || [ ! -f "$installed/MANIFEST.json" ] || [ -e "$installed/galaxy.yml" ]; then
  echo "collection: $installed is not an installed artifact (a symlink, no MANIFEST.json, or a galaxy.yml)" >&2
  exit 1
fi
echo "collection: built $tarball ($(stat -c %s "$tarball") bytes, $(tar tzf "$tarball" | wc -l) members)"
echo "collection: installed at $installed"
echo "collection: use it with: export ANSIBLE_COLLECTIONS_PATH=$dest"
