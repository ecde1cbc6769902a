#!/usr/bin/env bash
# Build the example execution environment for real, with podman and no container registry, and
# run a dra.gpu module in it. Manual (root, podman, about 5 minutes); not part of `make test`.
#
# What differs from docs/execution-environment/execution-environment.yml, and why:
#   - base image: Debian 12 made with debootstrap and `podman import` (no registry reachable);
#     ansible-builder's scripts assume dnf, so apt-get is named, its cache kept (`apt-get clean
#     all` is an error) and Debian's refusal of `ensurepip` outside a venv stubbed (pip is there);
#   - collections: dra.gpu from the tarball `ansible-galaxy collection build` makes, and
#     kubernetes.core from the pinned `ansible` package (Galaxy is not reachable);
#   - no helm step unless get.helm.sh answers.
# Inside a Docker container podman also needs runc (crun cannot do hybrid cgroups), ulimits no
# higher than the container's and host networking; a private containers.conf sets the first two.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/build/ee-image
base=localhost/dra-gpu-ee-base:bookworm
image=${EE_IMAGE:-localhost/dra-gpu-ee:test}
export PATH=$root/.venv/bin:$PATH
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || { echo "build-image: needs $tool (apt-get install podman runc debootstrap)" >&2; exit 2; }
done
mkdir -p "$work"
cat > "$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF=$work/containers.conf

if ! podman image exists "$base"; then
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates \
    bookworm "$work/rootfs" http://deb.debian.org/debian
  # The host's CA bundle and pip settings, so pip in the build reaches PyPI as the host does.
  cp /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
  if [[ -f /etc/pip.conf ]]; then cp /etc/pip.conf "$work/rootfs/etc/pip.conf"; fi
  tar -C "$work/rootfs" -c . | podman import - "$base"
  rm -rf "$work/rootfs"
fi

rm -rf "$work/files" "$work/context"
mkdir -p "$work/files/dist" "$work/files/kcore/ansible_collections/kubernetes"
ansible-galaxy collection build "$root" --output-path "$work/files/dist" >/dev/null
kcore=$(python -c 'import ansible_collections.kubernetes.core as c; print(list(c.__path__)[0])')
cp -r "$kcore" "$work/files/kcore/ansible_collections/kubernetes/core"
helm_reachable=0
if curl -fsS -m 10 -o /dev/null https://get.helm.sh/; then helm_reachable=1; fi

python - "$root/docs/execution-environment/execution-environment.yml" "$work/execution-environment.yml" \
  "$base" "$(basename "$work"/files/dist/*.tar.gz)" "$helm_reachable" <<'PY'
import sys
import yaml
src, dest, base, tarball, helm = sys.argv[1:]
ee = yaml.safe_load(open(src))
ee["images"]["base_image"]["name"] = base
deps = ee["dependencies"]
deps["python_interpreter"] = {"package_system": "python3", "python_path": "/usr/bin/python3"}
deps["galaxy"] = {"collections": [
    {"name": "/build/files/dist/" + tarball, "type": "file"},
    {"name": "/build/files/kcore/ansible_collections/kubernetes/core", "type": "dir"},
]}
ee.setdefault("options", {})["package_manager_path"] = "/usr/bin/apt-get"
ee.setdefault("build_arg_defaults", {})["PKGMGR_PRESERVE_CACHE"] = "always"
ee["additional_build_files"] = [{"src": "files", "dest": "files"}]
steps = ee.setdefault("additional_build_steps", {})
steps["prepend_base"] = [
    "RUN apt-get update",
    "RUN printf 'raise SystemExit(0)\\n' > /usr/lib/python3.11/ensurepip/__main__.py",
]
if helm != "1":
    print("build-image: get.helm.sh is not reachable; building without the helm step")
    steps.pop("append_final")
yaml.safe_dump(ee, open(dest, "w"), sort_keys=False)
PY

cd "$work"
ansible-builder build -f execution-environment.yml -c context -t "$image" --container-runtime podman \
  --extra-build-cli-args=--network=host

run() { podman run --rm --network none -e PYTHONWARNINGS=ignore "$image" "$@"; }
run ansible-galaxy collection list | grep -E '^(dra\.gpu|kubernetes\.core) '
run python3 -c 'import kubernetes, celpy, yaml'
run ssh -V
out=$(run ansible localhost -m dra.gpu.input_check -a '{"role": "smoke_test", "connect": false, "inputs":
  {"smoke_test_count": 1, "smoke_test_timeout": 300, "smoke_test_pods": 1, "smoke_test_namespace": "dra-smoke",
   "smoke_test_device_class": "gpu.nvidia.com", "smoke_test_slice_timeout": 60}}' 2>&1) || { echo "$out"; exit 1; }
grep -q '^localhost | SUCCESS' <<<"$out" || { echo "$out"; exit 1; }
echo "build-image: $image runs dra.gpu.input_check (podman rmi $image removes it)"
