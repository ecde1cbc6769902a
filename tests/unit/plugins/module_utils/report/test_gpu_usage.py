"""gpu_usage: holders, idle allocations and free devices per class, from API-shaped lists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.report import gpu_usage

DRIVER = "gpu.nvidia.com"
NOW = datetime.datetime(2026, 12, 5, 16, 0, 0, tzinfo=datetime.timezone.utc)


def gpu(name, model="NVIDIA A10", memory="23028Mi", kind="gpu", counters=None):
    device = {"name": name, "attributes": {"type": {"string": kind}, "productName": {"string": model}},
              "capacity": {"memory": {"value": memory}}}
    if counters:
        device["consumesCounters"] = counters
    return device


def slice_of(node, devices, shared_counters=None):
    spec = {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices}
    if shared_counters:
        spec["sharedCounters"] = shared_counters
    return {"metadata": {"name": "00000-%s-%s" % (DRIVER, node)}, "spec": spec}


def node(name, gpu_label=True, label="nvidia.com/gpu.present"):
    labels = {label: "true"} if gpu_label else {}
    return {"metadata": {"name": name, "labels": labels},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def pod(namespace, name, phase="Running", node_name="node-a", owner=None, template_hash=None, scheduled=None,
        waiting=None, deleting=False, uid=None):
    meta = {"namespace": namespace, "name": name, "uid": uid or "uid-" + name, "labels": {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    if template_hash:
        meta["labels"]["pod-template-hash"] = template_hash
    if deleting:
        meta["deletionTimestamp"] = "2026-12-05T15:59:00Z"
    status = {"phase": phase, "conditions": []}
    if scheduled:
        status["conditions"].append({"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled})
    if waiting:
        status["containerStatuses"] = [{"name": "main", "state": {"waiting": {"reason": waiting}}}]
    return {"metadata": meta, "spec": {"nodeName": node_name}, "status": status}


def claim(namespace, name, devices, reserved_for=(), from_template=False, created="2026-12-05T10:00:00Z",
          managed=None):
    meta = {"namespace": namespace, "name": name, "creationTimestamp": created}
    if from_template:
        meta["ownerReferences"] = [{"kind": "Pod", "name": reserved_for[0].split("@")[0], "controller": True}]
    if managed:
        meta["managedFields"] = managed
    reserved = []
    for entry in reserved_for:
        pod_name, _sep, uid = entry.partition("@")
        reserved.append({"resource": "pods", "name": pod_name, "uid": uid or "uid-" + pod_name})
    results = [{"driver": DRIVER, "pool": pool, "device": device, "request": "gpu"} for pool, device in devices]
    return {"metadata": meta, "status": {"allocation": {"devices": {"results": results}}, "reservedFor": reserved}}


def device_class(name, *expressions):
    return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}


SLICES = [slice_of("node-a", [gpu("gpu-0"), gpu("gpu-1"), gpu("gpu-2"), gpu("gpu-3")]),
          slice_of("node-b", [gpu("gpu-0", "NVIDIA L4", "23034Mi"), gpu("gpu-1", "NVIDIA L4", "23034Mi")])]
CLASSES = [device_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && "
                                          "device.attributes['gpu.nvidia.com'].type == 'gpu'"),
           device_class("a10", "device.driver == 'gpu.nvidia.com'",
                        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'")]


def run(claims, pods, nodes=None, classes=None, slices=None, rules=()):
    return gpu_usage.usage(SLICES if slices is None else slices, claims, pods,
                           nodes or [node("node-a"), node("node-b")], CLASSES if classes is None else classes,
                           DRIVER, now=NOW, rules=rules)


def by_name(entries):
    return dict(("%s/%s" % (e["namespace"], e["name"]), e) for e in entries)


def test_a_template_claim_is_held_by_its_running_pod_and_named_after_its_deployment():
    pods = [pod("team-a", "train-7d9f8-x2x", owner=("ReplicaSet", "train-7d9f8"), template_hash="7d9f8",
                scheduled="2026-12-05T13:00:00Z")]
    claims = [claim("team-a", "train-7d9f8-x2x-gpu-abcde", [("node-a", "gpu-1")], ["train-7d9f8-x2x"],
                    from_template=True)]
    result = run(claims, pods)
    entry = result["claims"][0]
    assert entry["state"] == "in_use" and entry["shared"] is False and entry["devices"] == ["node-a/gpu-1"]
    assert entry["pods"][0]["owner"] == {"kind": "Deployment", "name": "train"}
    expected = ("2026-12-05T13:00:00Z", "pod scheduled", 3 * 3600)
    assert (entry["since"], entry["since_source"], entry["age_seconds"]) == expected
    device = result["nodes"][0]["devices"][1]
    assert device["state"] == "in_use" and device["claim"]["name"] == "train-7d9f8-x2x-gpu-abcde"
    assert result["summary"]["in_use"] == 1 and result["summary"]["free"] == 5 and result["idle"] == []


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


@pytest.mark.parametrize("the_pod, reason", [
    (pod("ml", "job-x-0", phase="Pending", waiting="ImagePullBackOff", owner=("Job", "job-x")),
     "pod ml/job-x-0 is Pending (ImagePullBackOff)"),
    (pod("ml", "job-x-0", phase="Succeeded", owner=("Job", "job-x")),
     "pod ml/job-x-0 has Succeeded and the claim is not yet released"),
    (pod("ml", "job-x-0", phase="Running", deleting=True), "pod ml/job-x-0 is Terminating"),
    (pod("ml", "job-x-0", uid="a-newer-pod"), "pod ml/job-x-0 is gone"),
])
def test_an_allocation_no_running_pod_uses_is_idle_and_says_why(the_pod, reason):
    claims = [claim("ml", "shared-gpu", [("node-a", "gpu-0")], ["job-x-0"])]
    result = run(claims, [the_pod])
    assert [c["name"] for c in result["idle"]] == ["shared-gpu"]
    assert result["idle"][0]["idle_reason"] == reason
    assert result["nodes"][0]["devices"][0]["state"] == "idle"
    assert result["summary"]["idle"] == 1 and result["summary"]["free"] == 5
    assert result["by_namespace"][0]["idle_devices"] == 1


def test_a_claim_reserved_for_nobody_is_idle_since_the_scheduler_wrote_it():
    managed = [{"manager": "kube-controller-manager", "subresource": "status", "time": "2026-12-05T09:00:00Z"},
               {"manager": "kube-scheduler", "subresource": "status", "time": "2026-12-05T11:30:00Z"}]
    result = run([claim("ml", "kept", [("node-a", "gpu-3")], managed=managed)], [])
    entry = result["idle"][0]
    assert entry["idle_reason"] == "allocated, but reserved for no pod"
    assert (entry["since"], entry["since_source"]) == ("2026-12-05T11:30:00Z", "scheduler's status write")


def test_free_per_class_uses_the_class_selectors_and_leaves_what_it_cannot_evaluate_unguessed():
    classes = CLASSES + [device_class("odd", "device.vendor == 'x'")]
    claims = [claim("team-a", "c", [("node-a", "gpu-0")], ["p"])]
    result = run(claims, [pod("team-a", "p")], classes=classes)
    free = dict((c["class"], c) for c in result["free_by_class"])
    assert (free["gpu.nvidia.com"]["total"], free["gpu.nvidia.com"]["free"]) == (6, 5)
    assert free["gpu.nvidia.com"]["by_node"] == {"node-a": 3, "node-b": 2}
    assert (free["a10"]["total"], free["a10"]["free"], free["a10"]["by_node"]) == (4, 3, {"node-a": 3})
    assert free["odd"]["previewable"] is False and free["odd"]["free"] is None and free["odd"]["reason"]


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


def test_timestamps():
    expected = datetime.datetime(2026, 12, 5, 15, 40, tzinfo=datetime.timezone.utc)
    assert gpu_usage.parse_time("2026-12-05T15:40:00Z") == expected
    assert gpu_usage.parse_time("2026-12-05T15:40:00.123456Z").minute == 40
    assert gpu_usage.parse_time("yesterday") is None and gpu_usage.parse_time(None) is None


def shared_gpu(name, model="NVIDIA A10", whole="23028Mi"):
    """A GPU as NVIDIA's 0.5.0 plugin publishes it in ConsumableShares ``memory`` mode."""
    device = gpu(name, model, whole)
    device["allowMultipleAllocations"] = True
    device["capacity"]["memory"]["requestPolicy"] = {"default": whole, "validRange": {
        "min": "1Mi", "max": whole, "step": "1Mi"}}
    return device


def share(namespace, name, device, memory, share_id, reserved_for):
    found = claim(namespace, name, [("node-a", device)], reserved_for, from_template=True)
    result = found["status"]["allocation"]["devices"]["results"][0]
    result.update(shareID=share_id, consumedCapacity={"memory": memory})
    return found


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


def human(mebibytes):
    return gpu_usage.human_bytes(mebibytes * 2 ** 20)
