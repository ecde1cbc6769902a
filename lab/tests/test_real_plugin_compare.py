"""Pure logic of make real-plugin (labctl.realplugin): the field-by-field comparison of NVIDIA's
real plugin's slices with the simulator's, and the mock NVML roots rendered from a topology.
No checkout is needed: the real side here is a slice as the real plugin stored it (main,
95932046, ConsumableShares mode 4, taken from a make real-plugin run)."""

import copy

import yaml

from labctl.apiserver.sim import gpus
from labctl.realplugin import cdicheck, compare, mockroot

NODE = {"name": "gpu-shared", "gpus": [{"model": "A10"}, {"model": "L4"}]}
NODE["devices"] = gpus.node_devices(NODE["name"], NODE["gpus"])

# The real A10 entry in mode 4 as the API server stored it (make real-plugin, 2026-12-06).
REAL_A10_MODE_4 = {
    "allowMultipleAllocations": True,
    "attributes": {"architecture": {"string": "Ampere"}, "brand": {"string": "Nvidia"},
                   "cudaComputeCapability": {"version": "8.6.0"}, "cudaDriverVersion": {"version": "13.0.0"},
                   "driverVersion": {"version": "580.126.20"}, "productName": {"string": "NVIDIA A10"},
                   "resource.kubernetes.io/numaNode": {"int": 0},
                   "resource.kubernetes.io/pciBusID": {"string": "0000:10:00.0"},
                   "resource.kubernetes.io/pcieRoot": {"string": "pci0000:0f"}, "type": {"string": "gpu"},
                   "uuid": {"string": gpus.gpu_uuid("gpu-shared", 0)}},
    "capacity": {"memory": {"requestPolicy": {"default": "0", "validRange": {"max": "23028Mi", "min": "0", "step": "1Mi"}},
                            "value": "23028Mi"},
                 "shares": {"requestPolicy": {"default": "1", "validRange": {"max": "4", "min": "1", "step": "1"}},
                            "value": "4"}},
    "name": "gpu-0"}


def _sim_a10(mode):
    return gpus.driver_devices(NODE["devices"][:1], NODE["gpus"], mode, numa=True)


def _real_slice(devices, name="00000-gpu.nvidia.com-gpu-shared-a10-x7k2p", generation=1):
    return {"metadata": {"name": name, "generateName": "00000-gpu.nvidia.com-gpu-shared-a10-",
                         "resourceVersion": "42",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "gpu-shared-a10",
                                              "uid": "u", "controller": True}]},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-shared-a10",
                     "pool": {"name": "gpu-shared-a10", "generation": generation, "resourceSliceCount": 1},
                     "devices": devices}}


def test_the_real_a10_in_mode_4_equals_the_simulators():
    assert compare.device_differences("gpu-shared", [REAL_A10_MODE_4], _sim_a10("4")) == []


def test_a_value_type_or_presence_difference_names_the_field():
    real = copy.deepcopy(REAL_A10_MODE_4)
    real["capacity"]["memory"]["value"] = "23034Mi"
    real["attributes"]["resource.kubernetes.io/numaNode"] = {"int": "0"}
    del real["allowMultipleAllocations"]
    assert compare.device_differences("gpu-shared", [real], _sim_a10("4")) == [
        'gpu-shared/gpu-0: allowMultipleAllocations: real (absent), simulator true',
        'gpu-shared/gpu-0: attributes.resource.kubernetes.io/numaNode.int: real "0", simulator 0',
        'gpu-shared/gpu-0: capacity.memory.value: real "23034Mi", simulator "23028Mi"']


def test_a_device_on_one_side_only_is_a_difference():
    assert compare.device_differences("n", [REAL_A10_MODE_4], []) == [
        "n/gpu-0: device published by the real plugin only"]
    assert compare.device_differences("n", [], _sim_a10(None)) == ["n/gpu-0: device published by the simulator only"]


def test_another_mode_differs_in_request_policy_and_shares():
    lines = compare.device_differences("n", [REAL_A10_MODE_4], _sim_a10("memory"))
    assert "n/gpu-0: capacity.memory.requestPolicy.default: real \"0\", simulator \"23028Mi\"" in lines
    assert any(line.startswith("n/gpu-0: capacity.shares.value: real \"4\", simulator (absent)") for line in lines)


def test_pool_metadata_is_compared():
    sim = compare.expected_slices("gpu-shared-a10", _sim_a10("4"), 1)
    assert compare.pool_differences("gpu-shared-a10", [_real_slice([REAL_A10_MODE_4])], sim) == []
    lines = compare.pool_differences("gpu-shared-a10", [_real_slice([REAL_A10_MODE_4], generation=2)], sim)
    assert lines == ["gpu-shared-a10 slice 0: spec.pool.generation: real 2, simulator 1"]


def test_a_restart_that_changes_the_devices_updates_the_slice_in_place():
    before = [_real_slice(_sim_a10("memory"))]
    after = [_real_slice([REAL_A10_MODE_4])]
    assert compare.restart_differences("gpu-shared-a10", before, after, _sim_a10("4")) == []
    renamed = [_real_slice([REAL_A10_MODE_4], name="00000-gpu.nvidia.com-gpu-shared-a10-zzzzz")]
    assert compare.restart_differences("gpu-shared-a10", before, renamed, _sim_a10("4")) == [
        "gpu-shared-a10: restart: slices kept: real [], simulator ['00000-gpu.nvidia.com-gpu-shared-a10-x7k2p']"]


