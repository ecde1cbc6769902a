from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import driver_gates, mig_layout, sharing_config
from ansible_collections.dra.gpu.plugins.module_utils import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils.device_class import DeviceClassError, validate_input

ISSUE_EXAMPLE = [
    {"name": "nvidia-gpu-timesliced", "strategy": "time_slicing", "interval": "Default"},
    {"name": "nvidia-gpu-mps", "strategy": "mps", "mps": {"active_thread_percentage": 50, "pinned_memory_limit": "8Gi"}},
    {"name": "nvidia-mig-1g", "strategy": "mig", "profile": "1g.10gb"},
]


def params(sharing, kind="GpuConfig"):
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": kind, "sharing": sharing}


# ----- rendering ---------------------------------------------------------------------------

def test_issue_example_renders_nvidia_configs_and_gates():
    classes, gates = sharing_config.device_classes(ISSUE_EXAMPLE, {"app.kubernetes.io/managed-by": "x"})
    assert gates == ["MPSSupport", "TimeSlicingSettings"]
    timesliced, mps, mig = classes
    assert timesliced["config"] == [{"opaque": {"driver": "gpu.nvidia.com", "parameters": params(
        {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}})}}]
    assert mps["config"][0]["opaque"]["parameters"]["sharing"] == {
        "strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 50, "defaultPinnedDeviceMemoryLimit": "8Gi"}}
    assert "config" not in mig
    assert mig["selectors"] == ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
                                " && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"]
    assert timesliced["selectors"][0].endswith(".type == 'gpu'")
    assert all(c["labels"] == {"app.kubernetes.io/managed-by": "x"} for c in classes)
    assert "nothing limits" in timesliced["enforces"] and "caps" in mps["enforces"]


def test_mig_with_mps_uses_mig_device_config():
    classes, gates = sharing_config.device_classes([{"name": "m", "strategy": "mig", "profile": "3g.40gb",
                                                     "mps": {"active_thread_percentage": 30}}])
    assert classes[0]["config"][0]["opaque"]["parameters"]["kind"] == "MigDeviceConfig"
    assert gates == ["MPSSupport"]


@pytest.mark.parametrize("entry, words", [
    ({"name": "a", "strategy": "timeslicing"}, "strategy is 'timeslicing'"),
    ({"name": "a", "strategy": "time_slicing", "interval": "Fast"}, "interval is 'Fast'"),
    ({"name": "a", "strategy": "mps", "mps": {"active_thread_percentage": 150}}, "must be 0 to 100"),
    ({"name": "a", "strategy": "mps", "mps": {"pinned_memory_limit": "8GB!"}}, "is not a quantity"),
    ({"name": "a", "strategy": "mps", "mps": {"pinned_memory_limit": "512Ki"}}, "below 1Mi"),
    ({"name": "a", "strategy": "mps", "mps": {"threads": 5}}, "mps.threads is not a setting"),
    ({"name": "a", "strategy": "mig"}, "profile is missing"),
    ({"name": "a", "strategy": "mig", "profile": "1g10gb"}, "not a MIG profile name"),
    ({"name": "a", "strategy": "mps", "profile": "1g.10gb"}, "applies to strategy mig only"),
    ({"name": "a", "strategy": "time_slicing", "mps": {}}, "applies to strategy mps"),
    ({"strategy": "mps"}, "name is missing"),
    ({"name": "a", "strategy": "mps", "colour": "red"}, "colour is not a setting"),
])
def test_bad_entries_are_refused_naming_the_field(entry, words):
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.device_classes([entry], root="gpu_sharing_classes")
    assert "gpu_sharing_classes[0]" in str(err.value) and words in str(err.value)


def test_every_problem_is_reported_at_once():
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.device_classes([{"name": "a", "strategy": "x"}, {"name": "b", "strategy": "mig"},
                                       {"name": "a", "strategy": "mps"}, {"name": "a", "strategy": "mps"}])
    text = str(err.value)
    assert "[0]" in text and "[1]" in text and "[3].name a is listed twice" in text


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
    problems = sharing_config.parameter_problems(parameters)
    assert problems and words in " ".join(problems)


