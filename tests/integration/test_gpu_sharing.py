"""GPU sharing against the lab: the packing plan against the real scheduler, and wrong sharing
configs refused - by the collection before anything is applied, and by the (simulated) driver
when a hand-made class reaches a pod, with NVIDIA's message."""

import functools
import uuid

import pytest
from kubernetes import client

from conftest import DRIVER, EXPECTED, plugin_daemonset, run_module, run_playbook, slices_lister, task_results
from waiting import wait_for_object, wait_until_gone

NAMESPACE = "lab-dra-sharing"
PLUGIN = "dra-driver-nvidia-gpu-kubelet-plugin"
GATES = {"TimeSlicingSettings": True, "MPSSupport": True}
GPU = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
TIMESLICED = {"name": "it-timesliced", "strategy": "time_slicing", "interval": "Default"}
SEED_WORKLOAD = {"name": "inference", "replicas": 40, "memory": "4Gi"}


@pytest.fixture(scope="module")
def sharing_plugin(api, custom):
    """The simulated driver's kubelet plugin on every node with the sharing gates on, as
    gpu_operator_dra_sharing renders it; gone with its slices when the module ends."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    apps.create_namespaced_daemon_set(NAMESPACE, plugin_daemonset(PLUGIN, gates=GATES))
    for node in EXPECTED:
        wait_for_object(slices_lister(custom), lambda s, n=node: s["spec"].get("nodeName") == n,
                        "a ResourceSlice for " + node, timeout=60)
    yield apps
    core.delete_namespace(NAMESPACE)
    wait_until_gone(core.list_namespace, lambda n: n["metadata"]["name"] == NAMESPACE, "namespace " + NAMESPACE,
                    timeout=120)
    wait_until_gone(slices_lister(custom), lambda s: s["spec"]["driver"] == DRIVER, "the driver's slices", timeout=60)


def sharing_role(classes, **extra):
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": "dra.gpu.gpu_sharing", "vars": dict({"gpu_sharing_classes": classes}, **extra)}]}]
    return run_playbook(play)


def class_names(custom):
    return sorted(c["metadata"]["name"] for c in custom.list_cluster_custom_object(
        "resource.k8s.io", "v1", "deviceclasses")["items"])


def pod(name, claim=None, template=None):
    source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"restartPolicy": "Always", "terminationGracePeriodSeconds": 0,
                     "resourceClaims": [dict(name="gpu", **source)],
                     "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


def claim_body(name, device_class):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}}


def placed(core, namespace, running):
    """Wait until at least ``running`` pods run and every other pod is refused by the scheduler
    (a pod of a shared claim can be refused for a moment while the claim is being allocated, and
    is retried: only the settled state counts); return (running pods, refused pods)."""
    def settled(_item):
        pods = core.list_namespaced_pod(namespace).items
        up = [p for p in pods if p.status.phase == "Running"]
        refused = [p for p in pods if p.status.phase == "Pending" and any(
            c.type == "PodScheduled" and c.reason == "Unschedulable" for c in p.status.conditions or [])]
        return len(up) >= running and len(up) + len(refused) == len(pods)
    wait_for_object(core.list_namespaced_pod, settled, "%d pods to run and the rest to be refused" % running,
                    timeout=180, namespace=namespace)
    pods = core.list_namespaced_pod(namespace).items
    return ([p.metadata.name for p in pods if p.status.phase == "Running"],
            [p.metadata.name for p in pods if p.status.phase != "Running"])


def test_packing_plan_is_what_the_scheduler_places(sharing_plugin, core, custom, namespace):
    plan = run_module("dra.gpu.gpu_fit", {"workloads": [SEED_WORKLOAD]})
    assert not plan.get("failed"), plan.get("msg")
    whole, shared = plan["strategies"]["whole_gpu"], plan["strategies"]["shared"]
    # The seed's example: 2 x A10 + 4 x L4 -> 6 whole GPUs. Sold as 24 GB, they publish NVML's
    # totals (23028Mi, 23034Mi), so 5 replicas of 4Gi fit on each, not 6: 6 x 5.
    assert (whole["total"], shared["total"]) == (6, 30)
    assert shared["total"] >= 3 * whole["total"]
    rc, report, _err = sharing_role([TIMESLICED])
    assert rc == 0, [r.get("msg") for _n, r in task_results(report) if r.get("failed")]

    # Whole GPUs: a claim per pod; the plan's number run, one more cannot be placed.
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "whole"},
        "spec": {"spec": claim_body("x", "it-timesliced")["spec"]}})
    for index in range(whole["total"] + 1):
        core.create_namespaced_pod(namespace, pod("whole-%d" % index, template="whole"))
    running, refused = placed(core, namespace, whole["total"])
    assert len(running) == whole["total"] and len(refused) == 1
    for p in core.list_namespaced_pod(namespace).items:
        core.delete_namespaced_pod(p.metadata.name, namespace, grace_period_seconds=0)
    claims_of = functools.partial(custom.list_namespaced_custom_object, "resource.k8s.io", "v1", namespace,
                                  "resourceclaims")
    wait_until_gone(claims_of, lambda c: True, "the whole-GPU claims", timeout=120)

    # Sharing: one shared claim per planned GPU with the planned replicas, and one claim more.
    placements = shared["placements"]
    for index, placement in enumerate(placements + [{"replicas": 1}]):
        custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims",
                                               claim_body("shared-%d" % index, "it-timesliced"))
        for replica in range(placement["replicas"]):
            core.create_namespaced_pod(namespace, pod("shared-%d-%d" % (index, replica), claim="shared-%d" % index))
    running, refused = placed(core, namespace, shared["total"])
    assert len(running) == shared["total"] and refused == ["shared-%d-0" % len(placements)]
    claims = custom.list_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims")["items"]
    allocated = {c["metadata"]["name"]: c["status"]["allocation"]["devices"]["results"][0]
                 for c in claims if (c.get("status") or {}).get("allocation")}
    assert len(allocated) == len(placements)
    assert len(set((r["pool"], r["device"]) for r in allocated.values())) == len(placements)
    assert sorted((r["pool"], r["device"]) for r in allocated.values()) == \
        sorted((p["pool"], p["device"]) for p in placements)
    for claim in claims:
        if claim["metadata"]["name"] in allocated:
            assert len(claim["status"]["reservedFor"]) == placements[int(claim["metadata"]["name"].split("-")[1])][
                "replicas"]


@pytest.mark.parametrize("classes, words", [
    ([TIMESLICED, {"name": "it-bad", "strategy": "mps", "mps": {"active_thread_percentage": 50, "multi_user": True}}],
     ["gpu_sharing_classes[1].mps.multi_user is not a setting"]),
    ([{"name": "it-big", "strategy": "mps", "mps": {"pinned_memory_limit": "48Gi"}}],
     ["(it-big): mps.pinned_memory_limit 48Gi", "lower it to at most 23034Mi"]),
])
def test_wrong_sharing_config_is_refused_before_anything_is_applied(sharing_plugin, custom, classes, words):
    before = class_names(custom)
    rc, report, _err = sharing_role(classes)
    failures = [r.get("msg", "") for _n, r in task_results(report) if r.get("failed")]
    assert rc != 0 and len(failures) == 1
    assert all(w in failures[0] for w in words), failures[0]
    assert class_names(custom) == before


def test_a_hand_made_class_with_a_bad_config_fails_the_pod_with_the_drivers_message(sharing_plugin, custom):
    """What the collection refuses up front is what NVIDIA's plugin refuses at prepare time:
    a class made without it reaches the pod, and the smoke test reports the driver's words."""
    name = "it-hand-made-" + uuid.uuid4().hex[:6]
    parameters = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
                  "sharing": {"strategy": "MPS", "mpsConfig": {"multiUser": True}}}
    custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": GPU}}],
                 "config": [{"opaque": {"driver": DRIVER, "parameters": parameters}}]}})
    try:
        result = run_module("dra.gpu.claim_smoke_check", {"device_class": name, "pods": 2, "timeout": 90,
                                                          "namespace": "it-prepare-" + uuid.uuid4().hex[:6]})
    finally:
        custom.delete_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name)
    assert result.get("failed") and result["failure"] == "prepare_failed", result.get("msg")
    assert 'strict decoding error: unknown field "sharing.mpsConfig.multiUser"' in result["msg"]
    assert result["timings"].get("allocated_after") is not None and "left_behind" not in result
    refused = run_module("dra.gpu.device_class", {"name": name, "selectors": [GPU], "config": [
        {"opaque": {"driver": DRIVER, "parameters": parameters}}]})
    assert refused.get("failed") and 'unknown field "sharing.mpsConfig.multiUser"' in refused["msg"]


def test_sharing_classes_are_refused_while_the_drivers_gates_are_off(sharing_plugin, custom):
    sharing_plugin.patch_namespaced_daemon_set(PLUGIN, NAMESPACE, {"spec": {"template": {"spec": {"containers": [
        {"name": "gpus", "env": [{"name": "FEATURE_GATES", "value": "MPSSupport=true,"}]}]}}}})
    before = class_names(custom)
    rc, report, _err = sharing_role([TIMESLICED])
    failures = [r.get("msg", "") for _n, r in task_results(report) if r.get("failed")]
    assert rc != 0 and len(failures) == 1
    assert "TimeSlicingSettings" in failures[0] and "gpu_operator_dra_sharing: true" in failures[0]
    assert "%s/%s runs without TimeSlicingSettings" % (NAMESPACE, PLUGIN) in failures[0]
    assert class_names(custom) == before
    rc, report, _err = sharing_role([TIMESLICED], gpu_sharing_state="absent")
    assert rc == 0 and "it-timesliced" not in class_names(custom)
