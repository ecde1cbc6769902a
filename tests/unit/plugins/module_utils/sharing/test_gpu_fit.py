from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.inputs.inputs import InputError
from ansible_collections.dra.gpu.plugins.module_utils.sharing import gpu_fit
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.sharing.fit_fakes import (
    device_class, fit, gpu, left_over, make_slice, seed_slices, shares_fit, totals)


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


def test_a_model_does_not_match_a_longer_model_number():
    slices = [make_slice("node-c", [gpu("gpu-0", "NVIDIA A100-SXM4-80GB", "80Gi"),
                                    gpu("gpu-1", "NVIDIA L40S", "48Gi"), gpu("gpu-2", "NVIDIA A10G")])]
    result = fit(slices, [{"name": "a10", "memory": "1Gi", "replicas": 3, "model": "A10"},
                          {"name": "l4", "memory": "1Gi", "model": "L4"},
                          {"name": "a100", "memory": "1Gi", "model": "a100"}])
    assert [(w["name"], w["whole_gpu"]) for w in result["workloads"]] == [("a10", 1), ("l4", 0), ("a100", 1)]
    assert result["strategies"]["whole_gpu"]["placements"][0]["device"] == "gpu-2"


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
