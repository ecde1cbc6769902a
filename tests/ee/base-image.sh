#!/usr/bin/env bash
# The execution environment's base image, made here: no container registry is reachable from
# this machine, so the definition's base (registry.access.redhat.com/ubi9/ubi, or Automation
# Platform's ee-minimal-rhel9) cannot be pulled. What stands in for it is Debian 12 (bookworm)
# from debootstrap, the suite and mirror the node lab's machines are made from
# (lab/labctl/nodes/lab.py), imported into podman. It offers what ansible-builder expects
# of a base image: Python 3.11 (bookworm's python3, the newest Python ansible-core 2.19 runs on
# that the collection is tested with) and pip.
#
#   base-image.sh IMAGE     builds IMAGE unless podman has it; the root file system is kept as a
#                           tarball in ~/.cache/dra-gpu-lab/ee (LAB_CACHE_DIR), so a fresh podman
#                           storage imports it again without debootstrap.
#
# Where Debian differs from the RPM-based images ansible-builder is written for, the base says
# so here once rather than in every build:
#   - `python3 -m ensurepip --root /` (ansible-builder's base stage runs it) fails: Debian's
#     python3 has no ensurepip (python3-venv would bring one that refuses to run). pip is there
#     from python3-pip, so a no-op ensurepip stands in. (Debian's refusal of `pip install`
#     outside a venv, PEP 668, ansible-builder lifts itself: PIP_BREAK_SYSTEM_PACKAGES=1.)
#   - the package lists are fetched, so ansible-builder's `$PKGMGR install` of bindep's
#     packages finds them (apt-get, unlike dnf, does not fetch them itself).
set -euo pipefail
image=${1:?usage: base-image.sh IMAGE}
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${LAB_CACHE_DIR:-$HOME/.cache/dra-gpu-lab}/ee
packages=python3,python3-pip,ca-certificates
read -r suite mirror < <(cd "$root/lab" && "$root/.venv/bin/python" -c \
  'from labctl.nodes.lab import DEBIAN_SUITE, DEBIAN_MIRROR; print(DEBIAN_SUITE, DEBIAN_MIRROR)')
tarball=$cache/rootfs-$suite.tar
stamp=$tarball.packages

if podman image exists "$image"; then
  echo "base-image: $image is there (podman rmi $image builds it again)"
  exit 0
fi
mkdir -p "$cache"
if [ ! -f "$tarball" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$packages" ]; then
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs"' EXIT
  echo "base-image: debootstrap $suite ($packages) from $mirror; log: $cache/debootstrap.log"
  if ! debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    tail -20 "$cache/debootstrap.log" >&2
    echo "base-image: debootstrap failed; the whole log is $cache/debootstrap.log" >&2
    exit 1
  fi
  ensurepip=$(echo "$rootfs"/usr/lib/python3.*/)ensurepip
  mkdir -p "$ensurepip"
  : >"$ensurepip/__init__.py"
  printf 'raise SystemExit(0)  # pip comes from Debian python3-pip (tests/ee/base-image.sh)\n' >"$ensurepip/__main__.py"
  chroot "$rootfs" apt-get update -q >>"$cache/debootstrap.log"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb
  tar -C "$rootfs" --numeric-owner -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  echo "$packages" >"$stamp"
fi
podman import --quiet --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' \
  --message "debootstrap $suite ($packages), tests/ee/base-image.sh" "$tarball" "$image-rootfs" >/dev/null
# This machine reaches PyPI through a proxy that presents its own CA: the build's pip trusts
# what the host trusts (its CA bundle and pip settings), as an EE built behind a company proxy
# does. A layer of its own on top of Debian's, so the cached root file system stays Debian's.
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp /etc/ssl/certs/ca-certificates.crt "$context/"
printf 'FROM %s\nCOPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\n' "$image-rootfs" >"$context/Containerfile"
if [ -f /etc/pip.conf ]; then
  cp /etc/pip.conf "$context/" && echo 'COPY pip.conf /etc/pip.conf' >>"$context/Containerfile"
fi
podman build --quiet --network none -t "$image" "$context" >/dev/null
podman rmi "$image-rootfs" >/dev/null
echo "base-image: imported $image ($(podman image inspect --format '{{.Size}}' "$image") bytes)"
