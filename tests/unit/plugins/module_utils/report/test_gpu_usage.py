"""gpu_usage: the answer put together and totalled (per namespace, per node and model, free per
DeviceClass), every GPU node listed, and notes on what the answer leaves out, from API-shaped lists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.report.usage_api_lists import (
    CLASSES, claim, device_class, node, pod, run)


def test_a_shared_claim_is_one_device_held_by_two_pods():
    pods = [pod("team-b", "infer-%d" % i, owner=("StatefulSet", "infer")) for i in range(2)]
    claims = [claim("team-b", "one-gpu", [("node-b", "gpu-0")], ["infer-0", "infer-1"])]
    result = run(claims, pods)
    entry = result["claims"][0]
    assert entry["shared"] is True and entry["state"] == "in_use" and len(entry["pods"]) == 2
    assert result["summary"]["allocated"] == 1 and result["summary"]["pods"] == 2
    assert result["by_namespace"] == [{"namespace": "team-b", "claims": 1, "devices": 1, "pods": 2,
                                       "idle_claims": 0, "idle_devices": 0}]
    b = [n for n in result["nodes"] if n["name"] == "node-b"][0]
    assert b["totals"] == {"devices": 2, "in_use": 1, "idle": 0, "free": 1, "tainted": 0}


def test_free_per_class_uses_the_class_selectors_and_leaves_what_it_cannot_evaluate_unguessed():
    classes = CLASSES + [device_class("odd", "device.vendor == 'x'")]
    claims = [claim("team-a", "c", [("node-a", "gpu-0")], ["p"])]
    result = run(claims, [pod("team-a", "p")], classes=classes)
    free = dict((c["class"], c) for c in result["free_by_class"])
    assert (free["gpu.nvidia.com"]["total"], free["gpu.nvidia.com"]["free"]) == (6, 5)
    assert free["gpu.nvidia.com"]["by_node"] == {"node-a": 3, "node-b": 2}
    assert (free["a10"]["total"], free["a10"]["free"], free["a10"]["by_node"]) == (4, 3, {"node-a": 3})
    assert free["odd"]["previewable"] is False and free["odd"]["free"] is None and free["odd"]["reason"]


def test_nodes_are_every_node_with_devices_and_every_gpu_node_without():
    result = run([], [], nodes=[node("node-a"), node("node-b"), node("node-c"), node("cpu-1", gpu_label=False),
                                node("node-d", label="feature.node.kubernetes.io/pci-10de.present")])
    assert [n["name"] for n in result["nodes"]] == ["node-a", "node-b", "node-c", "node-d"]
    assert result["nodes"][2]["devices"] == [] and result["nodes"][2]["ready"] is True
    assert any("node-c" in note for note in result["notes"])
    assert result["summary"]["line"] == "6 devices on 2 nodes: 0 in use, 0 idle (allocated, no running pod), 6 free"
    assert result["by_node_model"] == [
        {"node": "node-a", "model": "NVIDIA A10", "devices": 4, "allocated": 0, "free": 4, "tainted": 0},
        {"node": "node-b", "model": "NVIDIA L4", "devices": 2, "allocated": 0, "free": 2, "tainted": 0}]


def test_claims_of_other_drivers_and_devices_no_slice_lists():
    other = claim("ml", "nic", [("node-a", "eth0")])
    other["status"]["allocation"]["devices"]["results"][0]["driver"] = "nic.example.com"
    stale = claim("ml", "stale", [("node-z", "gpu-9")], ["p"])
    result = run([other, stale], [pod("ml", "p")])
    assert [c["name"] for c in result["claims"]] == ["stale"]
    assert any("ml/stale holds devices" in note for note in result["notes"])
    assert result["summary"]["allocated"] == 0
