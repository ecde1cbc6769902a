"""The lab itself: a real control plane whose real scheduler allocates DRA claims
against the simulated NVIDIA driver. The lab runs in LAB_DRIVER_MODE=plugin here."""

import functools
import json
import os
import subprocess
import sys

import pytest

from conftest import EXPECTED, plugin_daemonset as _plugin_daemonset
from waiting import wait_for_object, wait_until_gone

DRIVER = "gpu.nvidia.com"
CD_DRIVER = "compute-domain.nvidia.com"
# What NVIDIA's driver publishes as memory: NVML's byte total (typical figures), not 24Gi.
MEMORY = {"NVIDIA A10": "23028Mi", "NVIDIA L4": "23034Mi"}
# v0.4's ResourceSlice controller: generateName "<index, 5 hex digits>-<driver>-<node>-".
SLICE_NAME = "00000-%s-%s-"
# Exactly the attributes a v0.4.1 full GPU carries here (no numaNode, index or minor).
GPU_ATTRIBUTES = {"type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
                  "cudaDriverVersion", "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot"}


def _slices(custom):
    return functools.partial(custom.list_cluster_custom_object, "resource.k8s.io", "v1", "resourceslices")


def _node_slices(custom, node, driver=DRIVER):
    return [s for s in custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices")["items"]
            if s["spec"].get("nodeName") == node and s["spec"]["driver"] == driver]


def test_server_reports_its_true_version(api):
    expected = "v" + os.environ.get("LAB_K8S_VERSION", "1.35.4")
    out = subprocess.run(["kubectl", "version", "-o", "json"], capture_output=True, text=True, check=True).stdout
    versions = json.loads(out)
    assert versions["serverVersion"]["gitVersion"] == expected
    assert versions["clientVersion"]["gitVersion"] == expected


def test_dra_api_resources_are_served():
    out = subprocess.run(["kubectl", "api-resources", "--api-group=resource.k8s.io", "-o", "name"],
                         capture_output=True, text=True, check=True).stdout.split()
    for resource in ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"):
        assert resource + ".resource.k8s.io" in out


def test_simulated_gpu_nodes_are_ready(core):
    nodes = {n.metadata.name: n for n in core.list_node().items}
    for name, (product, count) in EXPECTED.items():
        node = nodes[name]
        ready = [c for c in node.status.conditions if c.type == "Ready"][0]
        assert ready.status == "True"
        assert node.metadata.labels["nvidia.com/gpu.product"] == product.replace(" ", "-")
        assert node.metadata.labels["nvidia.com/gpu.count"] == str(count)


def test_plugin_mode_publishes_only_where_a_plugin_pod_runs(api, custom, namespace):
    """No slices before the kubelet plugin; slices on exactly the plugin's nodes; gone after."""
    from kubernetes import client
    apps = client.AppsV1Api(api)
    # No kubelet plugin runs now (plugin_everywhere ends with its module, slices included);
    # one removed a moment before may still have its slices for a while.
    wait_until_gone(_slices(custom), lambda s: s["spec"]["driver"] == "gpu.nvidia.com", "the driver's slices",
                    timeout=60)
    apps.create_namespaced_daemon_set(namespace, _plugin_daemonset(
        "plugin-on-a", {"kubernetes.io/hostname": "node-a"}))
    wait_for_object(_slices(custom), lambda s: s["spec"].get("nodeName") == "node-a",
                    "a ResourceSlice for node-a", timeout=60)
    assert _node_slices(custom, "node-b") == [], "node-b has no plugin pod and must publish nothing"
    apps.delete_namespaced_daemon_set("plugin-on-a", namespace, propagation_policy="Foreground")
    wait_until_gone(_slices(custom), lambda s: s["spec"].get("nodeName") == "node-a",
                    "node-a's ResourceSlices", timeout=60)


