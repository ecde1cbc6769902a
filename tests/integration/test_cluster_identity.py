"""Which distribution runs the cluster, told from what the API shows (issue 17, item 3).

The lab stands in for a kubeadm cluster (its simulator writes kube-system/kubeadm-config as
`kubeadm init` does). Each other identity is given to it the way that distribution shows
itself to the API: a node registered by its kubelet (version suffix, annotations, instance-type
label, provider ID, node-pool labels), with kube-system/kubeadm-config absent. The API server's
own version string stays the lab's (v1.35.4): the verdicts here rest on the nodes' marks alone.
"""

import os

import pytest
from kubernetes.client.exceptions import ApiException

from conftest import run_module, run_playbook, task_results
from waiting import wait_for_object, wait_until_gone

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UPGRADE = os.path.join(ROOT, "playbooks", "upgrade.yml")
NODE = "identity-w1"
SOCKET = "/run/k3s/containerd/containerd.sock"

# How each distribution's kubelet registers a node (values as their kubelets and cloud
# controllers write them; the names and IDs are made up).
IDENTITIES = {
    "k3s": {"kubelet": "v1.35.4+k3s1", "provider_id": "k3s://" + NODE,
            "labels": {"node.kubernetes.io/instance-type": "k3s"},
            "annotations": {"k3s.io/node-args": '["agent"]', "k3s.io/hostname": NODE}},
    "rke2": {"kubelet": "v1.35.4+rke2r1", "provider_id": "rke2://" + NODE,
             "labels": {"node.kubernetes.io/instance-type": "rke2"},
             "annotations": {"rke2.io/node-args": '["agent"]', "rke2.io/hostname": NODE}},
    "eks": {"kubelet": "v1.35.4-eks-3cf4b1e", "provider_id": "aws:///us-west-2a/i-0a1b2c3d4e5f60718",
            "labels": {"eks.amazonaws.com/nodegroup": "gpu", "eks.amazonaws.com/capacityType": "ON_DEMAND"}},
    "gke": {"kubelet": "v1.35.4-gke.1200", "provider_id": "gce://lab-project/us-central1-a/gke-lab-gpu-pool-1",
            "labels": {"cloud.google.com/gke-nodepool": "gpu-pool", "cloud.google.com/gke-accelerator": "nvidia-l4"}},
    "aks": {"kubelet": "v1.35.4",
            "labels": {"kubernetes.azure.com/cluster": "MC_lab_lab_westeurope", "kubernetes.azure.com/agentpool": "gpu"},
            "provider_id": "azure:///subscriptions/0000/resourceGroups/mc_lab/providers/Microsoft.Compute/"
                           "virtualMachineScaleSets/aks-gpu-1/virtualMachines/0"},
}
# The tool each refusal and caution must name.
UPGRADE_TOOL = {"k3s": "INSTALL_K3S_VERSION", "rke2": "INSTALL_RKE2_VERSION", "eks": "aws eks update-cluster-version",
                "gke": "gcloud container clusters upgrade", "aks": "az aks upgrade"}


@pytest.fixture
def without_kubeadm_config(core):
    """kube-system/kubeadm-config removed for the test and put back afterwards."""
    saved = core.read_namespaced_config_map("kubeadm-config", "kube-system")
    core.delete_namespaced_config_map("kubeadm-config", "kube-system")
    yield
    try:
        core.create_namespaced_config_map("kube-system", {"metadata": {"name": "kubeadm-config"}, "data": saved.data})
    except ApiException as exc:
        if exc.status != 409:
            raise


