"""dra.gpu.resource_slice_info and dra.gpu.resource_slice_wait against the lab."""

import time

from conftest import DRIVER_NAMESPACE, RESOURCE, driver_slice as _slice, hold_a_gpu, run_module, wait_in_thread


def test_info_lists_every_gpu_with_a_summary(plugin_everywhere):
    result = run_module("dra.gpu.resource_slice_info", {"driver": "gpu.nvidia.com"})
    summary = result["summary"]
    assert summary["by_node"]["node-a"]["count"] == 2 and summary["by_node"]["node-b"]["count"] == 4
    # NVML's totals as NVIDIA's driver publishes them (23034Mi per L4, 23028Mi per A10), not 24Gi
    assert summary["by_model"]["NVIDIA L4"]["memory"] == "92136Mi"
    assert summary["total"]["count"] == 6 and summary["total"]["memory"] == "138192Mi"
    device = result["devices"][0]
    assert device["node"] == "node-a" and device["name"] == "gpu-0" and device["pool"] == "node-a"
    assert device["attributes"]["productName"] == "NVIDIA A10"
    assert device["attributes"]["resource.kubernetes.io/pciBusID"].startswith("0000:")
    assert device["capacity"]["memory"] == "23028Mi"


def test_info_filters(plugin_everywhere):
    by_selector = run_module("dra.gpu.resource_slice_info", {"node_selector": "nvidia.com/gpu.product=NVIDIA-L4"})
    assert {d["node"] for d in by_selector["devices"]} == {"node-b"}
    by_pool = run_module("dra.gpu.resource_slice_info", {"pool": "node-a", "driver": "gpu.nvidia.com"})
    assert [d["name"] for d in by_pool["devices"]] == ["gpu-0", "gpu-1"]
    by_nodes = run_module("dra.gpu.resource_slice_info", {"nodes": ["node-b"], "driver": "no.such.driver"})
    assert by_nodes["devices"] == [] and by_nodes["summary"]["total"]["count"] == 0


def test_info_shows_which_claim_and_pod_hold_a_device(plugin_everywhere, gpu_class, core, custom, namespace):
    hold_a_gpu(core, custom, namespace, gpu_class)
    result = run_module("dra.gpu.resource_slice_info", {"driver": "gpu.nvidia.com"})
    held = [d for d in result["devices"] if d["claim"] == namespace + "/held"]
    assert len(held) == 1 and held[0]["allocated"] and held[0]["pods"] == [namespace + "/holder"]
    assert result["summary"]["total"]["allocated"] >= 1


def test_info_counts_only_complete_newest_pool_generations(custom, test_driver):
    custom.create_cluster_custom_object(*RESOURCE, _slice(test_driver, "p1", "node-a", 1, 1, ("old-0",)))
    custom.create_cluster_custom_object(*RESOURCE, _slice(test_driver, "p1", "node-a", 2, 2, ("new-0",)))
    half = run_module("dra.gpu.resource_slice_info", {"driver": test_driver})
    assert half["devices"] == []
    assert half["ignored_pools"][0]["pool"] == "p1" and "1 of 2" in half["ignored_pools"][0]["reason"]
    custom.create_cluster_custom_object(*RESOURCE, _slice(test_driver, "p1", "node-a", 2, 2, ("new-1",)))
    full = run_module("dra.gpu.resource_slice_info", {"driver": test_driver})
    assert sorted(d["name"] for d in full["devices"]) == ["new-0", "new-1"] and full["ignored_pools"] == []


def test_wait_returns_within_a_second_of_the_slice_appearing(api, custom, test_driver):
    thread, outcome = wait_in_thread(api, test_driver, min_devices=2)
    time.sleep(1.0)  # let the wait reach its watch; the measured interval starts after this
    assert "done" not in outcome, "the wait must not finish before the slices exist"
    custom.create_cluster_custom_object(*RESOURCE, _slice(test_driver, "p", "node-a", devices=("d0", "d1")))
    published = time.monotonic()
    thread.join(30)
    assert "error" not in outcome, outcome.get("error")
    latency = outcome["done"] - published
    assert latency < 1.0, "returned %.2fs after the slice appeared" % latency
    assert outcome["result"]["summary"]["total"]["count"] == 2


def test_wait_module_succeeds_per_node(plugin_everywhere):
    result = run_module("dra.gpu.resource_slice_wait", {
        "driver": "gpu.nvidia.com", "node_selector": "nvidia.com/gpu.present=true", "min_devices_per_node": 2,
        "selector": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16Gi')) >= 0", "timeout": 30})
    assert not result.get("failed"), result.get("msg")
    assert set(result["summary"]["by_node"]) == {"node-a", "node-b"} and result["elapsed"] < 5


def test_wait_module_timeout_explains_what_is_missing(plugin_everywhere):
    result = run_module("dra.gpu.resource_slice_wait", {
        "driver": "gpu.nvidia.com", "nodes": ["node-a", "node-b"], "min_devices_per_node": 3, "timeout": 2,
        "driver_namespace": DRIVER_NAMESPACE})
    assert result["failed"]
    assert "node-a (2 of 3)" in result["msg"] and "node-b" not in result["msg"].split("short of devices:")[1][:40]
    assert "drivers that did publish: gpu.nvidia.com" in result["msg"]
    assert result["plugin_pods"] and all(p["phase"] == "Running" for p in result["plugin_pods"])


def test_wait_module_names_a_missing_driver_install(plugin_everywhere):
    result = run_module("dra.gpu.resource_slice_wait", {
        "driver": "gpu.example.com", "min_devices": 1, "timeout": 1, "driver_namespace": "nowhere"})
    assert result["failed"]
    assert "no kubelet-plugin pod" in result["msg"] and "nowhere" in result["msg"]
