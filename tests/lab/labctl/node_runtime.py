"""Compile what a node lab's node runs beside the kubelet: containerd, runc, CNI plugins, crictl, etcdctl.

Debian's containerd (1.6) has no CDI, which DRA needs, and no registry a node could pull
from is reachable here; every piece is therefore built from its published Go module, the
same way the control plane is (labctl.build), and cached per version under the lab cache.
"""

import os
import shutil

from labctl import build, paths

CONTAINERD_VERSION = "2.2.9"
RUNC_VERSION = "1.4.4"
CNI_PLUGINS_VERSION = "1.9.1"
# pkgs.k8s.io ships cri-tools per minor; the proxy serves v1.34.0 but not v1.35.0, so both
# minors of the mirror carry 1.34.0 (crictl talks CRI v1, which both kubelets speak).
CRI_TOOLS_VERSION = "1.34.0"

CNI_PLUGINS = ("plugins/main/bridge", "plugins/main/loopback", "plugins/ipam/host-local",
               "plugins/meta/portmap")


def _go(workdir, args, log, cgo=False, ldflags=""):
    env = {"CGO_ENABLED": "1" if cgo else "0"}
    if cgo:
        # Static, so the node needs none of the build host's C libraries.
        ldflags += " -extldflags -static"
    cmd = ["go", "build", "-trimpath", "-ldflags", ("-s -w " + ldflags).strip()] + args
    build.run_go(cmd, workdir, log, env)


def _component(name, version, module, packages, outputs, log, force, cgo=False, ldflags="", tags=""):
    root = paths.tool_build_dir(name, version)
    bindir = os.path.join(root, "bin")
    if not force and all(os.access(os.path.join(bindir, o), os.X_OK) for o in outputs):
        return bindir
    workdir = os.path.join(root, "src")
    build.prepare_wrapper_module(workdir, "dragpu.lab/" + name, [(module, "v" + version)], packages, log)
    tmp = bindir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    args = ["-o", tmp + "/"] + (["-tags", tags] if tags else []) + list(packages)
    _go(workdir, args, log, cgo=cgo, ldflags=ldflags)
    shutil.rmtree(bindir, ignore_errors=True)
    os.rename(tmp, bindir)
    return bindir


def build_containerd(log, force=False):
    module = "github.com/containerd/containerd/v2"
    version_pkg = module + "/version"
    ldflags = "-X %s.Version=v%s -X %s.Revision=gomodule" % (version_pkg, CONTAINERD_VERSION, version_pkg)
    return _component("containerd", CONTAINERD_VERSION, module,
                      [module + "/cmd/containerd", module + "/cmd/ctr", module + "/cmd/containerd-shim-runc-v2"],
                      ["containerd", "ctr", "containerd-shim-runc-v2"], log, force, ldflags=ldflags,
                      tags="no_btrfs no_devmapper no_zfs")


def build_runc(log, force=False):
    # runc's nsenter is C, so cgo is on. With seccomp (libseccomp-dev, linked statically):
    # kubeadm's static pods and the restricted Pod Security level ask for RuntimeDefault.
    return _component("runc", RUNC_VERSION, "github.com/opencontainers/runc",
                      ["github.com/opencontainers/runc"], ["runc"], log, force, cgo=True,
                      ldflags="-X main.version=" + RUNC_VERSION, tags="seccomp netgo osusergo")


def build_cni_plugins(log, force=False):
    module = "github.com/containernetworking/plugins"
    return _component("cni-plugins", CNI_PLUGINS_VERSION, module,
                      ["%s/%s" % (module, p) for p in CNI_PLUGINS],
                      [p.rsplit("/", 1)[1] for p in CNI_PLUGINS], log, force)


def build_crictl(log, force=False):
    module = "sigs.k8s.io/cri-tools"
    return _component("cri-tools", CRI_TOOLS_VERSION, module, [module + "/cmd/crictl"], ["crictl"], log,
                      force, ldflags="-X %s/pkg/version.Version=v%s" % (module, CRI_TOOLS_VERSION))


def build_etcdctl(log, force=False):
    """kubeadm's etcd image carries etcdctl; cluster_upgrade snapshots etcd with it."""
    return _component("etcdctl", build.ETCD_VERSION, "go.etcd.io/etcd/etcdctl/v3",
                      ["go.etcd.io/etcd/etcdctl/v3"], ["etcdctl"], log, force)


def build_all(log, force=False):
    """{name: bindir} for every node-side component."""
    return {
        "containerd": build_containerd(log, force),
        "runc": build_runc(log, force),
        "cni-plugins": build_cni_plugins(log, force),
        "cri-tools": build_crictl(log, force),
        "etcdctl": build_etcdctl(log, force),
    }
