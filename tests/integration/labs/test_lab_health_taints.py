"""NVIDIA's health taints (issue 30) on the lab's real scheduler: with the plugin's gate
NVMLDeviceHealthCheck on, a fault injected on one GPU (`lab.py fault`) is published as the
device taint NVIDIA's plugin writes (sim/health.py, read from its device_health.go at main
95932046, taken as 0.5.0), kube-scheduler keeps new claims off that GPU while the node's other
GPUs still get them, and a restart of the kubelet plugin takes the taints away (they live in
its memory only). With the gate off, nothing is published.

One lab for the module (old_lab.start, 850 ports above the test lab, between the second labs of
tests/integration/labs' shares test at +800 and the demo's at +900), at the current release, in
plugin mode with the default topology (node-b: four L4).
"""

import functools
import os
import subprocess
import uuid

import pytest
from kubernetes import client, config

import old_lab
from conftest import PLUGIN_LABEL
from waiting import wait_for_log_line, wait_for_object, wait_until_gone

NODE = "node-b"
CLASS = "lab-health-gpu"
IMAGE = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"
PAUSE = "registry.k8s.io/pause:3.10"
NS = "nvidia-dra"
DS = "dra-driver-nvidia-gpu-kubelet-plugin"


def settings():
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + 850, "driver_mode": "plugin",
            "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-sim-health-" + old_lab.NEW_VERSION)}


class Lab:
    def __init__(self, kubeconfig):
        api = config.new_client_from_config(kubeconfig)
        self.core, self.apps, self.custom = client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)
        self.slices = functools.partial(self.custom.list_cluster_custom_object, "resource.k8s.io", "v1",
                                        "resourceslices")
        self.log = os.path.join(settings()["state_dir"], "run", "simulator.log")

    def devices(self):
        return {d["name"]: d for s in self.slices()["items"] if s["spec"]["nodeName"] == NODE
                for d in s["spec"]["devices"]}

    def fault(self, *words):
        env = old_lab.lab_env(old_lab.NEW_VERSION, **settings())
        subprocess.run(old_lab.LAB + ["fault", NODE] + list(words), env=env, check=True, capture_output=True)

    def plugin(self, gates):
        """NVIDIA's kubelet-plugin DaemonSet with FEATURE_GATES ``gates``, replacing (restarting) the one
        before; returns once node-b publishes again."""
        try:
            self.apps.delete_namespaced_daemon_set(DS, NS, propagation_policy="Foreground")
            wait_until_gone(self.slices, lambda s: s["spec"]["nodeName"] == NODE, "node-b's slices", timeout=60)
            # Foreground deletion keeps the DaemonSet until its pods are gone, which can be after the
            # slices are: creating it again before then is a 409 "object is being deleted".
            wait_until_gone(self.apps.list_namespaced_daemon_set, lambda d: d["metadata"]["name"] == DS,
                            "the old DaemonSet %s" % DS, timeout=60, namespace=NS)
        except client.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
        container = {"name": "gpus", "image": IMAGE, "env": [{"name": "FEATURE_GATES", "value": gates}]}
        self.apps.create_namespaced_daemon_set(NS, {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": DS},
            "spec": {"selector": {"matchLabels": PLUGIN_LABEL}, "template": {
                "metadata": {"labels": PLUGIN_LABEL}, "spec": {"containers": [container]}}}})
        wait_for_object(self.slices, lambda s: s["spec"]["nodeName"] == NODE, "node-b's slices", timeout=60)


@pytest.fixture(scope="module")
def lab():
    kubeconfig = old_lab.start(old_lab.NEW_VERSION, **settings())
    lab = Lab(kubeconfig)
    lab.core.create_namespace({"metadata": {"name": NS}})
    lab.custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})
    yield lab
    old_lab.stop(old_lab.NEW_VERSION, **settings())


def _workload(lab):
    """A namespace with a template for claims of one GPU each."""
    ns = "it-health-" + uuid.uuid4().hex[:6]
    lab.core.create_namespace({"metadata": {"name": ns}})
    wait_for_object(lab.core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account", timeout=30, namespace=ns)
    lab.custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}}}})
    return ns


def _pod(lab, ns, name):
    """A pod on node-b with a claim for one GPU."""
    lab.core.create_namespaced_pod(ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "nodeSelector": {"kubernetes.io/hostname": NODE},
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
        "containers": [{"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}]}})


def _phase(lab, ns, name, check, what):
    return wait_for_object(lab.core.list_namespaced_pod, lambda p: p["metadata"]["name"] == name and check(p),
                           "pod %s %s" % (name, what), timeout=90, namespace=ns)


def _unschedulable(pod):
    return any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _allocated(lab, ns):
    return sorted(r["device"] for c in lab.custom.list_namespaced_custom_object(
        "resource.k8s.io", "v1", ns, "resourceclaims")["items"]
        for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []))


def test_without_the_gate_a_fault_publishes_no_taint(lab):
    lab.plugin("")
    lab.fault("gpu-1", "xid=79")
    wait_for_log_line(lab.log, "node %s: 1 NVML health event(s) injected" % NODE, "the simulator saw the fault")
    assert not [d["name"] for d in lab.devices().values() if d.get("taints")]


def test_a_health_taint_keeps_claims_off_its_gpu_only_until_the_plugin_restarts(lab):
    lab.plugin("NVMLDeviceHealthCheck=true")   # the restart forgot the event above
    assert not [d["name"] for d in lab.devices().values() if d.get("taints")]
    lab.fault("gpu-1", "xid=79")   # a fatal XID: NoSchedule
    lab.fault("gpu-0", "xid=13")   # an application error: effect None, still schedulable
    wait_for_object(lab.slices, lambda s: s["spec"]["nodeName"] == NODE and sum(
        bool(d.get("taints")) for d in s["spec"]["devices"]) == 2, "two tainted devices", timeout=60)
    devices = lab.devices()
    (xid79,), (xid13,) = devices["gpu-1"]["taints"], devices["gpu-0"]["taints"]
    assert xid79.pop("timeAdded") and xid13.pop("timeAdded")   # stamped by the API server
    assert xid79 == {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}
    assert xid13 == {"key": "gpu.nvidia.com/xid", "value": "13", "effect": "None"}
    assert not devices["gpu-2"].get("taints") and not devices["gpu-3"].get("taints")

    ns = _workload(lab)
    try:
        # One pod at a time: created together, the scheduler may take them in any order (a pod
        # retried while its claim is being made goes behind the others), so which one is left
        # without a GPU would be chance.
        for name in ("p1", "p2", "p3"):
            _pod(lab, ns, name)
            _phase(lab, ns, name, lambda p: (p.get("status") or {}).get("phase") == "Running", "running")
        _pod(lab, ns, "p4")
        _phase(lab, ns, "p4", _unschedulable, "unschedulable")
        assert _allocated(lab, ns) == ["gpu-0", "gpu-2", "gpu-3"]

        # NVIDIA's plugin never removes a taint; a new plugin pod starts without them.
        lab.plugin("NVMLDeviceHealthCheck=true")
        assert not [d["name"] for d in lab.devices().values() if d.get("taints")]
        _phase(lab, ns, "p4", lambda p: (p.get("status") or {}).get("phase") == "Running", "running")
        assert _allocated(lab, ns) == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    finally:
        lab.core.delete_namespace(ns)
