from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.sharing import gpu_fit
from ansible_collections.dra.gpu.plugins.module_utils.inputs.inputs import InputError


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


def test_seed_example():
    result = fit(seed_slices(), [{"name": "inference", "memory": "4Gi", "replicas": 40}])
    assert totals(result) == {"whole_gpu": 6, "shared": 36, "mig": 0}
    assert result["strategies"]["whole_gpu"]["by_node"] == {"node-a": 2, "node-b": 4}
    assert result["strategies"]["shared"]["by_node"] == {"node-a": 12, "node-b": 24}
    assert result["strategies"]["mig"]["by_node"] == {}
    assert result["strategies"]["shared"]["devices_used"] == 6
    assert left_over(result, "whole_gpu") == [("inference", 34)]
    assert left_over(result, "shared") == [("inference", 4)]
    assert left_over(result, "mig") == [("inference", 40)]
    assert result["unplaced"]["whole_gpu"][0]["reason"] == \
        "34 of 40 replicas left over: all 6 free GPUs with 4Gi or more are full"
    assert result["unplaced"]["shared"][0]["reason"] == \
        "4 of 40 replicas left over: all 6 free GPUs with 4Gi or more are full"
    assert result["unplaced"]["mig"][0]["reason"].startswith("no MIG device is published")
    # Without allowMultipleAllocations the scheduler gives each 4Gi claim a whole GPU.
    assert result["workloads"] == [{"name": "inference", "memory": "4Gi", "model": None, "device_class": None,
                                    "requested": 40, "whole_gpu": 6, "shared": 36, "mig": 0, "memory_shares": 6}]
    assert result["summary"] == "40 replicas requested: 6 fit with whole GPUs, 36 with sharing (6.0x), 0 with MIG"
    assert result["inventory"] == {"gpu": {"count": 6, "free": 6}, "mig": {"count": 0, "free": 0}}
    first = result["strategies"]["shared"]["placements"][0]
    assert first == {"workload": "inference", "node": "node-a", "pool": "node-a", "device": "gpu-0",
                     "model": "NVIDIA A10", "memory": "24Gi", "replicas": 6,
                     "mps_config": {"defaultPinnedDeviceMemoryLimit": "4Gi", "defaultActiveThreadPercentage": 16}}
    assert result["ignored_pools"] == []


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


def test_a_model_does_not_match_a_longer_model_number():
    slices = [make_slice("node-c", [gpu("gpu-0", "NVIDIA A100-SXM4-80GB", "80Gi"),
                                    gpu("gpu-1", "NVIDIA L40S", "48Gi"), gpu("gpu-2", "NVIDIA A10G")])]
    result = fit(slices, [{"name": "a10", "memory": "1Gi", "replicas": 3, "model": "A10"},
                          {"name": "l4", "memory": "1Gi", "model": "L4"},
                          {"name": "a100", "memory": "1Gi", "model": "a100"}])
    assert [(w["name"], w["whole_gpu"]) for w in result["workloads"]] == [("a10", 1), ("l4", 0), ("a100", 1)]
    assert result["strategies"]["whole_gpu"]["placements"][0]["device"] == "gpu-2"


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


def test_only_the_newest_complete_pool_generation_counts():
    slices = [make_slice("node-a", [gpu("gpu-%d" % i, "NVIDIA A10") for i in range(8)], generation=1),
              make_slice("node-a", [gpu("gpu-%d" % i, "NVIDIA A10") for i in range(2)], generation=2),
              make_slice("node-b", [gpu("gpu-0", "NVIDIA L4")], generation=3, count=2)]
    result = fit(slices, [{"name": "w", "memory": "4Gi", "replicas": 40}])
    assert totals(result) == {"whole_gpu": 2, "shared": 12, "mig": 0}
    assert result["strategies"]["whole_gpu"]["by_node"] == {"node-a": 2}
    assert result["ignored_pools"] == [{"driver": "gpu.nvidia.com", "pool": "node-b", "generation": 3,
                                        "reason": "incomplete: 1 of 2 slices published"}]


