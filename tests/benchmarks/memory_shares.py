"""gpu_fit's memory_shares plan over 1,000 nodes x 8 GPUs (no cluster: the lists as the API
returns them, built here, shaped as NVIDIA's driver 0.5.0 publishes GPUs in ConsumableShares
``memory`` mode): the whole plan, and the plan with the node-order check (two more placements,
nodes reversed and spread) left out, side by side; and the share arithmetic alone (what the
allocator does per device). Run alone (python tests/benchmarks/memory_shares.py) or by run.py
(--only shares)."""

import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

from ansible_collections.dra.gpu.plugins.module_utils.sharing import fit_memory_shares, gpu_fit  # noqa: E402

DRIVER = "gpu.nvidia.com"
CLASSES = [("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"),
           ("l4", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'")]
# The three mixes, scaled to the fleet. The first and third fill every device they can use;
# in the second the 10Gi replicas leave room on many nodes, so where the scheduler puts them
# decides how many 8Gi and 4Gi replicas fit after them (the plan names those workloads).
MIXES = {
    "4Gi_x45000": [{"name": "inference", "memory": "4Gi", "replicas": 45000}],
    "10Gi_8Gi_4Gi": [{"name": "big", "memory": "10Gi", "replicas": 12000},
                     {"name": "mid", "memory": "8Gi", "replicas": 3000},
                     {"name": "small", "memory": "4Gi", "replicas": 6000}],
    "l4_class_8Gi_x9000": [{"name": "l4-only", "memory": "8Gi", "replicas": 9000, "device_class": "l4"}],
}


def gpu(node, index, product, whole):
    return {"name": "gpu-%d" % index, "allowMultipleAllocations": True, "attributes": {
        "type": {"string": "gpu"}, "productName": {"string": product},
        "uuid": {"string": "GPU-%04d-%d" % (node, index)}, "pciBusID": {"string": "0000:%02x:00.0" % index}},
        "capacity": {"memory": {"value": whole, "requestPolicy": {
            "default": whole, "validRange": {"min": "1Mi", "max": whole, "step": "1Mi"}}}}}


def fleet(nodes=1000, gpus=8):
    """Half the nodes A10s (23028Mi), half L4s (23034Mi); every tenth node's first GPU holds an 8Gi share."""
    slices, claims = [], []
    for n in range(nodes):
        name = "node-%04d" % n
        product, whole = ("NVIDIA A10", "23028Mi") if n % 2 == 0 else ("NVIDIA L4", "23034Mi")
        slices.append({"metadata": {"name": "00000-%s-%s" % (DRIVER, name)}, "spec": {
            "driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": [gpu(n, i, product, whole) for i in range(gpus)]}})
        if n % 10 == 0:
            claims.append({"metadata": {"namespace": "team", "name": "held-%d" % n}, "status": {"allocation": {
                "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": name, "device": "gpu-0",
                                         "shareID": "share-%d" % n, "consumedCapacity": {"memory": "8Gi"}}]}}}})
    classes = [{"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": e}}]}}
               for name, e in CLASSES]
    return slices, claims, classes


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def run(runs=3):
    slices, claims, classes = fleet()
    results = {"devices": sum(len(s["spec"]["devices"]) for s in slices)}
    orders = fit_memory_shares.NODE_ORDERS
    for mix, workloads in MIXES.items():
        times = {"plan": [], "plan_without_node_order_check": []}
        for _run in range(runs):
            seconds, plan = _timed(lambda: gpu_fit.from_slices(slices, claims, workloads, DRIVER, None, classes))
            times["plan"].append(seconds)
            fit_memory_shares.NODE_ORDERS = orders[:1]
            try:
                seconds, alone = _timed(lambda: gpu_fit.from_slices(slices, claims, workloads, DRIVER, None, classes))
            finally:
                fit_memory_shares.NODE_ORDERS = orders
            times["plan_without_node_order_check"].append(seconds)
            assert alone["workloads"] == plan["workloads"]
        entry = dict((name, round(statistics.median(values), 3)) for name, values in times.items())
        entry["ratio_plan_over_without_check"] = round(entry["plan"] / entry["plan_without_node_order_check"], 2)
        entry["placed"] = dict((row["name"], row["memory_shares"]) for row in plan["workloads"])
        entry["depends_on_node_choice"] = plan["strategies"]["memory_shares"]["depends_on_node_choice"]
        results[mix] = entry
    return results


if __name__ == "__main__":
    import json
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 3), indent=2))
