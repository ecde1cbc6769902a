"""ResourceSlices, claims and DeviceClasses as the API returns them, and gpu_fit's plan over them,
for the tests of gpu_fit and the files it plans with (fit_greedy, fit_memory_shares)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.sharing import gpu_fit


def gpu(name, product, memory="24Gi"):
    return {"name": name, "attributes": {"type": {"string": "gpu"}, "productName": {"string": product}},
            "capacity": {"memory": {"value": memory}}}


def mig(name, profile, memory, product="NVIDIA A100-SXM4-80GB"):
    return {"name": name, "attributes": {"type": {"string": "mig"}, "profile": {"string": profile},
                                         "productName": {"string": product}},
            "capacity": {"memory": {"value": memory}}}


def make_slice(node, devices, generation=1, count=1, name=None, driver="gpu.nvidia.com"):
    return {"metadata": {"name": name or "%s-%d" % (node, generation)}, "spec": {
        "driver": driver, "nodeName": node,
        "pool": {"name": node, "generation": generation, "resourceSliceCount": count},
        "devices": devices}}


def claim(name, node, device, driver="gpu.nvidia.com"):
    return {"metadata": {"namespace": "ns", "name": name}, "status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": driver, "pool": node, "device": device}]}}}}


def seed_slices():
    """2 A10 on node-a, 4 L4 on node-b, all 24Gi."""
    return [make_slice("node-a", [gpu("gpu-%d" % i, "NVIDIA A10") for i in range(2)]),
            make_slice("node-b", [gpu("gpu-%d" % i, "NVIDIA L4") for i in range(4)])]


def fit(slices, workloads, claims=None, nodes=None):
    return gpu_fit.from_slices(slices, claims or [], workloads, nodes=nodes)


def totals(result):
    return {name: result["strategies"][name]["total"] for name in ("whole_gpu", "shared", "mig")}


def left_over(result, strategy):
    return [(u["workload"], u["replicas"]) for u in result["unplaced"][strategy]]


def shared_gpu(name, product, whole, mode="memory"):
    """A GPU as the 0.5.0 plugin publishes it with ConsumableShares (consumable_shares.go, main)."""
    if mode == "memory":
        policy = {"default": whole, "validRange": {"min": "1Mi", "max": whole, "step": "1Mi"}}
    else:
        policy = {"default": "0", "validRange": {"min": "0", "max": whole, "step": "1Mi"}}
    capacity = {"memory": {"value": whole, "requestPolicy": policy}}
    if mode not in ("memory", "unlimited"):
        capacity["shares"] = {"value": mode, "requestPolicy": {
            "default": "1", "validRange": {"min": "1", "max": mode, "step": "1"}}}
    return {"name": name, "allowMultipleAllocations": True, "capacity": capacity,
            "attributes": {"type": {"string": "gpu"}, "productName": {"string": product}}}


def shared_slices(mode="memory"):
    """The lab's seed cluster: 2 A10 (23028Mi) on node-a; 4 L4 (23034Mi) on node-b, listed
    gpu-3 first as the simulator lists them, so slice order and name order differ."""
    return [make_slice("node-a", [shared_gpu("gpu-%d" % i, "NVIDIA A10", "23028Mi", mode) for i in range(2)]),
            make_slice("node-b", [shared_gpu("gpu-%d" % i, "NVIDIA L4", "23034Mi", mode) for i in (3, 2, 1, 0)])]


def device_class(name, expression):
    return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expression}}]}}


GPU_CLASS = device_class("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && "
                                           "device.attributes['gpu.nvidia.com'].type == 'gpu'")
L4_CLASS = device_class("l4", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'")


def shares_fit(workloads, claims=None, slices=None, classes=(GPU_CLASS, L4_CLASS)):
    return gpu_fit.from_slices(slices or shared_slices(), claims or [], workloads, device_classes=list(classes))


def per_device(result):
    counts = {}
    for entry in result["strategies"]["memory_shares"]["placements"]:
        key = "%s/%s" % (entry["node"], entry["device"])
        counts[key] = counts.get(key, 0) + entry["replicas"]
    return counts