def test_nodes_and_driver_restrict_the_devices():
    slices = seed_slices() + [make_slice("node-x", [gpu("gpu-0", "Example GPU")], driver="gpu.example.com")]
    result = fit(slices, [{"name": "w", "memory": "4Gi", "replicas": 40}], nodes=["node-b"])
    assert totals(result) == {"whole_gpu": 4, "shared": 24, "mig": 0}
    assert list(result["strategies"]["shared"]["by_node"]) == ["node-b"]
    assert fit(slices, [{"name": "w", "memory": "4Gi"}])["inventory"]["gpu"]["count"] == 6


def test_plan_over_flat_devices_and_no_gpus():
    devices, _problems = slice_devices.devices_from_slices([])
    result = gpu_fit.plan(devices, [{"name": "w", "memory": "1Gi", "replicas": "3"}])
    assert totals(result) == {"whole_gpu": 0, "shared": 0, "mig": 0}
    assert result["unplaced"]["whole_gpu"][0] == {"workload": "w", "replicas": 3, "requested": 3,
                                                  "reason": "no GPU is published on the selected nodes"}
    assert result["summary"] == "3 replicas requested: 0 fit with whole GPUs, 0 with sharing, 0 with MIG"


@pytest.mark.parametrize("workloads, message", [
    ([{"name": "a", "memory": "4Gi"}, {"name": "b", "memory": "4GB"}],
     "workloads[1].memory is '4GB', which is not a Kubernetes quantity; write 4Gi or 4G"),
    ([{"name": "a", "memory": "512 mib"}],
     "workloads[0].memory is '512 mib', which is not a Kubernetes quantity; write 512Mi"),
    ([{"name": "a", "memory": "lots"}],
     "workloads[0].memory is 'lots', which is not a Kubernetes quantity; write a number with a unit, e.g. 4Gi, "
     "4096Mi or 4G"),
    ([{"name": "a", "memory": 4}],
     "workloads[0].memory is 4, which Kubernetes reads as less than 1Mi; write it with a unit, e.g. 4Gi"),
    ([{"name": "a"}], "workloads[0].memory is missing; set the GPU memory one replica needs, e.g. 4Gi (or default: "
                      "a claim with no memory request)"),
    ([{"name": "a", "memory": "4Gi", "device_class": "Bad_Class"}],
     "workloads[0].device_class is 'Bad_Class', which is not a valid DeviceClass name: use lowercase letters, digits, "
     "'-' and '.', starting and ending with a letter or digit (e.g. gpu.example.com)"),
    ([{"name": "a", "memory": "0"}],
     "workloads[0].memory is 0; a replica needs more than 0 bytes of GPU memory, e.g. 4Gi"),
    ([{"memory": "4Gi"}], "workloads[0].name is missing; give each workload a name, e.g. web"),
    ([{"name": 7, "memory": "4Gi"}], "workloads[0].name is 7; give each workload a name, e.g. web"),
    ([{"name": "a", "memory": "4Gi", "replicas": 0}],
     "workloads[0].replicas is 0; it must be at least 1 (pods of this workload)"),
    ([{"name": "a", "memory": "4Gi", "replica": 3}],
     "workloads[0] has replica, which it does not know; use name, replicas, memory, model, device_class"),
    ([{"name": "a", "memory": "4Gi", "model": ""}],
     "workloads[0].model is ''; write part of the GPU's product name, e.g. L4 or A100, or leave it out for any model"),
    ([{"name": "a", "memory": "4Gi"}, {"name": "a", "memory": "8Gi"}],
     "workloads names a more than once; each workload name must appear once (remove or rename the repeated one)"),
    (["a"], "workloads[0] is 'a'; each workload is a mapping with name, memory, and optionally replicas and model, "
            "e.g. {name: web, memory: 4Gi, replicas: 2}"),
    ([], "workloads is []; list at least one workload, e.g. [{name: web, memory: 4Gi, replicas: 2}]"),
])
def test_bad_workloads_are_refused_with_the_field_and_the_fix(workloads, message):
    with pytest.raises(InputError) as caught:
        gpu_fit.parse_workloads(workloads)
    assert str(caught.value) == message


