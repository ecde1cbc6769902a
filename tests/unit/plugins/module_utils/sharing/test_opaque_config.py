from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.sharing import opaque_config
from ansible_collections.dra.gpu.plugins.module_utils.dra.device_class import DeviceClassError, validate_input


def params(sharing, kind="GpuConfig"):
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": kind, "sharing": sharing}


# ----- NVIDIA's strict decode ----------------------------------------------------------------

@pytest.mark.parametrize("parameters, words", [
    (params({"strategy": "MPS", "mpsConfig": {"multiUser": True}}), 'unknown field "sharing.mpsConfig.multiUser"'),
    (dict(params({"strategy": "MPS"}), metadata={"name": "x"}), 'unknown field "metadata"'),
    (params({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}, "mpsConfig": {}}),
     "mpsConfig is set with strategy TimeSlicing"),
    (params({"strategy": "MPS", "timeSlicingConfig": {"interval": "Long"}}), "timeSlicingConfig is set with strategy MPS"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": "50"}}), "must be a whole number"),
    (params({"strategy": "Exclusive"}), "the driver knows TimeSlicing and MPS"),
    (params({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}, kind="MigDeviceConfig"),
     'unknown field "sharing.timeSlicingConfig"'),
    ({"apiVersion": "resource.nvidia.com/v1", "kind": "GpuConfig"}, "decodes only resource.nvidia.com/v1beta1"),
    ({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GPUConfig"}, "kind is 'GPUConfig'"),
])
def test_parameters_the_driver_refuses(parameters, words):
    problems = opaque_config.parameter_problems(parameters)
    assert problems and words in " ".join(problems)


def test_parameters_the_driver_accepts():
    assert opaque_config.parameter_problems(params({"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": 0, "defaultPinnedDeviceMemoryLimit": "10Gi",
        "defaultPerDevicePinnedMemoryLimit": {"0": "5Gi", "GPU-1234": "4Gi"}}})) == []
    assert opaque_config.parameter_problems({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}) == []


def test_device_class_module_refuses_a_bad_nvidia_config_and_ignores_other_drivers():
    bad = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": params({"strategy": "MPS", "mpsConfig": {"x": 1}})}}]
    with pytest.raises(DeviceClassError) as err:
        validate_input([], bad)
    assert 'config[0].opaque.parameters: unknown field "sharing.mpsConfig.x"' in str(err.value)
    validate_input([], [{"opaque": {"driver": "gpu.example.com", "parameters": {"anything": True}}}])


# ----- the driver's checks of one config ---------------------------------------------------------

def test_required_gates_follow_the_strategy():
    assert opaque_config.required_gates(params({"strategy": "TimeSlicing"})) == ["TimeSlicingSettings"]
    assert opaque_config.required_gates(params({"strategy": "MPS"})) == ["MPSSupport"]
    assert opaque_config.required_gates({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}) == []
    assert opaque_config.required_gates(None) == []


def test_config_problems_are_prefixed_with_where_and_skip_other_drivers():
    bad = {"opaque": {"driver": "gpu.nvidia.com", "parameters": params({"strategy": "Exclusive"})}}
    other = {"opaque": {"driver": "gpu.example.com", "parameters": "anything"}}
    assert opaque_config.config_problems([other, None, bad], "spec.config") == [
        "spec.config[2].opaque.parameters: sharing.strategy is 'Exclusive'; the driver knows TimeSlicing and MPS"]
    assert opaque_config.config_problems(None, "config") == []


@pytest.mark.parametrize("parameters, words", [
    ("GpuConfig", "parameters must be an object"),
    (params({"strategy": "TimeSlicing", "timeSlicingConfig": None}), "sharing.timeSlicingConfig: must be an object"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": "4Gi"}}),
     "must be a map of GPU UUID or index to a quantity"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": {"first": "4Gi"}}}),
     "key 'first' is neither a device index nor a GPU-/MIG- UUID"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": {"0": "1Ki"}}}),
     "defaultPerDevicePinnedMemoryLimit.0: '1Ki' is below 1Mi"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": -1}}), "is -1; it must be 0 to 100"),
    (params({"strategy": 5}), "sharing.strategy: must be a string"),
])
def test_more_parameters_the_driver_refuses(parameters, words):
    assert words in " ".join(opaque_config.parameter_problems(parameters))


def test_a_config_without_sharing_or_with_mig_mps_is_accepted():
    assert opaque_config.parameter_problems({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "MigDeviceConfig"}) == []
    assert opaque_config.parameter_problems(params({"strategy": "MPS", "mpsConfig": {
        "defaultPerDevicePinnedMemoryLimit": {"MIG-abc": "1Mi"}}}, kind="MigDeviceConfig")) == []
