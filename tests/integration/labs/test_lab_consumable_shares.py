"""Memory shares (issue 27) on the lab's real scheduler: the simulated NVIDIA plugin publishes what
NVIDIA's 0.5.0 plugin publishes with ConsumableShares (its entries pinned against the real
plugin's in lab/tests/test_real_plugin_pins.py; docs/testing.md), and kube-scheduler
packs claims onto one device by the capacity they ask for.

One lab for the module (old_lab.start, 800 ports above the test lab: tests/integration's second
labs take 300 to 700), at the current release (DRAConsumableCapacity on), in plugin mode, with
one node holding one A10 (23028Mi) and one L4 (23034Mi); the mode changes with the kubelet-plugin DaemonSet, as a chart upgrade changes it.
The 1.35 case uses the test lab itself (DRAConsumableCapacity off there).
"""

import functools
import os
import re
import uuid

import pytest
from kubernetes import client, config

import old_lab
from conftest import PLUGIN_LABEL
from waiting import wait_for_log_line, wait_for_object, wait_until_gone

DRIVER = "gpu.nvidia.com"
NODE = "gpu-shared"
WHOLE = {"gpu-0": "23028Mi", "gpu-1": "23034Mi"}
IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"
PAUSE = "registry.k8s.io/pause:3.10"
TOPOLOGY = os.path.join(old_lab.ROOT, "lab", "topologies", "consumable-shares.yml")
# LAB_SHARES_K8S_VERSION: run it on another cached version (1.36.3) where the current one is not built yet.
VERSION = os.environ.get("LAB_SHARES_K8S_VERSION") or old_lab.NEW_VERSION
L4 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"
A10 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'"


def settings():
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + 800, "driver_mode": "plugin",
            "topology": TOPOLOGY, "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-sim-shares-" + VERSION)}


class Lab:
    def __init__(self, kubeconfig):
        api = config.new_client_from_config(kubeconfig)
        self.core, self.apps, self.custom = client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)
        self.kubeconfig = kubeconfig

        self.slices = functools.partial(self.custom.list_cluster_custom_object, "resource.k8s.io", "v1",
                                        "resourceslices")

    def devices(self):
        return {d["name"]: d for s in self.slices()["items"] if s["spec"]["nodeName"] == NODE
                for d in s["spec"]["devices"]}

    def plugin(self, env):
        """The kubelet-plugin DaemonSet as NVIDIA's chart renders consumableShares and featureGates
        (env on the gpus container), replacing the one before; returns once the node publishes."""
        ns = "nvidia-dra"
        self._delete_plugin(ns)
        container = {"name": "gpus", "image": IMAGE, "env": [{"name": k, "value": v} for k, v in env.items()]}
        body = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "dra-driver-nvidia-gpu-kubelet-plugin"},
                "spec": {"selector": {"matchLabels": PLUGIN_LABEL}, "template": {
                    "metadata": {"labels": PLUGIN_LABEL}, "spec": {"containers": [container]}}}}
        self.apps.create_namespaced_daemon_set(ns, body)

    def _delete_plugin(self, ns):
        try:
            self.core.create_namespace({"metadata": {"name": ns}})
        except client.exceptions.ApiException as exc:
            if exc.status != 409:
                raise
        try:
            self.apps.delete_namespaced_daemon_set("dra-driver-nvidia-gpu-kubelet-plugin", ns,
                                                   propagation_policy="Foreground")
        except client.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
            return
        wait_until_gone(self.slices, lambda s: s["spec"]["nodeName"] == NODE, "the node's slices", timeout=60)
        # Foreground deletion keeps the DaemonSet until its pods are gone, which can be after the slices
        # are: the next plugin, created under the same name before then, would be a 409.
        wait_until_gone(self.apps.list_namespaced_daemon_set,
                        lambda d: d["metadata"]["name"] == "dra-driver-nvidia-gpu-kubelet-plugin",
                        "the old kubelet-plugin DaemonSet", timeout=60, namespace=ns)

    def published(self, predicate, what):
        wait_for_object(self.slices, lambda s: s["spec"]["nodeName"] == NODE and all(
            predicate(d) for d in s["spec"]["devices"]), what, timeout=60)
        return self.devices()


@pytest.fixture(scope="module")
def lab():
    kubeconfig = old_lab.start(VERSION, **settings())
    lab = Lab(kubeconfig)
    lab.custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                                      "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}})
    yield lab
    old_lab.stop(VERSION, **settings())


