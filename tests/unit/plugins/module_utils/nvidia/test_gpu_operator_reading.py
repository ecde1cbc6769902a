from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_reading as reading
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog

PARAMS = {"version": "v26.3.1", "dra_enabled": True, "dra_mode": "auto", "toolkit_enabled": True, "values": {}}


def node_item(name, labels=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {}, "status": {}}


class Answer(object):
    def __init__(self, body):
        self.body = body

    def to_dict(self):
        return self.body


class FakeKube(object):
    """Just the reads gpu_operator_reading makes: nodes (by label), pods (by node), DaemonSets
    (by name; an absent one answers 404), claims."""

    def __init__(self, nodes=(), pods=(), daemonsets=None, claims=()):
        self.node_items, self.pod_items, self.claim_items = list(nodes), list(pods), list(claims)
        self.daemonsets = daemonsets or {}
        self.core, self.apps, self.pod_reads = self, self, []

    def list_node(self):
        pass

    def kube_system_config(self, name, key):
        return {}  # no kubeadm-config: the distribution comes from the nodes' marks

    def list_pod_for_all_namespaces(self):
        pass

    def list_all(self, lister, label_selector=None, field_selector=None):
        if lister == self.list_node:
            key, _sep, value = (label_selector or "").partition("=")
            return [n for n in self.node_items if not key or n["metadata"]["labels"].get(key) == value], "1"
        node = field_selector.split("=", 1)[1]
        self.pod_reads.append(node)
        return [p for p in self.pod_items if p["spec"]["nodeName"] == node], "1"

    def read_namespaced_daemon_set(self, name, namespace):
        if (namespace, name) not in self.daemonsets:
            raise client.ApiException(status=404)
        return Answer(self.daemonsets[(namespace, name)])

    def claims(self):
        return self.claim_items


def test_cluster_nodes_tells_gpu_nodes_from_the_others():
    kube = FakeKube([node_item("cp"), node_item("gpu-b", {"nvidia.com/gpu.present": "true"}),
                     node_item("gpu-a", {"nvidia.com/gpu.present": "true"})])
    read = reading.cluster_nodes(kube, "nvidia.com/gpu.present=true")
    assert read["gpu_nodes"] == ["gpu-a", "gpu-b"]
    assert read["gpu_node_labels"] == {"gpu-a": {"nvidia.com/gpu.present": "true"},
                                       "gpu-b": {"nvidia.com/gpu.present": "true"}}
    assert [n["name"] for n in read["nodes"]] == ["cp", "gpu-b", "gpu-a"]
    assert [s["gpu"] for s in read["summaries"]] == [False, True, True]


def daemonset(release, version):
    return {"metadata": {"annotations": {"meta.helm.sh/release-name": release},
                         "labels": {"app.kubernetes.io/version": version}}}


def test_installed_dra_driver_finds_either_chart_name_of_this_release_only():
    running = daemonset("nvidia-dra-driver-gpu", "25.12.0")
    old = FakeKube(daemonsets={("dra", "nvidia-dra-driver-gpu-kubelet-plugin"): running})
    assert reading.installed_dra_driver(old, "dra", "nvidia-dra-driver-gpu") == \
        {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "version": "25.12.0"}
    # Another release's DaemonSet of that name is not this release's driver.
    assert reading.installed_dra_driver(old, "dra", "mine") is None
    new = FakeKube(daemonsets={("dra", "dra-driver-nvidia-gpu-kubelet-plugin"): daemonset("mine", "0.4.1")})
    assert reading.installed_dra_driver(new, "dra", "mine")["name"] == "dra-driver-nvidia-gpu-kubelet-plugin"
    assert reading.installed_dra_driver(FakeKube(), "dra", "mine") is None


def test_installed_dra_driver_passes_other_api_errors_on():
    class Forbidden(FakeKube):
        def read_namespaced_daemon_set(self, name, namespace):
            raise client.ApiException(status=403)

    with pytest.raises(client.ApiException):
        reading.installed_dra_driver(Forbidden(), "dra", "mine")


def pod(name, node, gpus):
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {"metadata": {"namespace": "ml", "name": name}, "status": {"phase": "Running"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}]}}


def test_device_plugin_holders_reads_only_the_nodes_going_to_dra():
    kube = FakeKube(pods=[pod("train", "gpu-b", 2), pod("web", "gpu-b", 0), pod("other", "gpu-a", 1)])
    holder = {"namespace": "ml", "name": "train", "node": "gpu-b", "gpus": 2}
    assert reading.device_plugin_holders(kube, ["gpu-b"]) == [holder]
    assert kube.pod_reads == ["gpu-b"]


def test_driver_claims_names_the_claims_holding_nvidias_devices():
    held = {"metadata": {"namespace": "ml", "name": "c1"}, "status": {
        "allocation": {"devices": {"results": [{"driver": "gpu.nvidia.com", "pool": "gpu-a", "device": "gpu-0"}]}},
        "reservedFor": [{"resource": "pods", "name": "train"}]}}
    other = {"metadata": {"namespace": "ml", "name": "c2"}, "status": {
        "allocation": {"devices": {"results": [{"driver": "example.com", "pool": "p", "device": "d"}]}}}}
    claims, refusal = reading.driver_claims(FakeKube(claims=[held, other]))
    assert claims == [{"namespace": "ml", "name": "c1", "devices": ["gpu-a/gpu-0"], "pods": ["train"]}]
    assert "1 ResourceClaim(s) hold devices of gpu.nvidia.com: ml/c1" in refusal
    assert reading.driver_claims(FakeKube(claims=[other])) == ([], None)


def test_distribution_puts_the_toolkit_on_k3s_containerd_unless_the_user_says_otherwise():
    summaries = [{"name": "n", "labels": {}, "annotations": {}, "provider_id": None}]
    identity, values = reading.distribution(FakeKube(), "v1.35.4+k3s1", summaries, PARAMS)
    assert identity["distribution"] == "k3s"
    assert values == cluster_identity.toolkit_values("k3s") and values["toolkit"]["env"]
    mine = {"toolkit": {"env": [{"name": "CONTAINERD_SOCKET", "value": "/run/mine.sock"}]}}
    assert reading.distribution(FakeKube(), "v1.35.4+k3s1", summaries, dict(PARAMS, values=mine))[1] == mine
    # A GPUCluster deploys no toolkit: the user's values as they are.
    gpucluster = dict(PARAMS, version="v26.7.0", dra_mode="gpucluster")
    assert reading.distribution(FakeKube(), "v1.35.4+k3s1", summaries, gpucluster)[1] == {}
    with pytest.raises(catalog.PlanError):
        reading.distribution(FakeKube(), "v1.35.4", summaries, dict(PARAMS, version="v26.3.1", dra_mode="gpucluster"))
