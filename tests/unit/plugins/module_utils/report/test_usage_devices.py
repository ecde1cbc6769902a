"""usage_devices: each device in use, idle, free or tainted, its memory shares consumed and left,
and the partitions whose shared counters are used up, from API-shaped lists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.report.usage_api_lists import (
    DRIVER, claim, device_class, gpu, human, pod, run, share, shared_gpu, slice_of)


def test_tainted_devices_are_shown_with_their_taints_counted_tainted_and_not_free_for_any_class():
    slices = [slice_of("node-a", [gpu("gpu-0"), gpu("gpu-1"), gpu("gpu-2"), gpu("gpu-3")]),
              slice_of("node-b", [gpu("gpu-0", "NVIDIA L4", "23034Mi"), gpu("gpu-1", "NVIDIA L4", "23034Mi")])]
    slices[0]["spec"]["devices"][1]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule",
                                                  "timeAdded": "2026-12-05T15:00:00Z"}]
    rules = [{"metadata": {"name": "dra-gpu-maintenance-node-a-gpu-0"},
              "spec": {"deviceSelector": {"driver": DRIVER, "pool": "node-a", "device": "gpu-0"},
                       "taint": {"key": "dra.gpu/maintenance", "effect": "NoSchedule"}}}]
    claims = [claim("team-a", "c", [("node-a", "gpu-0")], ["p"])]
    result = run(claims, [pod("team-a", "p")], slices=slices, rules=rules)
    a = dict((d["name"], d) for d in result["nodes"][0]["devices"])
    assert a["gpu-0"]["state"] == "in_use" and a["gpu-0"]["taints"][0]["rule"] == "dra-gpu-maintenance-node-a-gpu-0"
    assert a["gpu-1"]["state"] == "tainted" and a["gpu-1"]["taints"] == [{
        "key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule", "time_added": "2026-12-05T15:00:00Z",
        "rule": None}]
    assert (result["summary"]["free"], result["summary"]["tainted"]) == (4, 1)
    assert result["summary"]["line"].endswith("4 free, 1 tainted (out of service, no claim); 1 tainted device still "
                                              "in use")
    assert result["nodes"][0]["totals"]["tainted"] == 1
    free = dict((c["class"], c) for c in result["free_by_class"])
    assert (free["a10"]["total"], free["a10"]["free"]) == (4, 2)


def test_a_partition_of_a_gpu_in_use_is_not_free():
    counter_set = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}]
    uses_all = [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}]
    uses_some = [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "10Gi"}}}]
    devices = [gpu("gpu-0", "NVIDIA A100", "40Gi", counters=uses_all),
               gpu("gpu-0-mig-1g", "NVIDIA A100", "10Gi", kind="mig", counters=uses_some)]
    slices = [slice_of("node-a", devices, shared_counters=counter_set)]
    classes = [device_class("mig", "device.attributes['gpu.nvidia.com'].type == 'mig'")]
    idle = run([], [], slices=slices, classes=classes)
    assert idle["free_by_class"][0]["free"] == 1
    busy = run([claim("ml", "whole", [("node-a", "gpu-0")], ["p"])], [pod("ml", "p")], slices=slices,
               classes=classes)
    assert busy["free_by_class"][0]["free"] == 0 and busy["free_by_class"][0]["total"] == 1
    assert any("shared counters" in note for note in busy["notes"])


def test_memory_shares_of_a_device_consumed_free_and_what_still_fits_per_class():
    slices = [slice_of("node-a", [shared_gpu("gpu-0"), shared_gpu("gpu-1")]),
              slice_of("node-b", [gpu("gpu-0", "NVIDIA L4", "23034Mi")])]
    pods = [pod("ml", "a"), pod("ml", "b", phase="Pending", waiting="ContainerCreating")]
    claims = [share("ml", "a-gpu", "gpu-0", "8Gi", "11111111-aaaa", ["a"]),
              share("ml", "b-gpu", "gpu-0", "10Gi", "22222222-bbbb", ["b"])]
    result = run(claims, pods, slices=slices)
    device = result["nodes"][0]["devices"][0]
    assert (device["shareable"], device["state"], device["memory_consumed"], device["memory_free"]) == (
        True, "in_use", "18Gi", "4596Mi")
    assert [(s["name"], s["share_id"], s["consumed"], s["state"]) for s in device["shares"]] == [
        ("a-gpu", "11111111-aaaa", {"memory": "8Gi"}, "in_use"), ("b-gpu", "22222222-bbbb", {"memory": "10Gi"}, "idle")]
    assert [p["name"] for p in device["pods"]] == ["a", "b"]
    # both claims name the device; the device counts once
    assert [c["devices"] for c in result["claims"]] == [["node-a/gpu-0"], ["node-a/gpu-0"]]
    assert result["summary"]["in_use"] == 1 and result["summary"]["free"] == 2
    untouched = result["nodes"][0]["devices"][1]
    assert (untouched["state"], untouched["memory_consumed"], untouched["memory_free"]) == ("free", "0", "23028Mi")
    classes = dict((c["class"], c) for c in result["free_by_class"])
    # 4596Mi + 23028Mi on the A10s, the whole free L4 (not shareable): 23034Mi
    assert classes["gpu.nvidia.com"]["memory_free"] == human(4596 + 23028 + 23034)
    assert classes["gpu.nvidia.com"]["largest_claim"] == "23034Mi"
    assert (classes["a10"]["memory_free"], classes["a10"]["largest_claim"]) == (human(4596 + 23028), "23028Mi")


def test_a_device_taken_whole_gives_nothing_more():
    slices = [slice_of("node-a", [shared_gpu("gpu-0")])]
    claims = [claim("ml", "whole", [("node-a", "gpu-0")], ["a"])]
    result = run(claims, [pod("ml", "a")], slices=slices)
    device = result["nodes"][0]["devices"][0]
    assert (device["memory_consumed"], device["memory_free"], device["shares"]) == ("23028Mi", "0", [])
    largest = dict((c["class"], c["largest_claim"]) for c in result["free_by_class"])
    assert largest == {"a10": None, "gpu.nvidia.com": None}
