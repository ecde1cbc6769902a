# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which distribution runs a cluster, read from what its API shows, and what that means here.

Pure logic over the API server's version, the node summaries (nodes.summary) and whether
kube-system/kubeadm-config exists. Every verdict names its evidence, so a person can see why.
A cloud provider ID alone does not make a cluster managed (kubeadm runs on cloud VMs too): a
managed control plane is recognised by its provider's version suffix or node-pool labels.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s.api_errors import ApiException
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.chart_values import deep_merge

KUBEADM, K3S, RKE2, EKS, GKE, AKS, UNKNOWN = "kubeadm", "k3s", "rke2", "eks", "gke", "aks", "unknown"
MANAGED = (EKS, GKE, AKS)
# When markers of several kinds are present, the first in this order wins: a managed
# provider's marks are its own; RKE2 is built on k3s and may carry k3s's marks too.
PRECEDENCE = (EKS, GKE, AKS, RKE2, K3S, KUBEADM)

# Marks each distribution leaves: a text in the version strings (API server, kubelets), label
# or annotation key prefixes, label values of node.kubernetes.io/instance-type, provider ID schemes.
MARKERS = {
    K3S: {"version": "+k3s", "key_prefixes": ("k3s.io/",), "instance_type": "k3s", "provider_scheme": "k3s"},
    RKE2: {"version": "+rke2", "key_prefixes": ("rke2.io/",), "instance_type": "rke2", "provider_scheme": "rke2"},
    EKS: {"version": "-eks-", "key_prefixes": ("eks.amazonaws.com/",)},
    GKE: {"version": "-gke.", "key_prefixes": ("cloud.google.com/gke-",)},
    AKS: {"key_prefixes": ("kubernetes.azure.com/cluster",)},
}
CLOUD_SCHEMES = {"aws": "AWS", "gce": "Google Cloud", "azure": "Azure"}
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

# What each distribution means for this collection: who upgrades it, which roles apply, and
# what the GPU Operator needs there. Sources: NVIDIA's GPU Operator docs (getting-started,
# amazon-eks, google-gke, microsoft-aks; NVIDIA/cloud-native-docs 52dcb7b), RKE2's add-on docs
# (rancher/rke2-docs 9477b7b, docs/add-ons/gpu_operators.md) and the operator's own defaults
# (controllers/object_controls.go: /etc/containerd/config.toml, /run/containerd/containerd.sock).
DISTRIBUTIONS = {
    KUBEADM: {
        "title": "kubeadm",
        "upgrade_with": None,
        "operator": "every part of dra.gpu applies",
    },
    K3S: {
        "title": "k3s",
        "upgrade_with": "k3s's install script at the new version (INSTALL_K3S_VERSION=v1.35.x+k3s1; servers "
                        "first, then agents) or Rancher's system-upgrade-controller",
        "operator": "the gpu_operator role points NVIDIA's container toolkit at k3s's containerd (socket "
                    "/run/k3s/containerd/containerd.sock, config under /var/lib/rancher/k3s/agent/etc/containerd, "
                    "drop-in in its config-v3.toml.d, which k3s imports) so it does not edit a config k3s rewrites",
    },
    RKE2: {
        "title": "RKE2",
        "upgrade_with": "RKE2's install script at the new version (INSTALL_RKE2_VERSION), the "
                        "system-upgrade-controller, or Rancher",
        "operator": "the gpu_operator role points NVIDIA's container toolkit at RKE2's containerd socket "
                    "(/run/k3s/containerd/containerd.sock), as RKE2's documentation does for operator v25.10 and "
                    "later; note that the toolkit's containerd reload restarts RKE2",
    },
    EKS: {
        "title": "Amazon EKS",
        "upgrade_with": "`aws eks update-cluster-version` (or `eksctl upgrade cluster`), one minor at a time, "
                        "then the node groups",
        "operator": "on EKS-optimized accelerated AMIs the GPU driver and container toolkit are preinstalled: set "
                    "gpu_operator_driver_enabled and gpu_operator_toolkit_enabled to false for them (NVIDIA: no "
                    "mix of Amazon Linux 2 and other OSes among the operator's nodes); with a supported OS AMI the "
                    "operator installs both",
    },
    GKE: {
        "title": "Google GKE",
        "upgrade_with": "`gcloud container clusters upgrade` (control plane, then node pools)",
        "operator": "GKE installs the GPU driver unless the node pool was created with gpu-driver-version=disabled "
                    "and the label gke-no-default-nvidia-gpu-device-plugin=true; with Google's driver installer set "
                    "gpu_operator_driver_enabled false and, in gpu_operator_values, hostPaths.driverInstallDir and "
                    "toolkit.installDir to /home/kubernetes/bin/nvidia with cdi.enabled and cdi.default true",
    },
    AKS: {
        "title": "Azure AKS",
        "upgrade_with": "`az aks upgrade` (control plane and node pools)",
        "operator": "AKS node images carry the GPU driver and container toolkit unless the pool was created with "
                    "--skip-gpu-driver-install: set gpu_operator_driver_enabled and gpu_operator_toolkit_enabled "
                    "to false and operator.runtimeClass to nvidia-container-runtime in gpu_operator_values",
    },
    UNKNOWN: {
        "title": "an unrecognised distribution",
        "upgrade_with": "the tool that installed it (dra.gpu.cluster_upgrade drives kubeadm and needs "
                        "kube-system/kubeadm-config)",
        "operator": "the GPU Operator's defaults assume containerd at /etc/containerd/config.toml and "
                    "/run/containerd/containerd.sock; set toolkit.env in gpu_operator_values if yours differ",
    },
}

