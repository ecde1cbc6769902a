from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure

UUID0 = "GPU-11111111-1111-1111-1111-111111111111"
UUID1 = "GPU-22222222-2222-2222-2222-222222222222"


def device(name, uuid, memory="24Gi", product="NVIDIA A10", **extra):
    attrs = {"uuid": uuid, "productName": product, "type": "gpu"}
    attrs.update(extra)
    return {"name": name, "pool": "node-a", "attributes": attrs, "capacity": {"memory": memory}}


def test_claim_spec_exact_and_prioritized():
    exact = smoke.claim_spec("gpu.nvidia.com", 2, ["true"])
    assert exact["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.nvidia.com", "count": 2, "selectors": [{"cel": {"expression": "true"}}]}
    listed = smoke.claim_spec("gpu.nvidia.com", first_available=[{"name": "big", "count": 1}, {"count": 2}])
    alternatives = listed["devices"]["requests"][0]["firstAvailable"]
    assert [a["name"] for a in alternatives] == ["big", "alt1"] and alternatives[1]["count"] == 2


def test_restricted_pods_satisfy_pod_security():
    pod = smoke.pod_manifest("p", "run1", "img", ["sh"], {"resourceClaimTemplateName": "t"})
    context = pod["spec"]["containers"][0]["securityContext"]
    assert context["runAsNonRoot"] and context["capabilities"] == {"drop": ["ALL"]}
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["containers"][0]["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert pod["metadata"]["labels"][smoke.RUN_LABEL] == "run1"


def test_nvidia_probe_must_see_exactly_the_allocated_gpus():
    devices = [device("gpu-0", UUID0)]
    output = "GPU 0: NVIDIA A10 (UUID: %s)\n" % UUID0
    assert smoke.check_container(output, devices, "nvidia") == [UUID0]
    with pytest.raises(SmokeFailure) as extra:
        smoke.check_container(output + "GPU 1: NVIDIA A10 (UUID: %s)\n" % UUID1, devices, "nvidia")
    assert extra.value.kind == "extra_devices"
    with pytest.raises(SmokeFailure) as wrong:
        smoke.check_container("GPU 0: NVIDIA A10 (UUID: %s)\n" % UUID1, devices, "nvidia")
    assert wrong.value.kind == "mismatch"
    with pytest.raises(SmokeFailure) as nothing:
        smoke.check_container("No devices were found", devices, "nvidia")
    assert nothing.value.kind == "probe_output"


def test_mig_devices_show_their_parent_gpu():
    mig = device("gpu-0-mig-1g.5gb-0-0", "MIG-aaaaaaaa-1111-1111-1111-111111111111", parentUUID=UUID0, type="mig")
    output = "GPU 0: NVIDIA A100 (UUID: %s)\n  MIG 1g.5gb Device 0: (UUID: %s)\n" % (UUID0, mig["attributes"]["uuid"])
    assert len(smoke.check_container(output, [mig], "nvidia")) == 2


def test_example_driver_probe_compares_device_names():
    assert smoke.check_container("GPU_DEVICE_0=gpu-3\n", [device("gpu-3", "x")], "example") == ["gpu-3"]


def test_custom_probe_uses_the_given_pattern_and_attribute():
    devices = [device("gpu-0", UUID0)]
    assert smoke.check_container("visible=%s" % UUID0, devices, "custom", r"visible=(\S+)", "uuid") == [UUID0]


def test_allocation_must_come_from_the_pods_node_and_be_reserved():
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "node-a"}}
    claim = {"metadata": {"name": "c"}, "status": {
        "allocation": {"devices": {"results": [{"driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-0",
                                                "request": "gpu"}]}},
        "reservedFor": [{"resource": "pods", "name": "p"}]}}
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a", "pool": {"name": "node-a"},
                        "devices": [{"name": "gpu-0", "attributes": {"uuid": {"string": UUID0}},
                                     "capacity": {"memory": {"value": "24Gi"}}}]}}]
    devices = smoke.check_allocation(pod, claim, slices, "gpu.nvidia.com")
    assert devices[0]["attributes"]["uuid"] == UUID0 and devices[0]["capacity"]["memory"] == "24Gi"
    with pytest.raises(SmokeFailure, match="not reserved"):
        smoke.check_allocation({"metadata": {"name": "q"}, "spec": {"nodeName": "node-a"}}, claim, slices,
                               "gpu.nvidia.com")
    with pytest.raises(SmokeFailure, match="in no ResourceSlice"):
        smoke.check_allocation(pod, claim, [], "gpu.nvidia.com")
    with pytest.raises(SmokeFailure, match="pod runs on node-b"):
        smoke.check_allocation({"metadata": {"name": "p"}, "spec": {"nodeName": "node-b"}}, claim, slices,
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
    assert smoke.check_allocation(pod, claim, slices, "gpu.nvidia.com")   # effect None: still in service
    lost = {"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule", "timeAdded": "2026-12-06T20:00:00Z"}
    slices[0]["spec"]["devices"][0]["taints"].append(lost)
    with pytest.raises(SmokeFailure, match="gpu-0 on node node-a is tainted .*gpu.nvidia.com/gpu-lost:NoSchedule since "
                                           "2026-12-06T20:00:00Z.*does not pass on it") as err:
        smoke.check_allocation(pod, claim, slices, "gpu.nvidia.com")
    assert err.value.kind == "tainted_device"
    rule = {"metadata": {"name": "dra-gpu-maintenance-node-a-gpu-0"},
            "spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "dra.gpu/maintenance", "effect": "NoExecute"}}}
    clean = [{"spec": dict(slices[0]["spec"], devices=[gpu])}]
    with pytest.raises(SmokeFailure, match="DeviceTaintRule dra-gpu-maintenance-node-a-gpu-0"):
        smoke.check_allocation(pod, claim, clean, "gpu.nvidia.com", [rule])


def test_chosen_alternative_comes_from_the_request_name():
    assert smoke.chosen_alternative([{"request": "gpu/two-small"}]) == "two-small"
    assert smoke.chosen_alternative([{"request": "gpu"}]) is None


def test_expectations():
    smoke.check_expectations([device("gpu-0", UUID0)], {"product_contains": "A10", "min_memory": "16Gi"})
    with pytest.raises(SmokeFailure, match="less than 40Gi"):
        smoke.check_expectations([device("gpu-0", UUID0)], {"min_memory": "40Gi"})
    with pytest.raises(SmokeFailure, match="not a H100"):
        smoke.check_expectations([device("gpu-0", UUID0)], {"product_contains": "H100"})
