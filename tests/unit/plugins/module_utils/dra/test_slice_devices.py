from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices


def make_slice(name, pool, generation, count, devices, driver="gpu.nvidia.com", node=None):
    return {"metadata": {"name": name}, "spec": {
        "driver": driver, "nodeName": node or pool,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": [{"name": d, "attributes": {"productName": {"string": "NVIDIA L4"}, "type": {"string": "gpu"},
                                               "resource.kubernetes.io/numaNode": {"int": 1}},
                     "capacity": {"memory": {"value": "24Gi"}}} for d in devices]}}


def test_only_the_newest_complete_generation_counts():
    slices = [make_slice("a1", "node-a", 1, 1, ["gpu-0"]),
              make_slice("a2", "node-a", 2, 1, ["gpu-0", "gpu-1"]),
              make_slice("b1", "node-b", 3, 2, ["gpu-0"])]
    usable, problems = slice_devices.usable_pools(slices)
    assert [s["metadata"]["name"] for s in usable] == ["a2"]
    assert problems == [{"driver": "gpu.nvidia.com", "pool": "node-b", "generation": 3,
                         "reason": "incomplete: 1 of 2 slices published"}]


def test_a_pool_with_duplicate_device_names_is_invalid():
    slices = [make_slice("x1", "p", 1, 2, ["gpu-0"]), make_slice("x2", "p", 1, 2, ["gpu-0"])]
    usable, problems = slice_devices.usable_pools(slices)
    assert usable == [] and "duplicate" in problems[0]["reason"]


def test_devices_are_flattened_and_allocations_attached():
    slices = [make_slice("a", "node-a", 1, 1, ["gpu-10", "gpu-2", "gpu-1"])]
    result = {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-2"}
    claims = [{"metadata": {"namespace": "ns", "name": "c"},
               "status": {"allocation": {"devices": {"results": [result]}},
                          "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}}]
    devices, _problems = slice_devices.devices_from_slices(slices, claims)
    assert [d["name"] for d in devices] == ["gpu-1", "gpu-2", "gpu-10"]
    held = devices[1]
    assert held["allocated"] and held["claim"] == "ns/c" and held["pods"] == ["ns/p"]
    assert held["attributes"] == {"productName": "NVIDIA L4", "type": "gpu", "resource.kubernetes.io/numaNode": 1}
    assert held["capacity"] == {"memory": "24Gi"}


def test_summary_counts_per_node_driver_and_model():
    slices = [make_slice("a", "node-a", 1, 1, ["gpu-0", "gpu-1"]), make_slice("b", "node-b", 1, 1, ["gpu-0"])]
    claims = [{"metadata": {"namespace": "n", "name": "c"}, "status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-0"}]}}}}]
    devices, _problems = slice_devices.devices_from_slices(slices, claims)
    summary = slice_devices.summarize(devices)
    assert summary["total"] == {"count": 3, "allocated": 1, "free": 2, "tainted": 0, "memory_bytes": 3 * 24 * 2 ** 30,
                                "memory": "72Gi"}
    assert summary["by_node"]["node-b"]["allocated"] == 1
    assert summary["by_model"]["NVIDIA L4"]["count"] == 3
    assert summary["by_driver"]["gpu.nvidia.com"]["free"] == 2


def test_a_device_tainted_by_its_driver_or_a_rule_is_counted_tainted_not_free():
    slices = [make_slice("a", "node-a", 1, 1, ["gpu-0", "gpu-1", "gpu-2"])]
    slices[0]["spec"]["devices"][0]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule",
                                                  "timeAdded": "2026-12-06T20:00:00Z"}]
    slices[0]["spec"]["devices"][2]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "13", "effect": "None"}]
    rules = [{"metadata": {"name": "dra-gpu-maintenance-node-a-gpu-1"},
              "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-1"},
                       "taint": {"key": "dra.gpu/maintenance", "effect": "NoExecute"}}},
             {"metadata": {"name": "elsewhere"},
              "spec": {"deviceSelector": {"pool": "node-z"}, "taint": {"key": "x", "effect": "NoSchedule"}}}]
    devices, _problems = slice_devices.devices_from_slices(slices, [], rules)
    assert [d["tainted"] for d in devices] == [True, True, False]
    assert devices[0]["taints"] == [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule",
                                     "time_added": "2026-12-06T20:00:00Z", "rule": None}]
    assert devices[1]["taints"] == [{"key": "dra.gpu/maintenance", "value": "", "effect": "NoExecute",
                                     "time_added": None, "rule": "dra-gpu-maintenance-node-a-gpu-1"}]
    summary = slice_devices.summarize(devices)["total"]
    assert (summary["free"], summary["tainted"]) == (1, 2)
    entries, _problems = slice_devices.selected_devices(slices)
    assert slice_devices.summarize_raw(entries, [], rules)["total"] == summary


def test_filters():
    slices = [make_slice("a", "node-a", 1, 1, ["gpu-0"]), make_slice("b", "node-b", 1, 1, ["gpu-0"], driver="x.io")]
    devices, _problems = slice_devices.devices_from_slices(slices)
    assert [d["node"] for d in slice_devices.filter_devices(devices, driver="x.io")] == ["node-b"]
    assert [d["node"] for d in slice_devices.filter_devices(devices, nodes=["node-a"])] == ["node-a"]
    assert slice_devices.filter_devices(devices, nodes=[]) == []
    assert [d["pool"] for d in slice_devices.filter_devices(devices, pool="node-b")] == ["node-b"]


def test_natural_order_and_its_cache():
    assert sorted(["gpu-10", "gpu-2", "gpu-1", "gpu-1a", ""], key=slice_devices._natural) == \
        ["", "gpu-1", "gpu-1a", "gpu-2", "gpu-10"]
    assert slice_devices._natural("gpu-7") is slice_devices._natural("gpu-7")


def test_memory_bytes_is_kept_per_value():
    assert slice_devices.memory_bytes("23034Mi") == 23034 * 2 ** 20
    assert slice_devices.memory_bytes(None) == 0 and slice_devices.memory_bytes("lots") == 0
    assert slice_devices._MEMORY_BYTES["lots"] == 0
