"""Never two GPU managers on one node, and no driver removed under allocated claims (issue 14,
items 4 and 5), against the lab: the simulated device plugin gives a real pod nvidia.com/gpu on
node-a through the real scheduler; the simulated DRA driver's claim is allocated by it too."""


import pytest
from kubernetes import client

from conftest import DRIVER, plugin_daemonset, run_module, run_playbook, scratch_namespace, slices_lister
from waiting import wait_for_object, wait_until_gone

PAUSE = "registry.k8s.io/pause:3.10"
DEVICE_PLUGIN_LABEL = {"app": "nvidia-device-plugin-daemonset"}
PLAN = {"version": "v26.7.0", "dra_mode": "standalone", "check_charts": False}


def offered(node):
    return (node["status"].get("allocatable") or {}).get("nvidia.com/gpu")


@pytest.fixture
def scratch(api, custom):
    core = client.CoreV1Api(api)
    yield from scratch_namespace(core, "it-handover-", wait_gone=True)
    wait_for_object(core.list_node, lambda n: offered(n) is None, "node-a without nvidia.com/gpu", timeout=60,
                    field_selector="metadata.name=node-a")
    wait_until_gone(slices_lister(custom), lambda s: s["spec"]["driver"] == DRIVER, "the driver's slices", timeout=60)


def running(core, ns, name):
    return wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Running",
                           "pod %s Running" % name, timeout=60, namespace=ns, field_selector="metadata.name=" + name)


def device_plugin_on_node_a(core, apps, ns):
    """A device-plugin DaemonSet of its own, pinned to node-a (not the operator's: it ignores
    nvidia.com/gpu.deploy.device-plugin); the simulated kubelet offers node-a's two GPUs."""
    apps.create_namespaced_daemon_set(ns, {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nvidia-device-plugin-daemonset"},
        "spec": {"selector": {"matchLabels": DEVICE_PLUGIN_LABEL}, "template": {
            "metadata": {"labels": DEVICE_PLUGIN_LABEL},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": "node-a"},
                     "containers": [{"name": "plugin", "image": PAUSE}]}}}})
    wait_for_object(core.list_node, lambda n: offered(n) == "2", "node-a offering nvidia.com/gpu: 2", timeout=60,
                    field_selector="metadata.name=node-a")


def test_a_node_whose_pods_hold_device_plugin_gpus_is_not_moved_to_dra(api, scratch):
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    device_plugin_on_node_a(core, apps, scratch)
    core.create_namespaced_pod(scratch, {"metadata": {"name": "llm"}, "spec": {"containers": [
        {"name": "main", "image": PAUSE, "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
    assert running(core, scratch, "llm")["spec"]["nodeName"] == "node-a"

    refused = run_module("dra.gpu.gpu_operator_plan", dict(PLAN, dra_nodes=["node-a"]))
    assert refused.get("failed"), refused
    assert "%s/llm on node-a (1 GPU)" % scratch in refused["msg"] and "gpu_workload_info" in refused["msg"]
    # both ways out, named before anything changes: move the workload, or opt into eviction
    assert "playbooks/migrate_workloads.yml" in refused["msg"], refused["msg"]
    assert "gpu_operator_evict_device_plugin_pods" in refused["msg"] and "PodDisruptionBudgets honoured" in refused["msg"]
    holder = [{"namespace": scratch, "name": "llm", "node": "node-a", "gpus": 1}]
    assert refused["device_plugin_holders"] == holder
    # opted in to eviction, the plan goes on and hands the holder to dra.gpu.device_plugin_drain
    evicting = run_module("dra.gpu.gpu_operator_plan", dict(PLAN, dra_nodes=["node-a"], evict_device_plugin_pods=True))
    assert not evicting.get("failed"), evicting["msg"]
    assert evicting["device_plugin_holders"] == holder
    # the node with no such pod may move
    other = run_module("dra.gpu.gpu_operator_plan", dict(PLAN, dra_nodes=["node-b"]))
    assert not other.get("failed"), other["msg"]
    assert other["dra_nodes"] == ["node-b"]

    core.delete_namespaced_pod("llm", scratch)
    wait_until_gone(core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "llm", "pod llm", timeout=60,
                    namespace=scratch)
    moved = run_module("dra.gpu.gpu_operator_plan", dict(PLAN, dra_nodes=["node-a"]))
    assert not moved.get("failed"), moved["msg"]
    # the device plugin is taken off node-a first, the DRA label comes after
    assert [p["step"] for p in moved["node_patches"] if p["node"] == "node-a"] == ["device-plugin-off", "dra"]


def test_removal_is_refused_while_a_claim_holds_the_drivers_devices(api, custom, scratch, gpu_class):
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    apps.create_namespaced_daemon_set(scratch, plugin_daemonset("kubelet-plugin"))
    wait_for_object(slices_lister(custom), lambda s: s["spec"].get("nodeName") == "node-b",
                    "a ResourceSlice for node-b", timeout=60)
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", scratch, "resourceclaims", {
        "metadata": {"name": "train"}, "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": gpu_class}}]}}})
    core.create_namespaced_pod(scratch, {"metadata": {"name": "trainer"}, "spec": {
        "containers": [{"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}],
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "train"}]}})
    running(core, scratch, "trainer")

    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": "dra.gpu.gpu_operator", "vars": {"gpu_operator_state": "absent"}}]}]
    rc, report, _stderr = run_playbook(play)
    assert rc != 0
    failed = [t["hosts"]["localhost"] for p in report["plays"] for t in p["tasks"]
              if t["hosts"].get("localhost", {}).get("failed")]
    message = failed[-1]["msg"]
    assert "1 ResourceClaim(s) hold devices of gpu.nvidia.com: %s/train" % scratch in message, message
    assert "pods: trainer" in message and "gpu_operator_force_removal" in message
    # forced, the plan goes on; the pod is not touched
    forced = run_module("dra.gpu.gpu_operator_plan", dict(PLAN, state="absent", force_removal=True))
    assert not forced.get("failed"), forced["msg"]
    assert running(core, scratch, "trainer")["metadata"].get("deletionTimestamp") is None


