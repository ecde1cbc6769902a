"""Compile what a node lab's node runs: kubeadm, kubelet, kubectl (packaged into the mirror), and
beside the kubelet containerd, runc, CNI plugins, crictl, etcdctl, etcdutl.

Debian's containerd (1.6) has no CDI, which DRA needs, and no registry a node could pull
from is reachable here; every piece is therefore built from its published Go module, the
same way the control plane is (labctl.gobuild, labctl.apiserver.build), and cached per version
under the lab cache.
"""

from labctl import gobuild
from labctl.apiserver import build

CONTAINERD_VERSION = "2.2.9"
RUNC_VERSION = "1.4.4"
CNI_PLUGINS_VERSION = "1.9.1"
# pkgs.k8s.io ships cri-tools per minor; the proxy serves v1.34.0 but not v1.35.0, so both
# minors of the mirror carry 1.34.0 (crictl talks CRI v1, which both kubelets speak).
CRI_TOOLS_VERSION = "1.34.0"

CNI_PLUGINS = ("plugins/main/bridge", "plugins/main/loopback", "plugins/ipam/host-local",
               "plugins/meta/portmap")
# What pkgs.k8s.io packages for a node, built from k8s.io/kubernetes like the control plane.
NODE_COMMANDS = ("kubeadm", "kubelet", "kubectl")


def build_kubernetes_node(version, log, force=False):
    """What a kubeadm node installs from packages: kubeadm, kubelet, kubectl (the node lab's mirror)."""
    return build.build_kubernetes_commands(version, NODE_COMMANDS, "node-bin", "src-node", log, force)


def build_containerd(log, force=False):
    module = "github.com/containerd/containerd/v2"
    version_pkg = module + "/version"
    ldflags = "-X %s.Version=v%s -X %s.Revision=gomodule" % (version_pkg, CONTAINERD_VERSION, version_pkg)
    return gobuild.build_module("containerd", CONTAINERD_VERSION, module,
                                [module + "/cmd/containerd", module + "/cmd/ctr", module + "/cmd/containerd-shim-runc-v2"],
                                ["containerd", "ctr", "containerd-shim-runc-v2"], log, force, ldflags=ldflags,
                                tags="no_btrfs no_devmapper no_zfs")


def build_runc(log, force=False):
    # runc's nsenter is C, so cgo is on. With seccomp (libseccomp-dev, linked statically):
    # kubeadm's static pods and the restricted Pod Security level ask for RuntimeDefault.
    return gobuild.build_module("runc", RUNC_VERSION, "github.com/opencontainers/runc",
                                ["github.com/opencontainers/runc"], ["runc"], log, force, cgo=True,
                                ldflags="-X main.version=" + RUNC_VERSION, tags="seccomp netgo osusergo")


def build_cni_plugins(log, force=False):
    module = "github.com/containernetworking/plugins"
    return gobuild.build_module("cni-plugins", CNI_PLUGINS_VERSION, module,
                                ["%s/%s" % (module, p) for p in CNI_PLUGINS],
                                [p.rsplit("/", 1)[1] for p in CNI_PLUGINS], log, force)


def build_crictl(log, force=False):
    module = "sigs.k8s.io/cri-tools"
    return gobuild.build_module("cri-tools", CRI_TOOLS_VERSION, module, [module + "/cmd/crictl"], ["crictl"], log,
                                force, ldflags="-X %s/pkg/version.Version=v%s" % (module, CRI_TOOLS_VERSION))


def build_etcdctl(log, force=False):
    """kubeadm's etcd image carries etcdctl; cluster_upgrade snapshots etcd with it."""
    return gobuild.build_module("etcdctl", build.ETCD_VERSION, "go.etcd.io/etcd/etcdctl/v3",
                                ["go.etcd.io/etcd/etcdctl/v3"], ["etcdctl"], log, force)


def build_etcdutl(log, force=False):
    """etcd 3.6's etcdctl no longer restores snapshots; docs/upgrades.md's restore (cluster_upgrade's
    etcd_restore, tests/integration/labs/test_node_etcd_restore.py) runs etcdutl on each control plane,
    installed there as a site installs it from etcd's release tarball."""
    return gobuild.build_module("etcdutl", build.ETCD_VERSION, "go.etcd.io/etcd/etcdutl/v3",
                                ["go.etcd.io/etcd/etcdutl/v3"], ["etcdutl"], log, force)


def build_all(log, force=False):
    """{name: bindir} for every node-side component."""
    return {
        "containerd": build_containerd(log, force),
        "runc": build_runc(log, force),
        "cni-plugins": build_cni_plugins(log, force),
        "cri-tools": build_crictl(log, force),
        "etcdctl": build_etcdctl(log, force),
        "etcdutl": build_etcdutl(log, force),
    }