def register(core, identity):
    """A node as that distribution's kubelet registers it: metadata, then status."""
    body = {"metadata": {"name": NODE, "labels": dict(identity["labels"], **{"kubernetes.io/hostname": NODE}),
                         "annotations": identity.get("annotations") or {}},
            "spec": {"providerID": identity["provider_id"]}}
    core.create_node(body)
    core.patch_node_status(NODE, {"status": {"nodeInfo": {
        "kubeletVersion": identity["kubelet"], "containerRuntimeVersion": "containerd://2.1.5",
        "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64", "osImage": "",
        "kernelVersion": "", "machineID": "", "systemUUID": "", "bootID": ""}}})
    wait_for_object(core.list_node, lambda n: n["metadata"]["name"] == NODE
                    and (n.get("status") or {}).get("nodeInfo", {}).get("kubeletVersion") == identity["kubelet"],
                    "node %s to report kubelet %s" % (NODE, identity["kubelet"]), timeout=30)


@pytest.fixture
def cluster_as(core, without_kubeadm_config):
    """Make the lab show one distribution's identity; removed again afterwards."""
    def make(kind):
        register(core, IDENTITIES[kind])
    yield make
    try:
        core.delete_node(NODE)
    except ApiException as exc:
        if exc.status != 404:
            raise
    wait_until_gone(core.list_node, lambda n: n["metadata"]["name"] == NODE, "node " + NODE, timeout=30)


def distribution_check(result):
    return [c for c in result["checks"] if c["name"] == "distribution"][0]


def test_the_lab_is_recognised_as_kubeadm():
    result = run_module("dra.gpu.dra_readiness", {})
    assert result["cluster"]["distribution"] == "kubeadm", result.get("msg")
    check = distribution_check(result)
    assert check["status"] == "pass" and "kube-system/kubeadm-config exists" in check["message"]


@pytest.mark.parametrize("kind", sorted(IDENTITIES))
def test_preflight_names_the_distribution_and_what_to_use_instead(cluster_as, kind):
    cluster_as(kind)
    result = run_module("dra.gpu.dra_readiness", {})
    assert result["cluster"]["distribution"] == kind, result.get("msg")
    assert result["cluster"]["managed"] == (kind in ("eks", "gke", "aks"))
    check = distribution_check(result)
    assert check["status"] == "warn"
    assert "node %s" % NODE in check["message"]
    assert UPGRADE_TOOL[kind] in check["fix"] and "skip dra.gpu.cluster_upgrade" in check["fix"]


def test_a_cluster_without_kubeadm_config_or_marks_is_unknown(without_kubeadm_config):
    result = run_module("dra.gpu.dra_readiness", {})
    assert result["cluster"]["distribution"] == "unknown"
    assert distribution_check(result)["status"] == "warn"


def test_the_preflight_role_prints_the_verdict(cluster_as):
    cluster_as("rke2")
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": "dra.gpu.preflight", "preflight_fail_on_blockers": False}]}]
    rc, report, stderr = run_playbook(play)
    assert rc == 0, stderr
    lines = [item["msg"] for name, r in task_results(report) if name.endswith(" : Report each check")
             for item in r["results"]]
    verdict = [line for line in lines if " distribution: " in line]
    assert len(verdict) == 1 and verdict[0].startswith("WARN distribution: RKE2 ("), lines
    assert SOCKET in verdict[0]


def lab_nodes(core):
    """What an upgrade would change on the lab's nodes: kubelet, cordon, labels, annotations."""
    return dict((n.metadata.name, (n.status.node_info.kubelet_version, bool(n.spec.unschedulable),
                                   n.metadata.labels, n.metadata.annotations))
                for n in core.list_node().items if n.metadata.name != NODE)


