from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity as ci
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException


def node(name="n1", kubelet="v1.35.4", labels=None, annotations=None, provider_id=None):
    return {"name": name, "kubelet": kubelet, "labels": labels or {}, "annotations": annotations or {},
            "provider_id": provider_id}


# What each distribution's nodes and API server report (version strings as they print them).
IDENTITIES = [
    ("kubeadm", "v1.35.4", [node(provider_id="aws:///us-east-1a/i-0abc")], True, "kubeadm", "AWS"),
    ("k3s by kubelet", "v1.35.4", [node(kubelet="v1.35.4+k3s1")], False, "k3s", None),
    ("k3s by annotation", "v1.35.4", [node(annotations={"k3s.io/node-args": "[]"})], False, "k3s", None),
    ("k3s by provider", "v1.35.4", [node(provider_id="k3s://n1")], False, "k3s", None),
    ("rke2 over k3s marks", "v1.35.4+rke2r1",
     [node(kubelet="v1.35.4+rke2r1", annotations={"rke2.io/node-args": "[]", "k3s.io/hostname": "n1"})],
     False, "rke2", None),
    ("rke2 by instance type", "v1.35.4", [node(labels={"node.kubernetes.io/instance-type": "rke2"})], False, "rke2",
     None),
    ("eks", "v1.35.4-eks-3cf4b1e", [node(kubelet="v1.35.4-eks-1a2b3c4", provider_id="aws:///us-west-2a/i-0f",
                                         labels={"eks.amazonaws.com/nodegroup": "gpu"})], False, "eks", "AWS"),
    ("gke", "v1.35.4-gke.1200", [node(provider_id="gce://proj/us-central1-a/gke-gpu-1",
                                      labels={"cloud.google.com/gke-nodepool": "gpu"})], False, "gke", "Google Cloud"),
    ("aks", "v1.35.4", [node(provider_id="azure:///subscriptions/x/resourceGroups/y",
                             labels={"kubernetes.azure.com/cluster": "MC_x"})], False, "aks", "Azure"),
    ("kubeadm on a cloud is not managed", "v1.35.4", [node(provider_id="gce://proj/zone/vm-1")], True, "kubeadm",
     "Google Cloud"),
    ("nothing known", "v1.35.4", [node()], False, "unknown", None),
]


@pytest.mark.parametrize("case,server,nodes,kubeadm,distribution,cloud", IDENTITIES, ids=[i[0] for i in IDENTITIES])
def test_each_distribution_is_recognised_with_its_evidence(case, server, nodes, kubeadm, distribution, cloud):
    identity = ci.identify(server, nodes, kubeadm_config=kubeadm)
    assert identity["distribution"] == distribution, case
    assert identity["managed"] == (distribution in ("eks", "gke", "aks"))
    assert identity["cloud"] == cloud
    assert identity["evidence"]


def test_marks_of_several_kinds_are_all_reported():
    identity = ci.identify("v1.35.4-eks-1", [node(annotations={"k3s.io/node-args": "[]"})], kubeadm_config=True)
    assert identity["distribution"] == "eks"
    assert [seen.split(" (")[0] for seen in identity["also_seen"]] == ["k3s", "kubeadm"]


@pytest.mark.parametrize("server,nodes,kubeadm,code,tool", [
    ("v1.35.4+k3s1", [node(kubelet="v1.35.4+k3s1")], False, "not_kubeadm", "INSTALL_K3S_VERSION"),
    ("v1.35.4+rke2r1", [node(kubelet="v1.35.4+rke2r1")], False, "not_kubeadm", "INSTALL_RKE2_VERSION"),
    ("v1.35.4-eks-1", [node()], False, "managed_control_plane", "aws eks update-cluster-version"),
    ("v1.35.4-gke.1", [node()], False, "managed_control_plane", "gcloud container clusters upgrade"),
    ("v1.35.4", [node(labels={"kubernetes.azure.com/cluster": "x"})], False, "managed_control_plane", "az aks upgrade"),
    ("v1.35.4", [node()], False, "not_kubeadm", "kube-system/kubeadm-config"),
])
def test_the_upgrade_is_refused_with_the_tool_that_upgrades_it(server, nodes, kubeadm, code, tool):
    refusal = ci.upgrade_refusal(ci.identify(server, nodes, kubeadm_config=kubeadm))
    assert refusal["code"] == code and tool in refusal["fix"]
    assert "upgrades kubeadm clusters only" in refusal["message"]