def test_parameters_the_driver_accepts():
    assert sharing_config.parameter_problems(params({"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": 0, "defaultPinnedDeviceMemoryLimit": "10Gi",
        "defaultPerDevicePinnedMemoryLimit": {"0": "5Gi", "GPU-1234": "4Gi"}}})) == []
    assert sharing_config.parameter_problems({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}) == []


def test_device_class_module_refuses_a_bad_nvidia_config_and_ignores_other_drivers():
    bad = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": params({"strategy": "MPS", "mpsConfig": {"x": 1}})}}]
    with pytest.raises(DeviceClassError) as err:
        validate_input([], bad)
    assert 'config[0].opaque.parameters: unknown field "sharing.mpsConfig.x"' in str(err.value)
    validate_input([], [{"opaque": {"driver": "gpu.example.com", "parameters": {"anything": True}}}])


def test_mps_limit_above_every_gpu_is_refused():
    classes, _gates = sharing_config.device_classes([{"name": "big", "strategy": "mps",
                                                      "mps": {"pinned_memory_limit": "32Gi"}}])
    devices = [{"attributes": {"type": "gpu"}, "capacity": {"memory": "24Gi"}}]
    problems = sharing_config.memory_problems(classes, devices)
    assert len(problems) == 1 and "32Gi" in problems[0] and "24Gi" in problems[0] and "lower it" in problems[0]
    classes, _gates = sharing_config.device_classes([{"name": "ok", "strategy": "mps",
                                                      "mps": {"pinned_memory_limit": "24Gi"}}])
    assert sharing_config.memory_problems(classes, devices) == []


# ----- feature gates ---------------------------------------------------------------------------

def daemonset(name, gates=None, container="gpus", namespace="nvidia-dra-driver-gpu"):
    env = [{"name": "FEATURE_GATES", "value": gates}] if gates is not None else []
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"spec": {"containers": [{"name": container, "env": env}]}}}}


def test_gates_are_read_from_the_kubelet_plugin():
    found = driver_gates.kubelet_plugins([
        daemonset("dra-driver-nvidia-gpu-kubelet-plugin", "MPSSupport=true,TimeSlicingSettings=false,"),
        daemonset("other-kubelet-plugin", "MPSSupport=true", container="plugin"),
        daemonset("nvidia-device-plugin-daemonset", "MPSSupport=true")])
    assert found == [{"namespace": "nvidia-dra-driver-gpu", "name": "dra-driver-nvidia-gpu-kubelet-plugin",
                      "gates": {"MPSSupport": True, "TimeSlicingSettings": False}}]
    problem = driver_gates.problem(["MPSSupport", "TimeSlicingSettings"], found)
    assert "runs without TimeSlicingSettings" in problem and "gpu_operator_dra_sharing: true" in problem
    assert driver_gates.problem(["MPSSupport"], found) is None
    assert "no NVIDIA DRA kubelet plugin" in driver_gates.problem(["MPSSupport"], [])
    assert driver_gates.problem([], []) is None
    assert driver_gates.kubelet_plugins([daemonset("x-kubelet-plugin")])[0]["gates"] == {}


@pytest.mark.parametrize("version, layout_key", [("v25.10.1", "dra"), ("v26.7.0", "operator")])
def test_gpu_operator_sharing_turns_on_the_gates(version, layout_key):
    mode = "gpucluster" if layout_key == "operator" else "auto"
    plan = gov.plan(version, mode=mode, gpu_nodes=["a"], sharing=True)
    if layout_key == "dra":
        values = plan["releases"][1]["values"]
        assert values["featureGates"] == {"TimeSlicingSettings": True, "MPSSupport": True}
        assert "draDriver" not in plan["releases"][0]["values"]
    else:
        assert plan["releases"][0]["values"]["draDriver"]["featureGates"] == {"TimeSlicingSettings": True,
                                                                              "MPSSupport": True}
    off = gov.plan(version, mode=mode, gpu_nodes=["a"])
    assert "featureGates" not in off["releases"][-1]["values"] and "draDriver" not in off["releases"][0]["values"]


