"""The node lab's package mirror: kubeadm, kubelet and kubectl as .deb packages built from
the lab's own Go builds, in an apt repository with pkgs.k8s.io's per-minor layout, signed
with a throwaway key, served on loopback.

Layout (as on pkgs.k8s.io, so only the repository URL and key change, as for an air-gapped
site's mirror)::

    ROOT/repo/core:/stable:/v1.35/deb/{Packages,Packages.gz,Release,Release.gpg,InRelease,Release.key}
    ROOT/repo/core:/stable:/v1.35/deb/<package>_<version>-1.1_amd64.deb
    ROOT/gnupg/     the throwaway signing key (never served; signs nothing else)

Each minor also carries cri-tools (crictl), which kubeadm depends on as upstream; it is
built from sigs.k8s.io/cri-tools at one version for both minors (labctl.nodes.runtime says
why). Differences from the upstream packages, on purpose: no kubernetes-cni dependency
(the node lab installs the CNI plugins itself), and the maintainer is the lab.
Serve ROOT/repo, for example ``python -m http.server --bind 127.0.0.1 --directory ROOT/repo``.
"""

import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
import textwrap
import time

from labctl.apiserver import build
from labctl.nodes import runtime as node_runtime

PACKAGES = node_runtime.NODE_COMMANDS
DEB_REVISION = "1.1"  # pkgs.k8s.io spells 1.35.4 as 1.35.4-1.1
KEY_UID = "dra.gpu lab package mirror (throwaway test key) <lab@dra-gpu.invalid>"

# The kubelet unit and kubeadm's drop-in, as the upstream packages install them.
KUBELET_UNIT = textwrap.dedent("""\
    [Unit]
    Description=kubelet: The Kubernetes Node Agent
    Documentation=https://kubernetes.io/docs/
    Wants=network-online.target
    After=network-online.target

    [Service]
    ExecStart=/usr/bin/kubelet
    Restart=always
    StartLimitInterval=0
    RestartSec=10

    [Install]
    WantedBy=multi-user.target
    """)
KUBEADM_DROP_IN = textwrap.dedent("""\
    [Service]
    Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
    Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
    EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
    EnvironmentFile=-/etc/default/kubelet
    ExecStart=
    ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
    """)
DESCRIPTIONS = {
    "kubeadm": "Command-line utility for administering a Kubernetes cluster",
    "kubelet": "Node agent for Kubernetes clusters",
    "kubectl": "Command-line utility for interacting with a Kubernetes cluster",
    "cri-tools": "Command-line utility for interacting with a container runtime",
}
COMMAND_OF = {"cri-tools": "crictl"}
DEPENDS = {"kubeadm": "cri-tools"}


class MirrorError(RuntimeError):
    pass


def minor_of(version):
    return ".".join(version.split(".")[:2])


def served_dir(root):
    return os.path.join(root, "repo")


def repo_dir(root, minor):
    return os.path.join(served_dir(root), "core:", "stable:", "v" + minor, "deb")


def _files_of(package, bindir):
    """{path in the package: (source file or text, mode)}."""
    command = COMMAND_OF.get(package, package)
    files = {"usr/bin/" + command: (os.path.join(bindir, command), 0o755)}
    if package == "kubelet":
        files["usr/lib/systemd/system/kubelet.service"] = (KUBELET_UNIT, 0o644)
    if package == "kubeadm":
        files["usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"] = (KUBEADM_DROP_IN, 0o644)
    return files


