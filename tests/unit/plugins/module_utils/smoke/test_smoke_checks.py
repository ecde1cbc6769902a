"""smoke_checks.py: whether a run's result proves a GPU (the allocation, what the probe saw, the
expectations) and the module's result of a verified run, against plain dicts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke_checks
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure

UUID0 = "GPU-11111111-1111-1111-1111-111111111111"
UUID1 = "GPU-22222222-2222-2222-2222-222222222222"


def device(name, uuid, memory="24Gi", product="NVIDIA A10", **extra):
    attrs = {"uuid": uuid, "productName": product, "type": "gpu"}
    attrs.update(extra)
    return {"name": name, "pool": "node-a", "attributes": attrs, "capacity": {"memory": memory}}


def pod(name, phase="Pending", node="node-a", claims=()):
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "resourceClaims": list(claims)},
            "status": {"phase": phase}}


def test_nvidia_probe_must_see_exactly_the_allocated_gpus():
    devices = [device("gpu-0", UUID0)]
    output = "GPU 0: NVIDIA A10 (UUID: %s)\n" % UUID0
    assert smoke_checks.check_container(output, devices, "nvidia") == [UUID0]
    with pytest.raises(SmokeFailure) as extra:
        smoke_checks.check_container(output + "GPU 1: NVIDIA A10 (UUID: %s)\n" % UUID1, devices, "nvidia")
    assert extra.value.kind == "extra_devices"
    with pytest.raises(SmokeFailure) as wrong:
        smoke_checks.check_container("GPU 0: NVIDIA A10 (UUID: %s)\n" % UUID1, devices, "nvidia")
    assert wrong.value.kind == "mismatch"
    with pytest.raises(SmokeFailure) as nothing:
        smoke_checks.check_container("No devices were found", devices, "nvidia")
    assert nothing.value.kind == "probe_output"


def test_mig_devices_show_their_parent_gpu():
    mig = device("gpu-0-mig-1g.5gb-0-0", "MIG-aaaaaaaa-1111-1111-1111-111111111111", parentUUID=UUID0, type="mig")
    output = "GPU 0: NVIDIA A100 (UUID: %s)\n  MIG 1g.5gb Device 0: (UUID: %s)\n" % (UUID0, mig["attributes"]["uuid"])
    assert len(smoke_checks.check_container(output, [mig], "nvidia")) == 2


def test_example_driver_probe_compares_device_names():
    assert smoke_checks.check_container("GPU_DEVICE_0=gpu-3\n", [device("gpu-3", "x")], "example") == ["gpu-3"]


def test_custom_probe_uses_the_given_pattern_and_attribute():
    devices = [device("gpu-0", UUID0)]
    assert smoke_checks.check_container("visible=%s" % UUID0, devices, "custom", r"visible=(\S+)", "uuid") == [UUID0]


def test_allocation_must_come_from_the_pods_node_and_be_reserved():
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "node-a"}}
    claim = {"metadata": {"name": "c"}, "status": {
        "allocation": {"devices": {"results": [{"driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-0",
                                                "request": "gpu"}]}},
        "reservedFor": [{"resource": "pods", "name": "p"}]}}
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a", "pool": {"name": "node-a"},
                        "devices": [{"name": "gpu-0", "attributes": {"uuid": {"string": UUID0}},
                                     "capacity": {"memory": {"value": "24Gi"}}}]}}]
    devices = smoke_checks.check_allocation(pod, claim, slices, "gpu.nvidia.com")
    assert devices[0]["attributes"]["uuid"] == UUID0 and devices[0]["capacity"]["memory"] == "24Gi"
    with pytest.raises(SmokeFailure, match="not reserved"):
        smoke_checks.check_allocation({"metadata": {"name": "q"}, "spec": {"nodeName": "node-a"}}, claim, slices,
                                      "gpu.nvidia.com")
    with pytest.raises(SmokeFailure, match="in no ResourceSlice"):
        smoke_checks.check_allocation(pod, claim, [], "gpu.nvidia.com")
    with pytest.raises(SmokeFailure, match="pod runs on node-b"):
        smoke_checks.check_allocation({"metadata": {"name": "p"}, "spec": {"nodeName": "node-b"}}, claim, slices,
                                      "gpu.nvidia.com")


def test_the_smoke_test_never_passes_on_a_tainted_device_and_says_why():
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "node-a"}}
    claim = {"metadata": {"name": "c"}, "status": {
        "allocation": {"devices": {"results": [{"driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-0",
                                                "request": "gpu"}]}},
        "reservedFor": [{"resource": "pods", "name": "p"}]}}
    gpu = {"name": "gpu-0", "attributes": {"uuid": {"string": UUID0}}, "capacity": {}}
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a", "pool": {"name": "node-a"},
                        "devices": [dict(gpu, taints=[{"key": "gpu.nvidia.com/xid", "value": "13", "effect": "None"}])]}}]
    assert smoke_checks.check_allocation(pod, claim, slices, "gpu.nvidia.com")   # effect None: still in service
    lost = {"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule", "timeAdded": "2026-12-06T20:00:00Z"}
    slices[0]["spec"]["devices"][0]["taints"].append(lost)
    with pytest.raises(SmokeFailure, match="gpu-0 on node node-a is tainted .*gpu.nvidia.com/gpu-lost:NoSchedule since "
                                           "2026-12-06T20:00:00Z.*does not pass on it") as err:
        smoke_checks.check_allocation(pod, claim, slices, "gpu.nvidia.com")
    assert err.value.kind == "tainted_device"
    rule = {"metadata": {"name": "dra-gpu-maintenance-node-a-gpu-0"},
            "spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "dra.gpu/maintenance", "effect": "NoExecute"}}}
    clean = [{"spec": dict(slices[0]["spec"], devices=[gpu])}]
    with pytest.raises(SmokeFailure, match="DeviceTaintRule dra-gpu-maintenance-node-a-gpu-0"):
        smoke_checks.check_allocation(pod, claim, clean, "gpu.nvidia.com", [rule])


def test_chosen_alternative_comes_from_the_request_name():
    assert smoke_checks.chosen_alternative([{"request": "gpu/two-small"}]) == "two-small"
    assert smoke_checks.chosen_alternative([{"request": "gpu"}]) is None


def test_expectations():
    smoke_checks.check_expectations([device("gpu-0", UUID0)], {"product_contains": "A10", "min_memory": "16Gi"})
    with pytest.raises(SmokeFailure, match="less than 40Gi"):
        smoke_checks.check_expectations([device("gpu-0", UUID0)], {"min_memory": "40Gi"})
    with pytest.raises(SmokeFailure, match="not a H100"):
        smoke_checks.check_expectations([device("gpu-0", UUID0)], {"product_contains": "H100"})


def test_claim_names_and_the_result_of_shared_pods():
    shared = [pod("a", phase="Succeeded", claims=[{"name": "gpu", "resourceClaimName": "smoke-1"}]),
              pod("b", phase="Succeeded", node="node-b", claims=[{"name": "gpu", "resourceClaimName": "smoke-1"}])]
    assert smoke_checks.claim_names(shared[0]) == ["smoke-1"]
    generated = pod("c", claims=[{"name": "gpu", "resourceClaimTemplateName": "t"}])
    generated["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "c-gpu-x"}]
    assert smoke_checks.claim_names(generated) == ["c-gpu-x"]
    devices = []
    smoke_checks.add_devices(devices, [{"pool": "node-a", "name": "gpu-0"}])
    smoke_checks.add_devices(devices, [{"pool": "node-a", "name": "gpu-0"}, {"pool": "node-a", "name": "gpu-1"}])
    assert [d["name"] for d in devices] == ["gpu-0", "gpu-1"]
    result = smoke_checks.run_result(shared, devices, [], None, {"a": ["G1"], "b": ["G1"]}, None)
    assert result["node"] == ["node-a", "node-b"]
    assert result["shared"] == {"pods": 2, "same_devices": True, "seen": ["G1"]}
    assert smoke_checks.run_result(shared[:1], devices, [], "alt1", {}, None)["node"] == "node-a"
    assert smoke_checks.run_result(shared[:1], devices, [], "alt1", {}, None)["shared"] is None
