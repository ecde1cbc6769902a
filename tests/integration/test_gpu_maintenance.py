"""Taking one GPU out of service and back (issue 30, item 2) with dra.gpu.gpu_maintenance, on
Kubernetes 1.37 (DeviceTaintRule GA) with the real scheduler and the real kube-controller-manager's
device-taint eviction controller; on 1.35 (the test lab) it refuses before any change.

The 1.37 lab is a second lab (old_lab.start, 750 ports above the test lab) whose simulated nodes
publish their GPUs from the start (driver mode always; node-b: four L4). It runs with one gate
set against 1.37's defaults, DRAPartitionableDevices=false (LAB_FEATURE_GATES; nothing here uses
shared counters), so dra_readiness shows that its probes follow the gate, not the version.
"""

import json
import os
import pathlib
import uuid

import pytest
from kubernetes import client, config

import old_lab
from browser import dump_dom, screenshot  # browser.py beside this file: headless chromium
from conftest import run_module, run_playbook, task_results
from waiting import wait_for_object, wait_until_gone

PAUSE = "registry.k8s.io/pause:3.10"
CLASS = "it-maintenance-gpu"
NODE = "node-b"
MODULE = "dra.gpu.gpu_maintenance"
PLAYBOOK = os.path.join(old_lab.ROOT, "playbooks", "gpu_maintenance.yml")
ARTIFACTS = pathlib.Path(old_lab.ROOT) / "tests" / "output"


FLIPPED = "DRAPartitionableDevices"


def settings():
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + 750, "driver_mode": "always",
            "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-maintenance-" + old_lab.NEW_VERSION),
            "feature_gates": FLIPPED + "=false"}