# NVIDIA's container toolkit settings (toolkit.env of the GPU Operator chart) per distribution
# whose containerd is not where the operator's defaults look.
TOOLKIT_ENV = {
    K3S: [
        {"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"},
        {"name": "CONTAINERD_CONFIG", "value": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"},
        {"name": "RUNTIME_DROP_IN_CONFIG",
         "value": "/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d/99-nvidia.toml"},
    ],
    RKE2: [
        {"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"},
    ],
}


def _marks(node):
    keys = list((node.get("labels") or {}).keys()) + list((node.get("annotations") or {}).keys())
    return keys, (node.get("labels") or {}).get(INSTANCE_TYPE_LABEL), str(node.get("provider_id") or "")


def _evidence_for(kind, server_version, nodes):
    """What marks ``kind`` left: a list of short texts, empty when none."""
    marker, found = MARKERS[kind], []
    if marker.get("version") and marker["version"] in str(server_version or ""):
        found.append("API server version %s" % server_version)
    for node in nodes:
        name = node.get("name")
        keys, instance_type, provider_id = _marks(node)
        if marker.get("version") and marker["version"] in str(node.get("kubelet") or ""):
            found.append("node %s: kubelet %s" % (name, node.get("kubelet")))
        for key in sorted(keys):
            if key.startswith(marker["key_prefixes"]):
                found.append("node %s: %s" % (name, key))
                break
        if marker.get("instance_type") and instance_type == marker["instance_type"]:
            found.append("node %s: %s=%s" % (name, INSTANCE_TYPE_LABEL, instance_type))
        if marker.get("provider_scheme") and provider_id.startswith(marker["provider_scheme"] + "://"):
            found.append("node %s: providerID %s" % (name, provider_id))
    return found


def cloud_of(nodes):
    """The cloud the nodes run on, from their provider IDs ('aws:///us-east-1a/i-0...'), or None."""
    for node in nodes:
        scheme = str(node.get("provider_id") or "").partition("://")[0]
        if scheme in CLOUD_SCHEMES:
            return CLOUD_SCHEMES[scheme]
    return None


def identify(server_version, nodes, kubeadm_config=None):
    """The distribution with its evidence. ``kubeadm_config``: True when kube-system/kubeadm-config
    exists, False when it does not, None when it was not read (then an unmarked cluster is
    reported as unknown, and nothing is refused for it)."""
    evidence = dict((kind, _evidence_for(kind, server_version, nodes)) for kind in MARKERS)
    if kubeadm_config:
        evidence[KUBEADM] = ["kube-system/kubeadm-config exists"]
    found = [kind for kind in PRECEDENCE if evidence.get(kind)]
    distribution = found[0] if found else UNKNOWN
    if distribution == UNKNOWN and kubeadm_config is False:
        chosen = ["no kube-system/kubeadm-config and no k3s, RKE2, EKS, GKE or AKS marks"]
    else:
        chosen = evidence.get(distribution) or ["not read: kube-system/kubeadm-config was not checked"]
    others = ["%s (%s)" % (DISTRIBUTIONS[kind]["title"], evidence[kind][0]) for kind in found[1:]]
    return {
        "distribution": distribution,
        "title": DISTRIBUTIONS[distribution]["title"],
        "managed": distribution in MANAGED,
        "cloud": cloud_of(nodes),
        "evidence": chosen[:5],
        "also_seen": others,
        "kubeadm_checked": kubeadm_config is not None,
    }


def read(kube, server_version, nodes):
    """(identity, kubeadm's ClusterConfiguration or {}): the one read of the distribution that
    dra_readiness, upgrade_plan and gpu_operator_plan share. ``kube`` is a client.Kube, ``nodes``
    node summaries. An identity that may not read kube-system's ConfigMaps (403) is told so in its
    evidence, and nothing is refused for an unmarked cluster, as when kubeadm-config was not read."""
    try:
        kubeadm = kube.kube_system_config("kubeadm-config", "ClusterConfiguration")
    except ApiException as exc:
        if exc.status != 403:
            raise
        return identify(server_version, nodes), {}
    return identify(server_version, nodes, kubeadm_config=bool(kubeadm)), kubeadm


def upgrade_refusal(identity):
    """Why dra.gpu.cluster_upgrade must not run here, as {code, message, fix}, or None for kubeadm."""
    distribution = identity["distribution"]
    if distribution == KUBEADM or (distribution == UNKNOWN and not identity.get("kubeadm_checked")):
        return None
    info = DISTRIBUTIONS[distribution]
    code = "managed_control_plane" if identity["managed"] else "not_kubeadm"
    return {"code": code,
            "message": "this is %s (%s); dra.gpu.cluster_upgrade upgrades kubeadm clusters only" % (
                info["title"], "; ".join(identity["evidence"])),
            "fix": "upgrade it with %s; then run the rest of site.yml (preflight onwards)" % info["upgrade_with"]}


def toolkit_values(distribution):
    """GPU Operator chart values that put the container toolkit on this distribution's containerd,
    or {} where the operator's defaults fit."""
    env = TOOLKIT_ENV.get(distribution)
    return {"toolkit": {"env": [dict(item) for item in env]}} if env else {}


def operator_values(identity, layout, toolkit_enabled, user_values):
    """The user's GPU Operator values over this distribution's toolkit settings: the user's win
    (a toolkit.env of theirs replaces ours whole). A GPUCluster (v26.7 operator-managed layout)
    deploys no toolkit, and a disabled toolkit needs no socket, so both get the user's values as
    they are."""
    if not toolkit_enabled or layout == "gpucluster":
        return user_values or {}
    return deep_merge(toolkit_values(identity["distribution"]), user_values or {})


def operator_note(identity):
    """One sentence for the gpu_operator plan's notes about this distribution, or None for kubeadm
    and for a cluster with no marks whose kubeadm-config was not read (nothing is known to say)."""
    if identity["distribution"] == KUBEADM or (identity["distribution"] == UNKNOWN
                                               and not identity.get("kubeadm_checked")):
        return None
    return "%s: %s." % (identity["title"], DISTRIBUTIONS[identity["distribution"]]["operator"])