def node_a(core):
    return core.read_node("node-a")


def test_the_drain_evicts_only_gpu_pods_and_the_node_stays_cordoned_until_the_device_plugin_left(api, scratch):
    """dra.gpu.device_plugin_drain against the real API server: a StatefulSet's GPU pod is
    evicted (its replacement, of the same name, is not taken for it), a CPU pod on the node
    stays, and the cordon is lifted only once the node offers no nvidia.com/gpu; a device
    plugin that is not the operator's (it ignores the node label) keeps it cordoned."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    device_plugin_on_node_a(core, apps, scratch)
    apps.create_namespaced_stateful_set(scratch, {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "llm"},
        "spec": {"serviceName": "llm", "replicas": 1, "selector": {"matchLabels": {"app": "llm"}}, "template": {
            "metadata": {"labels": {"app": "llm"}},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                {"name": "main", "image": PAUSE, "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}})
    core.create_namespaced_pod(scratch, {"metadata": {"name": "web"}, "spec": {
        "nodeSelector": {"kubernetes.io/hostname": "node-a"}, "containers": [{"name": "main", "image": PAUSE}]}})
    evicted_uid = running(core, scratch, "llm-0")["metadata"]["uid"]
    web_uid = running(core, scratch, "web")["metadata"]["uid"]
    try:
        preview = run_module("dra.gpu.device_plugin_drain", {"nodes": ["node-a"]}, check_mode=True)
        assert preview["changed"] and preview["cordoned"] == ["node-a"], preview
        assert not node_a(core).spec.unschedulable

        drained = run_module("dra.gpu.device_plugin_drain", {"nodes": ["node-a"], "timeout": 60})
        assert not drained.get("failed"), drained["msg"]
        assert drained["evicted"] == [{"namespace": scratch, "name": "llm-0", "node": "node-a", "gpus": 1}]
        node = node_a(core)
        assert node.spec.unschedulable and node.metadata.annotations["dra.gpu/cordoned-by"] == "dra.gpu.gpu_operator"
        assert core.read_namespaced_pod("web", scratch).metadata.uid == web_uid
        # the StatefulSet's new llm-0 cannot go back to the cordoned node, and no other node offers a GPU
        replacement = wait_for_object(core.list_namespaced_pod, lambda p: p["metadata"]["uid"] != evicted_uid,
                                      "the new llm-0", timeout=60, namespace=scratch,
                                      field_selector="metadata.name=llm-0")
        assert not replacement["spec"].get("nodeName")
        again = run_module("dra.gpu.device_plugin_drain", {"nodes": ["node-a"], "timeout": 60})
        assert not again.get("failed") and not again["changed"], again

        # this device plugin ignores nvidia.com/gpu.deploy.device-plugin=false: the node stays cordoned
        stuck = run_module("dra.gpu.device_plugin_drain", {"state": "released", "nodes": ["node-a"], "timeout": 3})
        assert stuck.get("failed") and stuck["still_offering"] == ["node-a"], stuck
        assert "a device plugin deployed otherwise" in stuck["msg"] and "The DRA label was not set" in stuck["msg"]
        assert node_a(core).spec.unschedulable

        apps.delete_namespaced_daemon_set("nvidia-device-plugin-daemonset", scratch)
        released = run_module("dra.gpu.device_plugin_drain", {"state": "released", "nodes": ["node-a"],
                                                              "timeout": 60})
        assert not released.get("failed"), released["msg"]
        assert released["changed"] and released["released"] == ["node-a"]
        node = node_a(core)
        assert not node.spec.unschedulable and "dra.gpu/cordoned-by" not in (node.metadata.annotations or {})
        assert offered(core.read_node("node-a").to_dict()) is None
    finally:
        if node_a(core).spec.unschedulable:
            core.patch_node("node-a", {"spec": {"unschedulable": None},
                                       "metadata": {"annotations": {"dra.gpu/cordoned-by": None}}})
