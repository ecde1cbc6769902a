"""The simulated driver prepares opaque config as NVIDIA's kubelet plugin does, the collection's
checker agrees with it on every case, and the simulated MIG manager lays out GPUs like NVIDIA's."""

import os
import sys

import pytest

from labctl.apiserver.sim import agent, gpus, opaque, probe

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "build", "collections")))
from ansible_collections.dra.gpu.plugins.module_utils.sharing import opaque_config  # noqa: E402

GV = "resource.nvidia.com/v1beta1"
ALL_GATES = {"TimeSlicingSettings": True, "MPSSupport": True}


def gpu_device(name="gpu-0", kind="gpu"):
    return {"name": name, "attributes": {"type": {"string": kind}, "uuid": {"string": "GPU-1"}}}


def claim(configs, results=None):
    return {"metadata": {"name": "c", "namespace": "ns", "uid": "u-1"},
            "status": {"allocation": {"devices": {
                "results": results or [{"driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0", "request": "gpu"}],
                "config": configs}}}}


def from_class(parameters, requests=None):
    entry = {"source": "FromClass", "opaque": {"driver": "gpu.nvidia.com", "parameters": parameters}}
    if requests:
        entry["requests"] = requests
    return entry


CASES = [
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing",
                                                        "timeSlicingConfig": {"interval": "Long"}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": 50, "defaultPinnedDeviceMemoryLimit": "8Gi"}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "MPS", "mpsConfig": {"multiUser": True}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": 101}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": "50"}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "MPS", "mpsConfig": {
        "defaultPinnedDeviceMemoryLimit": "100Ki"}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing",
                                                        "timeSlicingConfig": {"interval": "Fast"}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing",
                                                        "timeSlicingConfig": {"interval": "Short"}, "mpsConfig": {}}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "Exclusive"}},
    {"apiVersion": GV, "kind": "GpuConfig", "metadata": {"name": "x"}},
    {"apiVersion": GV, "kind": "GpuConfig", "sharing": {"strategy": "MPS", "timeSlicingConfig": {"interval": "Long"}}},
    {"apiVersion": "resource.nvidia.com/v1", "kind": "GpuConfig"},
    {"apiVersion": GV, "kind": "GPUConfig"},
    {"apiVersion": GV, "kind": "GpuConfig"},
]


@pytest.mark.parametrize("parameters", CASES)
def test_collection_checker_agrees_with_the_simulated_plugin(parameters):
    try:
        opaque.prepare(claim([from_class(parameters)]), {"gpu-0": gpu_device()}, ALL_GATES)
        driver_refuses = False
    except opaque.PrepareError:
        driver_refuses = True
    assert bool(opaque_config.parameter_problems(parameters)) == driver_refuses


def test_unknown_field_message_is_the_drivers():
    with pytest.raises(opaque.PrepareError) as err:
        opaque.prepare(claim([from_class(CASES[3])]), {"gpu-0": gpu_device()}, ALL_GATES)
    assert str(err.value) == ('error getting opaque device configs: error decoding config parameters: '
                              'strict decoding error: unknown field "sharing.mpsConfig.multiUser"')
    message = opaque.kubelet_message(claim([]), err.value)
    assert message.startswith("Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources "
                              "failed for ResourceClaim c: error preparing devices for claim ns/c:u-1: prepare devices "
                              "failed: error getting opaque device configs")


def test_gates_off_refuse_sharing_and_defaults_need_none():
    with pytest.raises(opaque.PrepareError) as err:
        opaque.prepare(claim([from_class(CASES[2])]), {"gpu-0": gpu_device()}, {"TimeSlicingSettings": True})
    assert 'the "MPSSupport" feature gate is not enabled' in str(err.value)
    assert opaque.prepare(claim([]), {"gpu-0": gpu_device()}, {}) == {"gpu-0": None}
    shared = opaque.prepare(claim([from_class(CASES[1])]), {"gpu-0": gpu_device()}, ALL_GATES)
    assert shared == {"gpu-0": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}}


def test_claim_config_wins_over_class_config_and_types_are_checked():
    claim_entry = {"source": "FromClaim", "opaque": {"driver": "gpu.nvidia.com", "parameters": CASES[2]}}
    chosen = opaque.prepare(claim([from_class(CASES[0]), claim_entry]), {"gpu-0": gpu_device()}, ALL_GATES)
    assert chosen["gpu-0"]["strategy"] == "MPS"
    mig = {"gpu-0": gpu_device(kind="mig")}
    # A GpuConfig for all requests does not apply to a MIG device: the default MIG config does.
    assert opaque.prepare(claim([from_class(CASES[0])]), mig, ALL_GATES) == {"gpu-0": None}
    with pytest.raises(opaque.PrepareError) as err:
        opaque.prepare(claim([from_class(CASES[0], requests=["gpu"])]), mig, ALL_GATES)
    assert 'cannot apply GpuConfig to device "gpu-0" of type "mig"' in str(err.value)
    other = {"source": "FromClass", "opaque": {"driver": "gpu.example.com", "parameters": {"bogus": 1}}}
    assert opaque.prepare(claim([other]), {"gpu-0": gpu_device()}, ALL_GATES) == {"gpu-0": None}


def test_mps_containers_get_the_pipe_directory_only():
    pod = {"spec": {"containers": [{"command": ["sh", "-c", "nvidia-smi -L; env | grep CUDA_MPS"]}]}}
    assert probe.mps_lines(pod, {"gpu-0": {"strategy": "MPS"}}) == "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\n"
    assert probe.mps_lines(pod, {"gpu-0": {"strategy": "TimeSlicing"}}) == ""


def test_plugin_gates_come_from_the_gpus_container():
    pod = {"spec": {"containers": [{"name": "gpus", "env": [
        {"name": "FEATURE_GATES", "value": "MPSSupport=true,TimeSlicingSettings=false,"}]}]}}
    assert agent.plugin_gates(pod) == {"MPSSupport": True, "TimeSlicingSettings": False}
    assert agent.plugin_gates({"spec": {"containers": [{"name": "gpus"}]}}) == {}


@pytest.mark.parametrize("model, layout, profile, count", [
    ("H100-80GB", "all-1g.10gb", "1g.10gb", 7), ("H100-80GB", "all-3g.40gb", "3g.40gb", 2),
    ("A100-40GB", "all-2g.10gb", "2g.10gb", 3), ("A100-40GB", "all-7g.40gb", "7g.40gb", 1),
])
def test_mig_manager_layouts_match_nvidias_counts(model, layout, profile, count):
    groups = gpus.apply_mig_layout([{"model": model, "count": 2}], layout)
    devices = gpus.node_devices("n", groups)
    assert [d["attributes"]["profile"]["string"] for d in devices] == [profile] * count * 2
    assert all("." not in d["name"] for d in devices)
    back = gpus.node_devices("n", gpus.apply_mig_layout(groups, "all-disabled"))
    assert [d["name"] for d in back] == ["gpu-0", "gpu-1"]


def test_mig_manager_refuses_what_the_node_cannot_do():
    with pytest.raises(gpus.TopologyError):
        gpus.apply_mig_layout([{"model": "A10", "count": 2}], "all-1g.10gb")
    with pytest.raises(gpus.TopologyError):
        gpus.apply_mig_layout([{"model": "H100-80GB", "count": 1}], "all-1g.5gb")
    assert gpus.mig_capable([{"model": "H100-80GB"}]) and not gpus.mig_capable([{"model": "L4"}])
