from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.sharing.fit_fakes import (
    claim, fit, gpu, make_slice, mig, seed_slices, totals)
from ansible_collections.dra.gpu.plugins.module_utils.sharing import gpu_fit


def test_the_last_shared_gpu_gets_the_remainder_and_its_own_thread_percentage():
    result = fit(seed_slices(), [{"name": "w", "memory": "4Gi", "replicas": 8}])
    placements = result["strategies"]["shared"]["placements"]
    assert [(p["device"], p["replicas"], p["mps_config"]["defaultActiveThreadPercentage"]) for p in placements] == \
        [("gpu-0", 6, 16), ("gpu-1", 2, 50)]
    assert result["unplaced"]["shared"] == []
    assert result["strategies"]["shared"]["by_node"] == {"node-a": 8, "node-b": 0}


def test_a_workload_larger_than_any_gpu():
    result = fit(seed_slices(), [{"name": "big", "memory": "48Gi", "replicas": 2}])
    assert totals(result) == {"whole_gpu": 0, "shared": 0, "mig": 0}
    assert result["unplaced"]["whole_gpu"] == [{"workload": "big", "replicas": 2, "requested": 2,
                                                "reason": "needs 48Gi, the largest free GPU has 24Gi"}]
    assert result["unplaced"]["shared"][0]["reason"] == "needs 48Gi, the largest free GPU has 24Gi"


def test_memory_is_compared_exactly_not_by_the_marketing_name():
    # An L4 publishes 23034Mi: a 24Gi replica does not fit, a 22Gi one does.
    slices = [make_slice("node-b", [gpu("gpu-0", "NVIDIA L4", "23034Mi")])]
    result = fit(slices, [{"name": "a", "memory": "24Gi"}, {"name": "b", "memory": "22Gi"}])
    assert result["workloads"][0]["whole_gpu"] == 0 and result["workloads"][1]["whole_gpu"] == 1
    assert result["unplaced"]["whole_gpu"][0]["reason"] == "needs 24Gi, the largest free GPU has 23034Mi"


def test_model_filter():
    result = fit(seed_slices(), [{"name": "w", "memory": "4Gi", "replicas": 40, "model": "l4"}])
    assert totals(result) == {"whole_gpu": 4, "shared": 24, "mig": 0}
    assert result["strategies"]["whole_gpu"]["by_node"] == {"node-a": 0, "node-b": 4}
    assert result["unplaced"]["whole_gpu"][0]["reason"] == \
        "36 of 40 replicas left over: all 4 free GPUs of model l4 with 4Gi or more are full"
    missing = fit(seed_slices(), [{"name": "w", "memory": "4Gi", "model": "H100"}])
    assert missing["unplaced"]["whole_gpu"][0]["reason"] == \
        "no GPU of model H100 (published: NVIDIA A10, NVIDIA L4)"


def test_allocated_devices_are_not_free():
    claims = [claim("c1", "node-b", "gpu-0"), claim("c2", "node-b", "gpu-3")]
    result = fit(seed_slices(), [{"name": "w", "memory": "4Gi", "replicas": 40}], claims)
    assert totals(result) == {"whole_gpu": 4, "shared": 24, "mig": 0}
    assert result["strategies"]["whole_gpu"]["by_node"] == {"node-a": 2, "node-b": 2}
    assert [p["device"] for p in result["strategies"]["whole_gpu"]["placements"] if p["node"] == "node-b"] == \
        ["gpu-1", "gpu-2"]
    assert result["inventory"]["gpu"] == {"count": 6, "free": 4}
    every = [claim("c%d" % i, "node-b", "gpu-%d" % i) for i in range(4)]
    held = fit(seed_slices(), [{"name": "w", "memory": "4Gi", "model": "L4"}], every)
    assert held["unplaced"]["shared"][0]["reason"] == "all 4 GPUs of model L4 are allocated to claims"


def test_tainted_devices_are_not_free_in_any_strategy():
    """A health taint in the slice (NoSchedule) and a DeviceTaintRule (NoExecute) each take a GPU out;
    a taint with effect None does not."""
    slices = seed_slices()
    slices[1]["spec"]["devices"][0]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    slices[1]["spec"]["devices"][1]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "13", "effect": "None"}]
    rules = [{"metadata": {"name": "dra-gpu-maintenance-node-b-gpu-3"},
              "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-3"},
                       "taint": {"key": "dra.gpu/maintenance", "effect": "NoExecute"}}}]
    result = gpu_fit.from_slices(slices, [], [{"name": "w", "memory": "4Gi", "replicas": 40}], rules=rules)
    assert totals(result) == {"whole_gpu": 4, "shared": 24, "mig": 0}
    assert [p["device"] for p in result["strategies"]["whole_gpu"]["placements"] if p["node"] == "node-b"] == \
        ["gpu-1", "gpu-2"]
    assert result["inventory"]["gpu"] == {"count": 6, "free": 4}


def test_mig_devices_smallest_fitting_profile_first():
    slices = [make_slice("node-m", [mig("mig-0", "3g.40gb", "40192Mi"), mig("mig-1", "1g.10gb", "9856Mi"),
                                    mig("mig-2", "2g.20gb", "19968Mi"), mig("mig-3", "1g.20gb", "19968Mi")])]
    result = fit(slices, [{"name": "a", "memory": "16Gi"}, {"name": "b", "memory": "8Gi", "replicas": 3},
                          {"name": "c", "memory": "10Gi"}])
    placements = result["strategies"]["mig"]["placements"]
    assert [(p["workload"], p["profile"]) for p in placements] == \
        [("a", "1g.20gb"), ("b", "1g.10gb"), ("b", "2g.20gb"), ("b", "3g.40gb")]
    assert result["strategies"]["mig"]["by_node"] == {"node-m": 4}
    assert result["unplaced"]["mig"] == [{"workload": "c", "replicas": 1, "requested": 1,
                                          "reason": "1 of 1 replicas left over: all 3 free MIG devices with 10Gi "
                                                    "or more are full (earlier workloads hold a, b)"}]
    # MIG devices are not whole GPUs.
    assert result["strategies"]["whole_gpu"]["total"] == 0
    too_big = fit(slices, [{"name": "d", "memory": "48Gi"}])
    assert too_big["unplaced"]["mig"][0]["reason"] == "needs 48Gi, the largest free MIG device has 40192Mi (3g.40gb)"


def test_workloads_are_placed_in_order_on_the_smallest_gpu_that_fits():
    slices = [make_slice("node-a", [gpu("gpu-0", "NVIDIA A100", "80Gi"), gpu("gpu-1", "NVIDIA A10", "24Gi")])]
    result = fit(slices, [{"name": "small", "memory": "4Gi"}, {"name": "big", "memory": "40Gi"},
                          {"name": "late", "memory": "4Gi"}])
    assert [(p["workload"], p["device"]) for p in result["strategies"]["whole_gpu"]["placements"]] == \
        [("small", "gpu-1"), ("big", "gpu-0")]
    assert result["unplaced"]["whole_gpu"][0]["reason"] == \
        "1 of 1 replicas left over: all 2 free GPUs with 4Gi or more are full (earlier workloads hold small, big)"
