"""workload_migration_share.py: a memory share's quantity checked, and whether the devices a
DeviceClass selects can give it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_share as shares


@pytest.mark.parametrize("value,words", [
    ("8 GB", "not a quantity"), ("lots", "not a quantity"), ("0", "some memory"), ("-1Gi", "some memory"),
])
def test_memory_that_is_not_a_positive_quantity_is_refused_naming_the_option(value, words):
    with pytest.raises(inputs.InputError) as refused:
        shares.check_memory("memory", value)
    assert str(refused.value).startswith("memory is ") and words in str(refused.value)


def test_memory_quantities_are_read_exactly():
    assert shares.check_memory("memory", "8Gi") == 8 * 2 ** 30 and shares.check_memory("memory", "8192Mi") == 8 * 2 ** 30


# As NVIDIA's plugin (main at 95932046, taken as 0.5.0) publishes an L4 in memory mode.
def shared_gpu(name="gpu-0", memory="23034Mi", multiple=True, policy=True):
    capacity = {"value": memory}
    if policy:
        capacity["requestPolicy"] = {"default": memory, "validRange": {"min": "1Mi", "max": memory, "step": "1Mi"}}
    device = {"name": name, "attributes": {}, "capacity": {"memory": capacity}}
    if multiple:
        device["allowMultipleAllocations"] = True
    return device


def test_a_share_is_offered_by_a_device_that_takes_several_allocations_and_has_the_memory():
    assert shares.share_refusal("gpu.nvidia.com", [("node-b", shared_gpu())], "8Gi") is None
    assert shares.share_refusal("gpu.nvidia.com", [("node-b", shared_gpu(multiple=False)),
                                                   ("node-a", shared_gpu("gpu-1"))], "22Gi") is None


def test_no_device_of_the_class_is_refused_naming_the_class():
    assert "DeviceClass small selects no published device" in shares.share_refusal("small", [], "8Gi")


def test_devices_without_multiple_allocations_are_refused_naming_consumable_shares():
    refusal = shares.share_refusal("gpu.nvidia.com", [("node-b", shared_gpu(multiple=False, policy=False))], "8Gi")
    assert "takes more than one allocation" in refusal and "ConsumableShares" in refusal
    assert "leave memory unset" in refusal


def test_a_share_larger_than_any_device_allows_is_refused_naming_the_largest():
    matched = [("node-a", shared_gpu("gpu-0", "23028Mi")), ("node-b", shared_gpu("gpu-1", "23034Mi"))]
    refusal = shares.share_refusal("gpu.nvidia.com", matched, "24Gi")
    assert "can give a share of 24Gi: the most one allows is 23034Mi (gpu-1 on node-b)" in refusal
    # a request policy's maximum below the memory limits a share too
    capped = shared_gpu()
    capped["capacity"]["memory"]["requestPolicy"]["validRange"]["max"] = "8Gi"
    assert "the most one allows is 8Gi" in shares.share_refusal("c", [("n", capped)], "9Gi")
    assert shares.share_refusal("c", [("n", capped)], "8Gi") is None
