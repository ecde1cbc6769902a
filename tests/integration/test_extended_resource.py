"""The path off the device plugin that rewrites nothing (issue 14, item 3): on Kubernetes 1.36+ (the lab: 1.37.2),
where DRAExtendedResource is beta and on, NVIDIA's DeviceClass gpu.nvidia.com with
extendedResourceName nvidia.com/gpu lets the real scheduler serve an unchanged pod that asks
for nvidia.com/gpu with a claim it makes itself; on 1.35 the API server drops the field and
gpu_workload_migrate says the path is not available, and why.

The 1.37 lab is a second lab (old_lab.start, 500 ports above the test lab) whose simulated
nodes publish their GPUs from the start (driver mode always) and run no device plugin.
"""

import os
import uuid

import pytest
from kubernetes import client, config

import old_lab
from conftest import run_module
from waiting import wait_for_object

PAUSE = "registry.k8s.io/pause:3.10"
# As NVIDIA's DRA driver chart creates it (v25.12 and v0.4 alike).
NVIDIA_GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                                  "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
             "extendedResourceName": "nvidia.com/gpu"}}


def settings():
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + 500, "driver_mode": "always",
            "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-" + old_lab.NEW_VERSION)}


@pytest.fixture(scope="module")
def new_cluster():
    kubeconfig = old_lab.start(old_lab.NEW_VERSION, **settings())
    yield kubeconfig
    old_lab.stop(old_lab.NEW_VERSION, **settings())


def unchanged_deployment(name):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                    {"name": "main", "image": PAUSE, "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}


def test_on_1_36_an_unchanged_nvidia_gpu_pod_is_allocated_a_dra_device(new_cluster):
    api = config.new_client_from_config(new_cluster)
    core, apps, custom = client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)
    env = {"KUBECONFIG": new_cluster}
    ns = "it-extended-" + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": ns}})
    # before NVIDIA's class exists: the server keeps the field, but nothing serves nvidia.com/gpu
    none_yet = run_module("dra.gpu.gpu_workload_migrate", {"namespace": ns, "name": "llm",
                                                           "method": "extended_resource"}, env=env)
    assert none_yet.get("failed") and "keeps extendedResourceName, but no DeviceClass names nvidia.com/gpu" \
        in none_yet["msg"], none_yet
    custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", NVIDIA_GPU_CLASS)
    try:
        wait_for_object(core.list_service_account_for_all_namespaces, lambda sa: sa["metadata"]["name"] == "default",
                        "the default service account in " + ns, timeout=30, field_selector="metadata.namespace=" + ns)
        apps.create_namespaced_deployment(ns, unchanged_deployment("llm"))
        pod = wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Running",
                              "the unchanged pod Running", timeout=90, namespace=ns, label_selector="app=llm")
        # no node offers nvidia.com/gpu: the scheduler made a claim of gpu.nvidia.com for it
        made = pod["status"]["extendedResourceClaimStatus"]
        assert made["requestMappings"][0]["resourceName"] == "nvidia.com/gpu"
        claim = custom.get_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims",
                                                    made["resourceClaimName"])
        result = claim["status"]["allocation"]["devices"]["results"]
        assert [(r["driver"], r["pool"]) for r in result] == [("gpu.nvidia.com", pod["spec"]["nodeName"])]
        assert apps.read_namespaced_deployment("llm", ns).spec.template.spec.containers[0].resources.limits == {
            "nvidia.com/gpu": "1"}

        served = run_module("dra.gpu.gpu_workload_migrate", {"namespace": ns, "name": "llm",
                                                             "method": "extended_resource"}, env=env)
        assert not served.get("failed"), served["msg"]
        assert not served["changed"] and served["status"] == "extended-resource"
        assert served["extended_resource"] == {"available": True, "device_class": "gpu.nvidia.com",
                                               "reason": served["extended_resource"]["reason"]}
        assert served["pods"] == [{"name": pod["metadata"]["name"], "node": pod["spec"]["nodeName"],
                                   "phase": "Running", "claim": made["resourceClaimName"]}]
        assert "1 of 1 pods on a claim the scheduler made" in served["message"]
        # the claim path is still offered, and reports the other one
        claim_path = run_module("dra.gpu.gpu_workload_migrate", {"namespace": ns, "name": "llm"}, check_mode=True,
                                env=env)
        assert claim_path["changed"] and claim_path["extended_resource"]["available"] is True, claim_path
    finally:
        custom.delete_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", "gpu.nvidia.com")
        core.delete_namespace(ns)


def test_on_1_35_the_module_says_the_path_is_not_available_and_why(api, namespace):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment(namespace, unchanged_deployment("llm"))
    refused = run_module("dra.gpu.gpu_workload_migrate", {"namespace": namespace, "name": "llm",
                                                          "method": "extended_resource"})
    assert refused.get("failed") and not refused["changed"], refused
    assert "the extended-resource path is not available: this API server (v1.35.4) does not keep a DeviceClass's " \
           "spec.extendedResourceName" in refused["msg"]
    assert "Nothing was changed" in refused["msg"] and refused["extended_resource"]["available"] is False
    # nothing was written: the probe class was a dry run
    assert "dra-gpu-extended-resource-probe" not in [
        c["metadata"]["name"] for c in client.CustomObjectsApi(api).list_cluster_custom_object(
            "resource.k8s.io", "v1", "deviceclasses")["items"]]
    assert apps.read_namespaced_deployment("llm", namespace).spec.template.spec.containers[0].resources.limits == {
        "nvidia.com/gpu": "1"}