@pytest.mark.parametrize("kind", ["k3s", "eks"])
def test_cluster_upgrade_refuses_before_any_change_naming_the_tool(core, cluster_as, upgrade_inventory, kind):
    cluster_as(kind)
    before = lab_nodes(core)
    rc, report, _stderr = run_playbook(UPGRADE, upgrade_inventory, [
        "-e", "cluster_upgrade_target=1.36", "-e", "cluster_upgrade_check_cgroups=false",
        "-e", '{"cluster_upgrade_available_versions": ["1.35.4", "1.36.3"]}'])
    assert rc != 0
    results = task_results(report) + task_results(report, "node-b")
    failed = [(name, r) for name, r in results if r.get("failed")]
    assert [name.split(" : ")[-1] for name, _r in failed] == ["Stop when kubeadm does not run this cluster"]
    message = failed[0][1]["msg"]
    assert UPGRADE_TOOL[kind] in message and "Nothing was changed" in message
    assert "upgrades kubeadm clusters only" in message
    assert not any(r.get("changed") for _name, r in results)
    # Stopped before the hosts' package repositories were read.
    ran = [name.split(" : ")[-1] for name, r in results if not r.get("skipped")]
    assert "Sketch the path (hop minors only)" in ran and not any(name.startswith("Read the versions") for name in ran)
    assert lab_nodes(core) == before


def test_a_k3s_cluster_already_at_the_target_passes_the_upgrade_step(cluster_as, upgrade_inventory):
    """site.yml starts with upgrade.yml: at the target there is nothing to upgrade, so it goes on."""
    cluster_as("k3s")
    rc, report, stderr = run_playbook(UPGRADE, upgrade_inventory, [
        "-e", "cluster_upgrade_target=1.35", "-e", "cluster_upgrade_check_cgroups=false"])
    assert rc == 0, stderr
    results = task_results(report) + task_results(report, "node-b")
    assert not any(r.get("changed") or r.get("failed") for _name, r in results)


@pytest.mark.parametrize("kind,env", [
    ("k3s", {"CONTAINERD_SOCKET": SOCKET,
             "CONTAINERD_CONFIG": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
             "RUNTIME_DROP_IN_CONFIG": "/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.d/99-nvidia.toml"}),
    ("rke2", {"CONTAINERD_SOCKET": SOCKET}),
])
def test_the_operator_plan_points_the_toolkit_at_k3s_and_rke2_containerd(cluster_as, kind, env):
    cluster_as(kind)
    plan = run_module("dra.gpu.gpu_operator_plan", {"version": "v26.3.1", "check_charts": False})
    assert not plan.get("failed"), plan.get("msg")
    operator = [r for r in plan["releases"] if r["chart"] == "gpu-operator"][0]
    assert dict((e["name"], e["value"]) for e in operator["values"]["toolkit"]["env"]) == env
    assert plan["cluster"]["distribution"] == kind
    assert any(note.startswith(plan["cluster"]["title"] + ": ") for note in plan["notes"])


def test_the_operator_plan_leaves_the_toolkit_defaults_on_kubeadm():
    # The plan reads kube-system/kubeadm-config as preflight and the upgrade plan do (cluster_identity.read).
    plan = run_module("dra.gpu.gpu_operator_plan", {"version": "v26.3.1", "check_charts": False})
    operator = [r for r in plan["releases"] if r["chart"] == "gpu-operator"][0]
    assert "env" not in operator["values"].get("toolkit", {})
    assert plan["cluster"]["distribution"] == "kubeadm"
    assert not any(note.startswith(("kubeadm", "an unrecognised")) for note in plan["notes"]), plan["notes"]


def test_the_operator_plan_calls_a_cluster_without_kubeadm_config_or_marks_unrecognised(without_kubeadm_config):
    plan = run_module("dra.gpu.gpu_operator_plan", {"version": "v26.3.1", "check_charts": False})
    assert plan["cluster"]["distribution"] == "unknown"
    assert any(note.startswith("an unrecognised distribution") for note in plan["notes"]), plan["notes"]


def test_the_users_toolkit_env_wins_on_k3s(cluster_as):
    cluster_as("k3s")
    mine = [{"name": "CONTAINERD_SOCKET", "value": "/run/custom/containerd.sock"}]
    plan = run_module("dra.gpu.gpu_operator_plan", {"version": "v26.3.1", "check_charts": False,
                                                    "values": {"toolkit": {"env": mine}}})
    operator = [r for r in plan["releases"] if r["chart"] == "gpu-operator"][0]
    assert operator["values"]["toolkit"]["env"] == mine