def test_kubeadm_and_an_unread_cluster_are_not_refused():
    assert ci.upgrade_refusal(ci.identify("v1.35.4", [node()], kubeadm_config=True)) is None
    assert ci.upgrade_refusal(ci.identify("v1.35.4", [node()])) is None


@pytest.mark.parametrize("distribution,socket", [
    ("k3s", "/run/k3s/containerd/containerd.sock"), ("rke2", "/run/k3s/containerd/containerd.sock")])
def test_k3s_and_rke2_point_the_toolkit_at_their_containerd(distribution, socket):
    values = ci.operator_values({"distribution": distribution}, "standalone", True, {"driver": {"enabled": False}})
    env = dict((e["name"], e["value"]) for e in values["toolkit"]["env"])
    assert env["CONTAINERD_SOCKET"] == socket and values["driver"] == {"enabled": False}
    if distribution == "k3s":
        assert env["RUNTIME_DROP_IN_CONFIG"].startswith("/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d/")


def test_the_users_toolkit_env_wins_and_kubeadm_gets_nothing_added():
    mine = {"toolkit": {"env": [{"name": "CONTAINERD_SOCKET", "value": "/custom.sock"}]}}
    assert ci.operator_values({"distribution": "k3s"}, "standalone", True, mine) == mine
    assert ci.operator_values({"distribution": "kubeadm"}, "standalone", True, {}) == {}


@pytest.mark.parametrize("layout,toolkit_enabled", [("gpucluster", True), ("standalone", False)])
def test_no_toolkit_settings_where_no_toolkit_runs(layout, toolkit_enabled):
    assert ci.operator_values({"distribution": "k3s"}, layout, toolkit_enabled, {}) == {}


def test_every_distribution_has_what_the_checks_print():
    for distribution, info in ci.DISTRIBUTIONS.items():
        assert info["title"] and info["operator"], distribution
        assert (info["upgrade_with"] is None) == (distribution == ci.KUBEADM)


def test_the_operator_plan_notes_only_what_is_known():
    assert ci.operator_note(ci.identify("v1.35.4", [node()])) is None  # kubeadm-config not read: no guess
    assert ci.operator_note(ci.identify("v1.35.4", [node()], kubeadm_config=True)) is None
    assert ci.operator_note(ci.identify("v1.35.4", [node()], kubeadm_config=False)).startswith("an unrecognised")
    assert ci.operator_note(ci.identify("v1.35.4+k3s1", [node()])).startswith("k3s: ")


class ConfigMaps(object):
    """kube_system_config as client.Kube answers it: the parsed document, {} when absent, or a refusal."""

    def __init__(self, kubeadm=None, status=None):
        self.kubeadm, self.status = kubeadm, status

    def kube_system_config(self, name, key):
        assert (name, key) == ("kubeadm-config", "ClusterConfiguration")
        if self.status:
            raise ApiException(status=self.status)
        return self.kubeadm or {}


UNMARKED = [{"name": "n1", "kubelet": "v1.35.4", "labels": {}, "annotations": {}, "provider_id": None}]


def test_read_finds_kubeadm_by_its_configmap_and_returns_the_document():
    document = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration"}
    identity, kubeadm = ci.read(ConfigMaps(document), "v1.35.4", UNMARKED)
    assert identity["distribution"] == "kubeadm" and kubeadm == document


def test_read_without_kubeadm_config_calls_an_unmarked_cluster_unknown_and_refuses_its_upgrade():
    identity, kubeadm = ci.read(ConfigMaps(), "v1.35.4", UNMARKED)
    assert (identity["distribution"], identity["kubeadm_checked"], kubeadm) == ("unknown", True, {})
    assert ci.upgrade_refusal(identity)["code"] == "not_kubeadm"


def test_read_that_may_not_see_kube_system_refuses_nothing_for_an_unmarked_cluster():
    identity, _kubeadm = ci.read(ConfigMaps(status=403), "v1.35.4", UNMARKED)
    assert (identity["distribution"], identity["kubeadm_checked"]) == ("unknown", False)
    assert ci.upgrade_refusal(identity) is None and ci.operator_note(identity) is None


def test_read_passes_other_api_errors_on():
    with pytest.raises(ApiException):
        ci.read(ConfigMaps(status=500), "v1.35.4", UNMARKED)