def build_deb(package, version, bindir, dest, built_from="k8s.io/kubernetes"):
    """One .deb with dpkg-deb; returns its path."""
    full = "%s-%s" % (version, DEB_REVISION)
    out = os.path.join(dest, "%s_%s_amd64.deb" % (package, full))
    if os.path.exists(out):
        return out
    with tempfile.TemporaryDirectory(prefix="deb-") as work:
        for path, (source, mode) in _files_of(package, bindir).items():
            target = os.path.join(work, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.isfile(source):
                shutil.copyfile(source, target)
            else:
                with open(target, "w") as handle:
                    handle.write(source)
            os.chmod(target, mode)
        os.makedirs(os.path.join(work, "DEBIAN"))
        size_kib = sum(os.path.getsize(os.path.join(d, f)) for d, _s, fs in os.walk(work) for f in fs) // 1024
        with open(os.path.join(work, "DEBIAN", "control"), "w") as handle:
            handle.write("Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: dra.gpu lab <lab@dra-gpu.invalid>\n"
                         "Installed-Size: %d\nSection: admin\nPriority: optional\n%s"
                         "Homepage: https://kubernetes.io\nDescription: %s\n"
                         " Built by the dra.gpu node lab from %s v%s.\n"
                         % (package, full, size_kib,
                            "Depends: %s\n" % DEPENDS[package] if package in DEPENDS else "",
                            DESCRIPTIONS[package], built_from, version))
        tmp = out + ".tmp"
        _check(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", work, tmp])
        os.rename(tmp, out)
    return out


def _check(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout).strip()[-2000:]
        raise MirrorError("`%s` failed (exit %d): %s" % (" ".join(cmd), proc.returncode, output))
    return proc.stdout


def _gnupg(root):
    """The throwaway signing key's home, created once per mirror."""
    home = os.path.join(root, "gnupg")
    if not os.path.isdir(home):
        os.makedirs(home, mode=0o700)
        _check(["gpg", "--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
                "--quick-gen-key", KEY_UID, "ed25519", "sign", "never"])
    return home


def _release(repo, minor):
    """A flat repository's Release file, with the hashes apt checks."""
    lines = ["Origin: dra.gpu lab", "Label: dra.gpu lab", "Suite: v" + minor, "Codename: v" + minor,
             "Architectures: amd64", "Date: " + time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime()),
             "Description: kubeadm, kubelet, kubectl %s for the dra.gpu node lab" % minor]
    for field, algorithm in (("MD5Sum", "md5"), ("SHA256", "sha256")):
        lines.append(field + ":")
        for name in ("Packages", "Packages.gz"):
            with open(os.path.join(repo, name), "rb") as handle:
                data = handle.read()
            lines.append(" %s %d %s" % (hashlib.new(algorithm, data).hexdigest(), len(data), name))
    return "\n".join(lines) + "\n"


def index(root, minor):
    """Packages, Release, signatures and the public key of one minor's repository."""
    repo = repo_dir(root, minor)
    packages = _check(["dpkg-scanpackages", "--multiversion", "."], cwd=repo)
    with open(os.path.join(repo, "Packages"), "w") as handle:
        handle.write(packages)
    with gzip.open(os.path.join(repo, "Packages.gz"), "wt") as handle:
        handle.write(packages)
    with open(os.path.join(repo, "Release"), "w") as handle:
        handle.write(_release(repo, minor))
    home = _gnupg(root)
    for name in ("InRelease", "Release.gpg"):
        if os.path.exists(os.path.join(repo, name)):
            os.unlink(os.path.join(repo, name))
    gpg = ["gpg", "--homedir", home, "--batch", "--yes", "--pinentry-mode", "loopback", "--passphrase", ""]
    _check(gpg + ["--clearsign", "-o", os.path.join(repo, "InRelease"), os.path.join(repo, "Release")])
    _check(gpg + ["--armor", "--detach-sign", "-o", os.path.join(repo, "Release.gpg"), os.path.join(repo, "Release")])
    _check(gpg + ["--armor", "--export", "-o", os.path.join(repo, "Release.key")])


def build_mirror(root, versions, log):
    """Build the node binaries of every version, package them, index each minor."""
    minors = set()
    for version in versions:
        version = build.normalise_k8s_version(version)
        bindir = node_runtime.build_kubernetes_node(version, log)
        dest = repo_dir(root, minor_of(version))
        os.makedirs(dest, exist_ok=True)
        for package in PACKAGES:
            build_deb(package, version, bindir, dest)
        build_deb("cri-tools", node_runtime.CRI_TOOLS_VERSION, node_runtime.build_crictl(log), dest,
                  built_from="sigs.k8s.io/cri-tools")
        minors.add(minor_of(version))
    try:
        for minor in sorted(minors):
            index(root, minor)
    finally:
        # gpg starts an agent per home directory that outlives it; the mirror leaves none.
        subprocess.run(["gpgconf", "--homedir", os.path.join(root, "gnupg"), "--kill", "gpg-agent"],
                       capture_output=True, check=False)
    return sorted(minors)