class Lab:
    def __init__(self, kubeconfig):
        api = config.new_client_from_config(kubeconfig)
        self.core, self.custom, self.policy = client.CoreV1Api(api), client.CustomObjectsApi(api), client.PolicyV1Api(api)
        self.env = {"KUBECONFIG": kubeconfig}

    def rules(self):
        return sorted(r["metadata"]["name"] for r in self.custom.list_cluster_custom_object(
            "resource.k8s.io", "v1", "devicetaintrules")["items"])

    def pod(self, ns, name, labels=None, uuid_=None):
        """A pod on node-b with a claim of its own for one GPU (that GPU only, with ``uuid_``)."""
        exactly = {"deviceClassName": CLASS}
        if uuid_:
            exactly["selectors"] = [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].uuid == '%s'" % uuid_}}]
        self.custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}})
        self.core.create_namespaced_pod(ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "labels": labels or {}}, "spec": {
            "nodeSelector": {"kubernetes.io/hostname": NODE}, "terminationGracePeriodSeconds": 0,
            "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
            "containers": [{"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}]}})

    def running(self, ns, name):
        wait_for_object(self.core.list_namespaced_pod, lambda p: p["metadata"]["name"] == name and (
            p.get("status") or {}).get("phase") == "Running", "pod %s running" % name, timeout=90, namespace=ns)

    def device_of(self, ns, name):
        claim = self.custom.get_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims", name)
        return claim["status"]["allocation"]["devices"]["results"][0]["device"]

    def uuid_of(self, device):
        for item in self.custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices")["items"]:
            for published in item["spec"]["devices"]:
                if item["spec"]["nodeName"] == NODE and published["name"] == device:
                    return published["attributes"]["uuid"]["string"]
        raise AssertionError("no %s on %s" % (device, NODE))


@pytest.fixture(scope="module")
def lab():
    kubeconfig = old_lab.start(old_lab.NEW_VERSION, **settings())
    lab = Lab(kubeconfig)
    lab.custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})
    yield lab
    old_lab.stop(old_lab.NEW_VERSION, **settings())


def test_no_execute_evicts_exactly_the_pods_on_the_gpu_after_its_budget_allows_and_back_in_service(lab, tmp_path):
    ns = "it-maint-" + uuid.uuid4().hex[:6]
    lab.core.create_namespace({"metadata": {"name": ns}})
    wait_for_object(lab.core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account", timeout=30, namespace=ns)
    try:
        for name in ("victim", "bystander-1", "bystander-2"):
            lab.pod(ns, name, labels={"app": name})
            lab.running(ns, name)
        gpu = lab.device_of(ns, "victim")
        chosen = {"devices": [{"node": NODE, "device": gpu}], "effect": "NoExecute", "timeout": 60}

        # a budget that allows no disruption of the victim: refused, naming it, nothing changed
        lab.policy.create_namespaced_pod_disruption_budget(ns, {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep-victim"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "victim"}}}})
        wait_for_object(lab.policy.list_namespaced_pod_disruption_budget, lambda b: (b.get("status") or {}).get(
            "observedGeneration") == 1, "the budget counted", timeout=60, namespace=ns)
        refused = run_module(MODULE, chosen, env=lab.env)
        assert refused.get("failed") and not refused["changed"], refused
        assert refused["budgets"] == ["%s/keep-victim" % ns] and "keep-victim" in refused["msg"]
        assert "nothing was changed" in refused["msg"] and lab.rules() == []
        lab.policy.delete_namespaced_pod_disruption_budget("keep-victim", ns)

        planned = run_module(MODULE, chosen, check_mode=True, diff=True, env=lab.env)
        assert planned["changed"] and planned["created"] == ["dra-gpu-maintenance-%s-%s" % (NODE, gpu)], planned
        assert [p["name"] for p in planned["evicted"]] == ["victim"] and lab.rules() == []

        done = run_module(MODULE, chosen, diff=True, env=lab.env)
        assert not done.get("failed"), done.get("msg")
        assert done["changed"] and [p["name"] for p in done["evicted"]] == ["victim"]
        assert done["diff"]["after"]["rules"] == {"dra-gpu-maintenance-%s-%s" % (NODE, gpu): "%s/%s NoExecute"
                                                  % (NODE, gpu)}
        # the module returned once no pod used the GPU: the victim is gone or going, not merely marked for it
        victim = [p for p in lab.core.list_namespaced_pod(ns).items if p.metadata.name == "victim"]
        assert not victim or victim[0].metadata.deletion_timestamp, victim
        wait_until_gone(lab.core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "victim", "victim",
                        timeout=30, namespace=ns)
        left = sorted(p.metadata.name for p in lab.core.list_namespaced_pod(ns).items)
        assert left == ["bystander-1", "bystander-2"]
        again = run_module(MODULE, chosen, env=lab.env)
        assert not again.get("failed") and not again["changed"] and not again["evicted"], again

        # reported tainted, with the rule's name, and free for nobody
        rule_name = "dra-gpu-maintenance-%s-%s" % (NODE, gpu)
        info = run_module("dra.gpu.resource_slice_info", {"nodes": [NODE]}, env=lab.env)
        mine = [d for d in info["devices"] if d["name"] == gpu][0]
        assert mine["tainted"] and [t["rule"] for t in mine["taints"]] == [rule_name] and mine["taints"][0]["time_added"]
        assert (info["summary"]["by_node"][NODE]["tainted"], info["summary"]["by_node"][NODE]["free"]) == (1, 1)
        usage = run_module("dra.gpu.gpu_usage_info", {"render": ["html"]}, env=lab.env)
        row = [d for n in usage["nodes"] if n["name"] == NODE for d in n["devices"] if d["name"] == gpu][0]
        assert row["state"] == "tainted" and "DeviceTaintRule %s" % rule_name in usage["html"]
        # the page as a person sees it: chromium shows the GPU out of service, why and since when
        page = tmp_path / "gpu-usage.html"
        page.write_text(usage["html"])
        screenshot(str(page), str(ARTIFACTS / "report-screenshot-tainted.png"))
        dom = dump_dom(str(page))
        since = row["taints"][0]["time_added"]
        assert "tainted (out of service)" in dom and "dra.gpu/maintenance:NoExecute (DeviceTaintRule %s) since %s" % (
            rule_name, since) in dom, dom[-3000:]
        assert dict((c["class"], c["free"]) for c in usage["free_by_class"])[CLASS] == 1 + 2  # node-a's two A10
        fit = run_module("dra.gpu.gpu_fit", {"nodes": [NODE], "workloads": [{"name": "w", "memory": "1Gi",
                                                                             "replicas": 4}]}, env=lab.env)
        placed = fit["strategies"]["whole_gpu"]["placements"]
        assert fit["strategies"]["whole_gpu"]["total"] == 1 and gpu not in [p["device"] for p in placed], fit

        # the GPU, tainted, takes no claim; back in service, it does
        lab.pod(ns, "after", uuid_=lab.uuid_of(gpu))
        wait_for_object(lab.core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "after" and any(
            c.get("reason") == "Unschedulable" for c in (p.get("status") or {}).get("conditions") or []),
            "pod after unschedulable", timeout=60, namespace=ns)
        back = {"state": "in_service", "devices": [{"node": NODE, "device": gpu}]}
        assert run_module(MODULE, back, check_mode=True, env=lab.env)["changed"] and lab.rules()
        # back in service through the role and its playbook, as users run it
        extra = ["-e", json.dumps({"gpu_maintenance_state": "in_service", "gpu_maintenance_devices": back["devices"]})]
        rc, report, stderr = run_playbook(PLAYBOOK, extra_args=extra, env=lab.env)
        results = dict(task_results(report))
        assert rc == 0, stderr
        restored = results["dra.gpu.gpu_maintenance : Take the GPUs out of service or back, with this role's "
                           "DeviceTaintRules"]
        assert restored["changed"] and restored["deleted"] == ["dra-gpu-maintenance-%s-%s" % (NODE, gpu)]
        assert lab.rules() == []
        lab.running(ns, "after")
        assert not run_module(MODULE, back, env=lab.env)["changed"]
    finally:
        lab.core.delete_namespace(ns)


def test_readiness_says_the_1_37_cluster_honours_device_taints_and_follows_a_gate_turned_off(lab):
    result = run_module("dra.gpu.dra_readiness", {}, env=lab.env)
    check = [c for c in result["checks"] if c["name"] == "device_taints"][0]
    assert check["status"] == "pass", check
    features = dict((f["name"], f) for f in result["dra_features"]["features"])
    partitionable = features["partitionable_devices"]
    # 1.37 turns it on by default; this API server was started with the gate off and drops the field.
    assert partitionable["gate"] == FLIPPED and partitionable["default"] is True and partitionable["probed"]
    assert partitionable["on"] is False and partitionable["flipped"], partitionable
    assert "ResourceSlice with sharedCounters dropped it" in partitionable["how"]
    assert all(f["on"] and not f["flipped"] for name, f in features.items() if name != "partitionable_devices")


def test_a_rule_that_is_not_ours_is_never_touched(lab):
    lab.custom.create_cluster_custom_object("resource.k8s.io", "v1", "devicetaintrules", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "someone-elses"},
        "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-3"},
                 "taint": {"key": "example.com/broken", "effect": "NoSchedule"}}})
    try:
        result = run_module(MODULE, {"state": "in_service"}, env=lab.env)
        assert not result.get("failed") and not result["changed"], result
        assert lab.rules() == ["someone-elses"]
    finally:
        lab.custom.delete_cluster_custom_object("resource.k8s.io", "v1", "devicetaintrules", "someone-elses")


def test_on_1_35_it_refuses_before_any_change_and_names_the_fix():
    rc, report, _stderr = run_playbook(PLAYBOOK, extra_args=["-e", json.dumps({
        "gpu_maintenance_devices": [{"node": "node-b", "device": "gpu-0"}]})])
    assert rc != 0
    refused = dict(task_results(report))["dra.gpu.gpu_maintenance : Take the GPUs out of service or back, with this "
                                         "role's DeviceTaintRules"]
    assert refused.get("failed") and not refused["changed"], refused
    assert "does not serve DeviceTaintRules in resource.k8s.io/v1" in refused["msg"]
    assert "Upgrade the cluster to 1.37" in refused["msg"] and "Nothing was changed" in refused["msg"]
    assert "needs Kubernetes 1.37+ (DRADeviceTaintRules: alpha and off by default in 1.35" in refused["msg"]
    readiness = run_module("dra.gpu.dra_readiness", {})
    check = [c for c in readiness["checks"] if c["name"] == "device_taints"][0]
    assert check["status"] == "warn" and "drops device taints from ResourceSlices" in check["message"]