def test_every_problem_is_reported_at_once():
    from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
    problems = inputs.collect(gpu_fit.input_checks([{"name": "a", "memory": "4GB", "replicas": -1}]))
    assert problems == ["workloads[0].replicas is -1; it must be at least 1 (pods of this workload)",
                        "workloads[0].memory is '4GB', which is not a Kubernetes quantity; write 4Gi or 4G"]


# --- memory_shares: NVIDIA's 0.5.0 ConsumableShares shapes, placed as the allocator places ---------

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


def test_memory_shares_4gi_x40_five_per_card_as_the_allocator_counts():
    result = shares_fit([{"name": "inference", "memory": "4Gi", "replicas": 40}])
    shares = result["strategies"]["memory_shares"]
    # 5 x 4096Mi = 20480Mi fits in 23028Mi; a sixth (24576Mi) does not
    assert shares["total"] == 30 and shares["by_node"] == {"node-a": 10, "node-b": 20}
    assert set(per_device(result).values()) == {5} and len(per_device(result)) == 6
    assert shares["depends_on_node_choice"] == []
    assert [p["device"] for p in shares["placements"] if p["node"] == "node-b"] == ["gpu-3", "gpu-2", "gpu-1", "gpu-0"]
    assert shares["placements"][0]["consumes"] == {"memory": "4Gi"} and shares["placements"][0]["shared"] is True
    assert result["unplaced"]["memory_shares"] == [{"workload": "inference", "replicas": 10, "requested": 40, "reason": (
        "10 of 40 replicas left over: no device has room left for one more claim of 4Gi (claims' consumedCapacity "
        "and earlier workloads)")}]
    assert result["summary"].endswith(", 30 with memory shares (the scheduler's accounting)")


def test_memory_shares_mixed_sizes_in_the_order_given():
    result = shares_fit([{"name": "big", "memory": "10Gi", "replicas": 11},
                         {"name": "mid", "memory": "8Gi", "replicas": 3},
                         {"name": "small", "memory": "4Gi", "replicas": 3}])
    rows = dict((row["name"], row["memory_shares"]) for row in result["workloads"])
    # 11 x 10Gi leave one card with 12.49Gi: one 8Gi, then 4.49Gi: one 4Gi
    assert rows == {"big": 11, "mid": 1, "small": 1}
    assert result["strategies"]["memory_shares"]["depends_on_node_choice"] == []
    assert sorted(per_device(result).values()) == [2, 2, 2, 2, 2, 3]


def test_memory_shares_a_class_that_selects_only_l4():
    result = shares_fit([{"name": "l4-only", "memory": "8Gi", "replicas": 10, "device_class": "l4"}])
    assert result["strategies"]["memory_shares"]["by_node"] == {"node-a": 0, "node-b": 8}
    assert result["strategies"]["whole_gpu"]["total"] == 4
    assert result["unplaced"]["memory_shares"][0]["replicas"] == 2
    assert "device of DeviceClass l4" in result["unplaced"]["memory_shares"][0]["reason"]