def test_gpu_operator_sharing_without_dra_is_refused():
    with pytest.raises(gov.PlanError) as err:
        gov.plan("v25.10.1", dra_enabled=False, gpu_nodes=["a"], sharing=True)
    assert "gpu_operator_dra_sharing" in str(err.value)


# ----- MIG layouts ------------------------------------------------------------------------------

def node(name, labels=None, annotations=None):
    return {"name": name, "labels": labels or {}, "annotations": annotations or {}}


def test_mig_patches_remember_and_restore_the_previous_layout():
    nodes = [node("a", {mig_layout.CAPABLE_LABEL: "true", mig_layout.CONFIG_LABEL: "all-disabled",
                        mig_layout.STATE_LABEL: "success"}), node("b", {mig_layout.CAPABLE_LABEL: "true"})]
    patches = mig_layout.patches(nodes, {"a"}, "all-1g.10gb")
    assert patches == [{"node": "a", "layout": "all-1g.10gb", "patch": {"metadata": {
        "labels": {mig_layout.CONFIG_LABEL: "all-1g.10gb", mig_layout.STATE_LABEL: None},
        "annotations": {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: "all-disabled"}}}}]
    labelled = node("a", {mig_layout.CAPABLE_LABEL: "true", mig_layout.CONFIG_LABEL: "all-1g.10gb"},
                    {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: "all-disabled"})
    assert mig_layout.patches([labelled], {"a"}, "all-1g.10gb") == []
    restore = mig_layout.patches([labelled], set(), None)
    assert restore[0]["patch"]["metadata"]["labels"] == {mig_layout.CONFIG_LABEL: "all-disabled",
                                                         mig_layout.STATE_LABEL: None}
    assert restore[0]["patch"]["metadata"]["annotations"] == {mig_layout.OWNER_ANNOTATION: None,
                                                              mig_layout.PREVIOUS_ANNOTATION: None}


def test_mig_node_problems_and_state():
    nodes = [node("a", {mig_layout.CAPABLE_LABEL: "true"}), node("b", {mig_layout.CAPABLE_LABEL: "false"})]
    problems = mig_layout.node_problems(nodes, ["a", "b", "c"])
    assert len(problems) == 2 and "b is not MIG-capable" in problems[0] and "c is not a node" in problems[1]

    def obj(labels):
        return {"metadata": {"name": "a", "labels": labels}}
    want = {"a": "all-1g.10gb"}
    assert mig_layout.state_verdict([obj({mig_layout.CONFIG_LABEL: "all-1g.10gb"})], want) is None
    assert mig_layout.state_verdict([obj({mig_layout.CONFIG_LABEL: "all-1g.10gb",
                                          mig_layout.STATE_LABEL: "success"})], want) is True
    with pytest.raises(mig_layout.MigLayoutError):
        mig_layout.state_verdict([obj({mig_layout.CONFIG_LABEL: "all-1g.10gb", mig_layout.STATE_LABEL: "failed"})], want)
    assert mig_layout.layout_profile("all-1g.10gb") == "1g.10gb"
    assert mig_layout.layout_profile("all-balanced") is None


def test_mig_device_counts_only_the_profile_on_the_named_nodes():
    def dev(node, kind, profile=None):
        attrs = {"type": kind}
        if profile:
            attrs["profile"] = profile
        return {"node": node, "attributes": attrs}
    devices = [dev("a", "mig", "1g.10gb"), dev("a", "mig", "1g.10gb"), dev("a", "mig", "3g.40gb"),
               dev("b", "gpu"), dev("c", "mig", "1g.10gb")]
    assert mig_layout.mig_device_counts(devices, ["a", "b"], "1g.10gb") == {"a": 2}
