"""API-shaped lists (ResourceSlices, ResourceClaims, Pods, Nodes, DeviceClasses) for the tests of
gpu_usage, usage_claims and usage_devices, and ``run``: gpu_usage.usage() over them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.dra.gpu.plugins.module_utils.report import gpu_usage
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import human_bytes

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


def human(mebibytes):
    return human_bytes(mebibytes * 2 ** 20)
