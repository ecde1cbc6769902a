#!/usr/bin/env bash
# `make ee`, first half: build the execution environment (EE) for real, with Debian's podman and
# no container registry, from the example definition (docs/execution-environment/) with the
# stand-ins tests/ee/definition.py names, and dra.gpu installed from its release tarball.
# tests/ee/lab_ee.py (the second half) runs the playbooks in it against a lab.
#
#   EE_IMAGE              the image to build             (default localhost/dra-gpu-ee:test)
#   EE_WORK               build context and logs         (default build/ee/<image's tag>)
#   EE_COLLECTION_TARBALL build from this dra.gpu tarball instead of the checkout's (tests/ee/
#                         lab_ee.py: a tarball whose requirements.txt/bindep.txt name too little)
#
# The build ends with tests/ee/check_image.py in the image: it fails (and with it
# `ansible-builder build`) when requirements.txt or bindep.txt lack what the plugins import or run.
# Needs root, podman, runc and debootstrap (lab/host-packages.sh ee) and PyPI: the build
# installs ansible-core, ansible-runner and requirements.txt from it, through the host's network.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
image=${EE_IMAGE:-localhost/dra-gpu-ee:test}
work=${EE_WORK:-$root/build/ee/${image##*:}}
base=localhost/dra-gpu-ee-base:bookworm
export PATH=$root/.venv/bin:$PATH
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/tests/ee/containers.conf}
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || { echo "ee: needs $tool (lab/host-packages.sh ee installs it)" >&2; exit 2; }
done
command -v ansible-builder >/dev/null || { echo "ee: needs ansible-builder in $root/.venv (make bootstrap)" >&2; exit 2; }

"$root/tests/ee/base-image.sh" "$base"

rm -rf "$work"
mkdir -p "$work/files/dist"
if [ -n "${EE_COLLECTION_TARBALL:-}" ]; then
  cp "$EE_COLLECTION_TARBALL" "$work/files/dist/"
else
  # The tarball as a release makes it, installed and verified (build-and-install.sh).
  DRA_GPU_DIST_DIR=$work/files/dist DRA_GPU_INSTALLED_COLLECTIONS=$work/installed \
    "$root/tests/collection/build-and-install.sh"
fi
tarball=$(cd "$work/files/dist" && ls dra-gpu-*.tar.gz)
# kubernetes.core: the one the virtualenv's pinned `ansible` package carries (Galaxy is not reachable).
kcore=$(python -c 'import ansible_collections.kubernetes.core as c; print(list(c.__path__)[0])')
cp -r "$kcore" "$work/files/kubernetes.core"
# helm: the lab's build (lab/: labctl builds it into ~/.cache/dra-gpu-lab), not get.helm.sh.
# Built once and cached, as `lab.py build` does (log: ~/.cache/dra-gpu-lab/build.log).
helm_bin=$(cd "$root/lab" && python -c '
import os
from labctl import paths
from labctl.apiserver import build
os.makedirs(paths.cache_root(), exist_ok=True)
with open(os.path.join(paths.cache_root(), "build.log"), "a") as log:
    print(build.build_helm(log))')
cp "$helm_bin/helm" "$work/files/helm"
cp "$root/tests/ee/check_image.py" "$work/files/"
python "$root/tests/ee/definition.py" "$root/docs/execution-environment/execution-environment.yml" \
  "$work/execution-environment.yml" "$base" "$tarball" kubernetes.core helm

cd "$work"
started=$(date +%s)
# --network=host: the build's pip reaches PyPI the way this machine does (podman's own network
# needs netavark/slirp, which a machine inside Docker may not offer). Full output in build.log.
if ! ansible-builder build -v 3 -f execution-environment.yml -c context -t "$image" --container-runtime podman \
     --extra-build-cli-args=--network=host >"$work/build.log" 2>&1; then
  grep -B1 -A12 'check_image: this execution environment' "$work/build.log" >&2 || tail -40 "$work/build.log" >&2
  echo "ee: ansible-builder build of $image failed; the whole log is $work/build.log" >&2
  exit 1
fi
grep -E '^check_image: ' "$work/build.log" | tail -1
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "ee: built $image in $(( $(date +%s) - started ))s, $size bytes ($(( size / 1024 / 1024 )) MiB); log: $work/build.log"

run() { podman run --rm --network none "$image" "$@"; }
run ansible --version | head -1
run ansible-galaxy collection list dra.gpu | grep -E '^dra\.gpu '
run ansible-galaxy collection list kubernetes.core | grep -E '^kubernetes\.core '