@pytest.fixture
def ns(lab):
    name = "it-shares-" + uuid.uuid4().hex[:6]
    lab.core.create_namespace({"metadata": {"name": name}})
    wait_for_object(lab.core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + name, timeout=30, namespace=name)
    yield name
    lab.core.delete_namespace(name)
    # its claims go with it, and their capacity with them: the next test starts on empty GPUs
    wait_until_gone(lab.core.list_namespace, lambda n: n["metadata"]["name"] == name, "namespace " + name,
                    timeout=120)


def template(lab, ns, name, memory=None, selectors=()):
    request = {"deviceClassName": DRIVER}
    if memory:
        request["capacity"] = {"requests": {"memory": memory}}
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    lab.custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}})


def pods(lab, ns, tmpl, names, probe=False):
    """Pods each with its own claim from ``tmpl``; ``probe``: `nvidia-smi -L` and done (the
    simulated kubelet writes what it would print into the termination message)."""
    for name in names:
        container = {"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}
        if probe:
            container.update(image="nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", command=["nvidia-smi", "-L"])
        lab.core.create_namespaced_pod(ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
            "restartPolicy": "Never" if probe else "Always",
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": tmpl}], "containers": [container]}})


def running(lab, ns, names, phase="Running"):
    for name in names:
        wait_for_object(lab.core.list_namespaced_pod, lambda p, n=name: p["metadata"]["name"] == n and (
            p.get("status") or {}).get("phase") == phase, "pod %s %s" % (name, phase), timeout=90, namespace=ns)


def unschedulable(lab, ns, name):
    def marked(pod):
        return pod["metadata"]["name"] == name and any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in (pod.get("status") or {}).get("conditions") or [])
    return wait_for_object(lab.core.list_namespaced_pod, marked, "pod %s unschedulable" % name, timeout=90,
                           namespace=ns)


def allocations(lab, ns):
    """{device: [(shareID, consumedCapacity)]} over the namespace's allocated claims."""
    found = {}
    for claim in lab.custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims")["items"]:
        for result in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            assert result["pool"] == NODE and result["driver"] == DRIVER
            found.setdefault(result["device"], []).append((result.get("shareID"), result.get("consumedCapacity")))
    return found


def test_memory_mode_packs_8gi_claims_two_per_card_and_then_refuses(lab, ns):
    lab.plugin({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": "ConsumableShares=true"})
    devices = lab.published(lambda d: d.get("allowMultipleAllocations"), "memory shares published")
    for name, whole in WHOLE.items():
        assert devices[name]["capacity"] == {"memory": {"value": whole, "requestPolicy": {
            "default": whole, "validRange": {"min": "1Mi", "max": whole, "step": "1Mi"}}}}
        assert devices[name]["attributes"]["resource.kubernetes.io/numaNode"] == {"int": 0}
    template(lab, ns, "eight", memory="8Gi")
    pods(lab, ns, "eight", ["p1", "p2", "p3", "p4"])
    running(lab, ns, ["p1", "p2", "p3", "p4"])
    found = allocations(lab, ns)
    # 2 x 8Gi fit in 22.5Gi, a third does not: two per card, on both cards
    assert sorted(found) == ["gpu-0", "gpu-1"] and [len(v) for v in found.values()] == [2, 2], found
    shares = [share for entries in found.values() for share, _consumed in entries]
    assert all(shares) and len(set(shares)) == 4
    assert all(consumed == {"memory": "8Gi"} for entries in found.values() for _share, consumed in entries)
    pods(lab, ns, "eight", ["p5"])
    message = [c for c in unschedulable(lab, ns, "p5")["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert "cannot allocate all claims" in message["message"], message


def test_memory_mode_a_claim_without_a_request_takes_the_whole_card_and_sharers_see_its_uuid(lab, ns):
    lab.plugin({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": "ConsumableShares=true"})
    devices = lab.published(lambda d: d.get("allowMultipleAllocations"), "memory shares published")
    template(lab, ns, "whole", selectors=[A10])
    # one after the other: which of two pending pods the scheduler serves first is its choice
    pods(lab, ns, "whole", ["whole"])
    running(lab, ns, ["whole"])
    assert allocations(lab, ns)["gpu-0"] == [(allocations(lab, ns)["gpu-0"][0][0], {"memory": WHOLE["gpu-0"]})]
    pods(lab, ns, "whole", ["whole-2"])
    unschedulable(lab, ns, "whole-2")   # the card is full
    # two pods, two claims, one L4: both print that GPU's UUID
    template(lab, ns, "half", memory="8Gi", selectors=[L4])
    pods(lab, ns, "half", ["probe-1", "probe-2"], probe=True)
    running(lab, ns, ["probe-1", "probe-2"], phase="Succeeded")
    uuid_l4 = devices["gpu-1"]["attributes"]["uuid"]["string"]
    for name in ("probe-1", "probe-2"):
        state = lab.core.read_namespaced_pod(name, ns).status.container_statuses[0].state.terminated
        assert re.findall(r"UUID: (GPU-[0-9a-f-]+)", state.message) == [uuid_l4], state.message


def test_shares_mode_4_puts_four_claims_on_a_card(lab, ns):
    lab.plugin({"CONSUMABLE_SHARES": "4", "FEATURE_GATES": "ConsumableShares=true"})
    devices = lab.published(lambda d: "shares" in d["capacity"], "4 shares published")
    assert devices["gpu-1"]["capacity"]["shares"] == {"value": "4", "requestPolicy": {
        "default": "1", "validRange": {"min": "1", "max": "4", "step": "1"}}}
    template(lab, ns, "share", selectors=[L4])
    pods(lab, ns, "share", ["s1", "s2", "s3", "s4"])
    running(lab, ns, ["s1", "s2", "s3", "s4"])
    assert [consumed for _share, consumed in allocations(lab, ns)["gpu-1"]] == [{"memory": "0", "shares": "1"}] * 4
    pods(lab, ns, "share", ["s5"])
    unschedulable(lab, ns, "s5")


def test_unlimited_mode_a_claim_without_a_request_consumes_nothing(lab, ns):
    lab.plugin({"CONSUMABLE_SHARES": "unlimited", "FEATURE_GATES": "ConsumableShares=true"})
    lab.published(lambda d: d.get("allowMultipleAllocations") and "shares" not in d["capacity"]
                  and d["capacity"]["memory"]["requestPolicy"]["default"] == "0", "unlimited published")
    template(lab, ns, "free", selectors=[L4])
    pods(lab, ns, "free", ["u1", "u2", "u3", "u4", "u5"])
    running(lab, ns, ["u1", "u2", "u3", "u4", "u5"])
    assert [consumed for _share, consumed in allocations(lab, ns)["gpu-1"]] == [{"memory": "0"}] * 5


def test_a_mode_without_the_gate_crash_loops_the_plugin_and_publishes_nothing(lab):
    lab.plugin({"CONSUMABLE_SHARES": "memory"})

    def crashing(pod):
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return any(((s.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff" for s in statuses)

    pod = wait_for_object(lab.core.list_namespaced_pod, crashing, "the plugin pod in CrashLoopBackOff", timeout=60,
                          namespace="nvidia-dra")
    last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["message"]
    assert "invalid CLI flags: --consumable-shares requires feature gate ConsumableShares to be enabled" in last
    assert lab.devices() == {}


def test_on_1_35_the_api_server_drops_the_fields_and_the_plugin_goes_on(api, custom, namespace):
    """The test lab (1.35.4, DRAConsumableCapacity off): the plugin's slices are stored without
    allowMultipleAllocations and requestPolicy, which it logs once, as NVIDIA's does."""
    from conftest import plugin_daemonset
    if not os.environ.get("LAB_K8S_VERSION", "1.35.4").startswith("1.35."):
        pytest.skip("the test lab is not 1.35")
    apps = client.AppsV1Api(api)
    body = plugin_daemonset("shares-on-a", {"kubernetes.io/hostname": "node-a"})
    container = body["spec"]["template"]["spec"]["containers"][0]
    container.update(image=IMAGE, env=[{"name": "CONSUMABLE_SHARES", "value": "memory"},
                                       {"name": "FEATURE_GATES", "value": "ConsumableShares=true"}])
    apps.create_namespaced_daemon_set(namespace, body)

    node_a = functools.partial(custom.list_cluster_custom_object, "resource.k8s.io", "v1", "resourceslices")

    published = wait_for_object(node_a, lambda s: s["spec"].get("nodeName") == "node-a", "node-a's slice", timeout=60)
    for device in published["spec"]["devices"]:
        assert "allowMultipleAllocations" not in device
        assert "requestPolicy" not in device["capacity"]["memory"]
        assert device["attributes"]["resource.kubernetes.io/numaNode"] == {"int": 0}
    log = os.path.join(os.environ.get("LAB_STATE_DIR") or os.path.join(old_lab.ROOT, ".lab", "test"), "run",
                       "simulator.log")
    # The simulator logs it once the API server has answered, which the slice's watchers may see first.
    dropped = wait_for_log_line(log, 'pool "node-a": some fields were dropped by the apiserver',
                                "the simulator's note of the dropped fields", timeout=30)
    assert "DRAConsumableCapacity" in dropped
    apps.delete_namespaced_daemon_set("shares-on-a", namespace, propagation_policy="Foreground")
    wait_until_gone(node_a, lambda s: s["spec"].get("nodeName") == "node-a", "node-a's slices", timeout=60)
