#!/usr/bin/env bash
# The node lab's host tools and build dependencies, and the browser the report test opens the
# GPU usage page in, from Debian's packages: installed when missing (needs root).
# libseccomp-dev: runc is linked statically against it.
# `host-packages.sh browser`: the browser alone, all the tests of the API-server lab need
# (tests/integration/run-apiserver-lab.sh, which needs no root once it is there).
# `host-packages.sh ee`: what `make ee` builds the execution-environment image with (tests/ee/
# build-image.sh): podman, runc (podman's default crun cannot run in a container that has hybrid
# cgroups, as Docker gives this machine) and debootstrap (the image's base: no registry here).
set -euo pipefail
declare -A package_of=([systemd-nspawn]=systemd-container [debootstrap]=debootstrap [ssh]=openssh-client
                       [nsenter]=util-linux [dpkg-scanpackages]=dpkg-dev [gpg]=gnupg [chromium]=chromium)
missing=()
who=node-lab
if [ "${1:-}" = browser ]; then
  package_of=([chromium]=chromium)
  who=lab
elif [ "${1:-}" = ee ]; then
  package_of=([podman]=podman [runc]=runc [debootstrap]=debootstrap)
  who=ee
else
  [ -e /usr/lib/x86_64-linux-gnu/libseccomp.a ] || missing+=(libseccomp-dev)
fi
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null || missing+=("${package_of[$tool]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "$who: missing host tools; run as root: apt-get install -y ${missing[*]}" >&2
  exit 2
fi
echo "$who: installing ${missing[*]} from Debian's packages" >&2
# The lock timeout: make test's two integration parts may both get here at once (beside.sh).
apt_get() { apt-get -o DPkg::Lock::Timeout=300 "$@"; }
apt_get install -y -q "${missing[@]}" >/dev/null || { apt_get update -q >/dev/null && apt_get install -y -q "${missing[@]}" >/dev/null; }