def test_memory_shares_count_what_claims_already_consumed():
    claims = [{"metadata": {"namespace": "ns", "name": "held"}, "status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-0", "shareID": "s-1",
         "consumedCapacity": {"memory": "20Gi"}},
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-3"}]}}}}]
    result = shares_fit([{"name": "inference", "memory": "4Gi", "replicas": 40}], claims=claims)
    # node-a gpu-0 keeps 2.49Gi (no 4Gi), node-b gpu-3 is taken whole by a claim without a shareID
    assert per_device(result) == {"node-a/gpu-1": 5, "node-b/gpu-2": 5, "node-b/gpu-1": 5, "node-b/gpu-0": 5}


def test_memory_shares_round_requests_up_to_the_step():
    result = shares_fit([{"name": "decimal", "memory": "10G", "replicas": 1}])
    # 10^10 bytes is 9536.74Mi: the allocator consumes 9537Mi
    assert result["strategies"]["memory_shares"]["placements"][0]["consumes"] == {"memory": "9537Mi"}
    too_big = shares_fit([{"name": "huge", "memory": "23035Mi", "replicas": 1}])
    assert too_big["strategies"]["memory_shares"]["total"] == 0
    assert "validRange.max is refused" in too_big["unplaced"]["memory_shares"][0]["reason"]


def test_memory_shares_n_mode_caps_claims_per_card():
    result = shares_fit([{"name": "tiny", "memory": "1Gi", "replicas": 40}], slices=shared_slices("3"))
    assert result["strategies"]["memory_shares"]["total"] == 18
    assert result["strategies"]["memory_shares"]["placements"][0]["consumes"] == {"memory": "1Gi", "shares": "1"}


def test_memory_shares_name_workloads_whose_count_depends_on_node_choice():
    result = shares_fit([{"name": "big", "memory": "10Gi", "replicas": 6},
                         {"name": "mid", "memory": "8Gi", "replicas": 12},
                         {"name": "small", "memory": "4Gi", "replicas": 12}])
    # Where the six 10Gi claims land decides how many cards keep 4.49Gi for a 4Gi claim.
    assert result["strategies"]["memory_shares"]["depends_on_node_choice"] == ["small"]


def test_device_class_must_exist_and_be_previewable():
    with pytest.raises(InputError) as caught:
        shares_fit([{"name": "w", "memory": "4Gi", "device_class": "missing"}])
    assert str(caught.value) == ("workloads name DeviceClass missing, which the cluster does not have; use one of: "
                                 "gpu.nvidia.com, l4")
    odd = device_class("odd", "device.attributes['gpu.nvidia.com'].productName.matches('^NVIDIA') == "
                              "unknownFunction()")
    result = shares_fit([{"name": "w", "memory": "4Gi", "device_class": "odd"}], classes=[odd])
    assert result["strategies"]["memory_shares"]["total"] == 0 and result["strategies"]["whole_gpu"]["total"] == 0
    assert result["unplaced"]["memory_shares"][0]["reason"].startswith("the selectors of DeviceClass odd")


def test_memory_shares_skip_tainted_devices_as_the_allocator_does():
    slices = shared_slices()
    slices[0]["spec"]["devices"][0]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    slices[0]["spec"]["devices"][1]["taints"] = [{"key": "gpu.nvidia.com/unmonitored", "effect": "None"}]
    result = shares_fit([{"name": "inference", "memory": "4Gi", "replicas": 40}], slices=slices)
    assert "node-a/gpu-0" not in per_device(result) and per_device(result)["node-a/gpu-1"] == 5


@pytest.mark.parametrize("mode, per_card, first_card", [
    ("memory", {1}, 1),          # the default is the whole card
    ("unlimited", {40}, 40),     # the default is nothing: every claim fits on the first card
    ("3", {3}, 3),               # memory 0, but one of the card's 3 shares each
])
def test_memory_shares_without_a_memory_request_take_the_policy_default(mode, per_card, first_card):
    result = shares_fit([{"name": "w", "memory": "default", "replicas": 40}], slices=shared_slices(mode))
    counts = per_device(result)
    assert set(counts.values()) == per_card and counts["node-a/gpu-0"] == first_card
    # the other answers give a replica without a memory request a device of its own
    assert [result["strategies"][name]["total"] for name in ("whole_gpu", "shared", "mig")] == [6, 6, 0]
    assert result["strategies"]["shared"]["placements"][0]["mps_config"] == {"defaultActiveThreadPercentage": 100}