def test_a_node_with_two_models_is_one_process_per_model():
    procs, skipped = mockroot.processes(NODE)
    assert procs == [("gpu-shared-a10", "A10", [0]), ("gpu-shared-l4", "L4", [1])]
    assert skipped == []
    one_model = {"name": "node-b", "gpus": [{"model": "L4", "count": 4}]}
    assert mockroot.processes(one_model) == ([("node-b", "L4", [0, 1, 2, 3])], [])


def test_mig_groups_are_named_as_not_compared():
    node = {"name": "m", "gpus": [{"model": "A100-40GB", "mig": ["3g.20gb"]}, {"model": "H100-80GB"}]}
    procs, skipped = mockroot.processes(node)
    assert procs == [("m", "H100-80GB", [1])]
    assert "MIG" in skipped[0]


def test_the_mock_config_carries_the_simulators_figures():
    profile = yaml.safe_dump({"system": {"driver_version": "550.163.01"},
                              "device_defaults": {"name": "NVIDIA T4", "memory": {"total_bytes": 1}, "pci": {}},
                              "devices": [{"index": 0}], "pcie_topology": {}})
    data = mockroot.mock_config(profile, "gpu-shared", "L4", [1])
    assert data["system"]["driver_version"] == gpus.DRIVER_VERSION
    assert data["system"]["cuda_version"] == "13.0"
    assert data["device_defaults"]["name"] == "NVIDIA L4"
    assert data["device_defaults"]["compute_capability"] == {"major": 8, "minor": 9}
    assert data["device_defaults"]["memory"]["total_bytes"] == 23034 * 1024 * 1024
    assert data["device_defaults"]["pci"]["device_id"] == 0x27B810DE
    assert data["devices"] == [{"index": 0, "uuid": gpus.gpu_uuid("gpu-shared", 1),
                                "pci": {"bus_id": "0000:20:00.0"}, "minor_number": 1}]
    assert "pcie_topology" not in data
    assert mockroot.bus_id(1) == ("0000:20:00.0", 0x1F)


# --- cdicheck: NVIDIA's prepare answer and CDI spec against what the smoke test's container needs

UID = "887071b8-d991-4596-946a-848fd1c0f570"
RESULTS = [{"pool": "gpu-shared-a10", "device": "gpu-0", "request": "gpu", "driver": "gpu.nvidia.com"}]
ANSWER = {"devices": [{"cdi_device_ids": ["k8s.gpu.nvidia.com/claim=%s-gpu-0" % UID], "device_name": "gpu-0",
                       "pool_name": "gpu-shared-a10", "request_names": ["gpu"]}]}


def _spec(paths):
    return {"cdiVersion": "0.5.0", "kind": "k8s.gpu.nvidia.com/claim",
            "devices": [{"name": "%s-gpu-0" % UID, "containerEdits": {
                "env": ["NVIDIA_VISIBLE_DEVICES=void"], "deviceNodes": [{"path": p} for p in paths]}}],
            "containerEdits": {"deviceNodes": [{"path": "/dev/nvidiactl"}]}}


def test_prepared_as_the_smoke_test_needs():
    assert cdicheck.findings(UID, RESULTS, ANSWER, [_spec(["/dev/nvidia0"])], {"gpu-0": 0}) == []
    assert cdicheck.device_nodes([_spec(["/dev/nvidia0"])], ANSWER["devices"][0]["cdi_device_ids"][0]) == [
        "/dev/nvidia0", "/dev/nvidiactl"]


def test_another_gpus_device_node_or_none_is_a_finding():
    assert cdicheck.findings(UID, RESULTS, ANSWER, [_spec(["/dev/nvidia0", "/dev/nvidia1"])], {"gpu-0": 0}) == [
        "claim %s device gpu-0: the spec's GPU device nodes are /dev/nvidia[0, 1], expected /dev/nvidia0 only" % UID]
    assert cdicheck.findings(UID, RESULTS, ANSWER, [_spec([])], {"gpu-0": 0})[0].endswith("expected /dev/nvidia0 only")
    assert cdicheck.findings(UID, RESULTS, ANSWER, [], {"gpu-0": 0}) == [
        "claim %s: no CDI spec in the CDI root has device k8s.gpu.nvidia.com/claim=%s-gpu-0" % (UID, UID)]


def test_a_wrong_cdi_id_device_or_error_is_a_finding():
    wrong = {"devices": [dict(ANSWER["devices"][0], cdi_device_ids=["k8s.gpu.nvidia.com/claim=x-gpu-0"])]}
    assert "CDI ids" in cdicheck.findings(UID, RESULTS, wrong, [_spec(["/dev/nvidia0"])], {"gpu-0": 0})[0]
    other = [dict(RESULTS[0], device="gpu-1")]
    assert "prepared devices" in cdicheck.findings(UID, other, ANSWER, [_spec(["/dev/nvidia0"])], {"gpu-0": 0})[0]
    assert cdicheck.findings(UID, RESULTS, {"error": "boom"}, [], {}) == ["claim %s: prepare failed: boom" % UID]