def test_a_chart_rendered_plugin_runs_both_drivers_under_any_name(api, custom, namespace):
    """As NVIDIA's chart renders it with nameOverride: DaemonSet <name>-kubelet-plugin, pods
    labelled <name>-component=kubelet-plugin, a gpus and a compute-domains container (compute
    domains are on by default). The node then publishes its GPUs and, in a pool of their own,
    compute-domain.nvidia.com's channel-0 and daemon-0."""
    from kubernetes import client
    apps = client.AppsV1Api(api)
    label = {"gpus-on-a-component": "kubelet-plugin"}
    body = _plugin_daemonset("gpus-on-a-kubelet-plugin", {"kubernetes.io/hostname": "node-a"})
    body["spec"]["selector"]["matchLabels"] = label
    template = body["spec"]["template"]
    template["metadata"]["labels"] = dict(label, **{"app.kubernetes.io/name": "gpus-on-a"})
    template["spec"]["containers"].append({"name": "compute-domains", "image": "registry.k8s.io/pause:3.10"})
    wait_until_gone(_slices(custom), lambda s: s["spec"].get("nodeName") == "node-a", "node-a's slices", timeout=60)
    apps.create_namespaced_daemon_set(namespace, body)
    channel = wait_for_object(_slices(custom), lambda s: s["spec"]["driver"] == CD_DRIVER,
                              "node-a's compute-domain slice", timeout=60)
    assert channel["spec"]["nodeName"] == "node-a"
    assert channel["metadata"]["name"].startswith(SLICE_NAME % (CD_DRIVER, "node-a"))
    assert channel["spec"]["pool"] == {"name": "node-a", "generation": 1, "resourceSliceCount": 1}
    assert sorted(channel["spec"]["devices"], key=lambda d: d["name"]) == [
        {"name": "channel-0", "attributes": {"type": {"string": "channel"}, "id": {"int": 0}}},
        {"name": "daemon-0", "attributes": {"type": {"string": "daemon"}, "id": {"int": 0}}}]
    wait_for_object(_slices(custom), lambda s: s["spec"]["driver"] == DRIVER and s["spec"].get("nodeName") == "node-a",
                    "node-a's GPU slice", timeout=60)
    assert _node_slices(custom, "node-b") == [] and _node_slices(custom, "node-b", CD_DRIVER) == []
    apps.delete_namespaced_daemon_set("gpus-on-a-kubelet-plugin", namespace, propagation_policy="Foreground")
    wait_until_gone(_slices(custom), lambda s: s["spec"].get("nodeName") == "node-a",
                    "node-a's slices of both drivers", timeout=60)


def test_the_v26_7_operator_layout_publishes_both_drivers(core, custom, tmp_path):
    """The stand-in gpu-operator v26.7.0 with a GPUCluster renders what NVIDIA's operator
    deploys (DaemonSet nvidia-dra-driver-kubelet-plugin, pods app=nvidia-dra-driver-kubelet-plugin,
    containers gpus and compute-domains): the simulated driver answers to it on every GPU node."""
    charts = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "charts",
                          "chart_repo.py")
    subprocess.run([sys.executable, charts, "build", str(tmp_path)], check=True, capture_output=True)
    namespace = "it-gpucluster"
    install = ["helm", "install", "gpu-operator", str(tmp_path / "gpu-operator-v26.7.0.tgz"), "-n", namespace,
               "--create-namespace", "--set", "clusterPolicy.deployCR=false", "--set", "gpuCluster.deployCR=true",
               "--set", "driver.enabled=false", "--wait", "--timeout", "90s"]
    wait_until_gone(_slices(custom), lambda s: True, "every ResourceSlice", timeout=60)
    try:
        subprocess.run(install, check=True, capture_output=True)
        for node in ("node-a", "node-b"):
            for driver in (DRIVER, CD_DRIVER):
                wait_for_object(_slices(custom), lambda s, n=node, d=driver: s["spec"].get("nodeName") == n
                                and s["spec"]["driver"] == d, "%s's %s slice" % (node, driver), timeout=60)
        pods = core.list_namespaced_pod(namespace, label_selector="app=nvidia-dra-driver-kubelet-plugin").items
        assert sorted(p.spec.node_name for p in pods) == ["node-a", "node-b"]
    finally:
        subprocess.run(["helm", "uninstall", "gpu-operator", "-n", namespace, "--wait"], check=False, capture_output=True)
        core.delete_namespace(namespace)
    wait_until_gone(_slices(custom), lambda s: True, "the slices of both drivers", timeout=60)


def test_slices_look_like_nvidias_driver(custom, plugin_everywhere):
    seen_uuids = set()
    for node, (product, count) in EXPECTED.items():
        slices = _node_slices(custom, node)
        assert len(slices) == 1
        assert slices[0]["metadata"]["name"].startswith(SLICE_NAME % (DRIVER, node))
        spec = slices[0]["spec"]
        assert spec["pool"]["name"] == node
        assert spec["pool"]["resourceSliceCount"] == 1 and spec["pool"]["generation"] >= 1
        # the driver's devices come in no fixed order
        assert sorted(d["name"] for d in spec["devices"]) == ["gpu-%d" % i for i in range(count)]
        for device in spec["devices"]:
            attrs = device["attributes"]
            assert set(attrs) == GPU_ATTRIBUTES, device["name"]
            assert attrs["type"] == {"string": "gpu"}
            assert attrs["productName"] == {"string": product}
            assert attrs["uuid"]["string"].startswith("GPU-")
            assert set(attrs["cudaComputeCapability"]) == {"version"}
            assert set(attrs["driverVersion"]) == {"version"}
            assert set(attrs["resource.kubernetes.io/pciBusID"]) == {"string"}
            assert device["capacity"] == {"memory": {"value": MEMORY[product]}}
            seen_uuids.add(attrs["uuid"]["string"])
    assert len(seen_uuids) == 6


def _claim_template(name, class_name, count=1, selectors=()):
    request = {"deviceClassName": class_name, "count": count}
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}}


def _pod_with_template(name, template, restart="Always"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "restartPolicy": restart,
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
        "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": "gpu"}]}}]}}


@pytest.mark.parametrize("count,selectors,expected_node", [
    (1, (), None),
    (2, ("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'",), "node-b"),
])
def test_scheduler_allocates_a_claim_from_a_template(core, custom, namespace, plugin_everywhere, gpu_class,
                                                     count, selectors, expected_node):
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates",
                                           _claim_template("gpus", gpu_class, count, selectors))
    core.create_namespaced_pod(namespace, _pod_with_template("consumer", "gpus"))
    pod = wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Running",
                          "pod consumer to run", timeout=60, namespace=namespace)
    node = pod["spec"]["nodeName"]
    if expected_node:
        assert node == expected_node
    claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = custom.get_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims", claim_name)
    assert claim["metadata"]["ownerReferences"][0]["name"] == "consumer", "kube-controller-manager made it"
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == count
    published = {d["name"] for s in _node_slices(custom, node) for d in s["spec"]["devices"]}
    for result in results:
        assert result["driver"] == DRIVER and result["pool"] == node
        assert result["device"] in published
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["consumer"]


def test_unsatisfiable_claim_leaves_the_pod_pending_with_the_schedulers_reason(
        core, custom, namespace, plugin_everywhere, gpu_class):
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates",
                                           _claim_template("too-many", gpu_class, count=5))
    core.create_namespaced_pod(namespace, _pod_with_template("greedy", "too-many"))

    def unschedulable(pod):
        conditions = (pod.get("status") or {}).get("conditions") or []
        return any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions)

    pod = wait_for_object(core.list_namespaced_pod, unschedulable, "pod greedy to be marked unschedulable",
                          timeout=60, namespace=namespace)
    message = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"][0]["message"]
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    assert "cannot allocate all claims" in message, message


def test_pod_with_restart_policy_never_completes(core, namespace, plugin_everywhere, gpu_class, custom):
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates",
                                           _claim_template("one", gpu_class))
    core.create_namespaced_pod(namespace, _pod_with_template("job", "one", restart="Never"))
    pod = wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Succeeded",
                          "pod job to complete", timeout=60, namespace=namespace)
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
