from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.nvidia.operator_plans import GPU_NODES, UBUNTU_22_04, plan

EVICTION = [{"name": "NODE_LABEL_FOR_GPU_POD_EVICTION", "value": "nvidia.com/dra-kubelet-plugin"}]
STANDALONE = [("v25.10.0", "auto"), ("v25.10.1", "auto"), ("v26.3.0", "auto"), ("v26.3.1", "auto"),
              ("v26.3.2", "auto"), ("v26.3.3", "auto"), ("v26.3.1", "standalone"), ("v26.7.0", "standalone")]


@pytest.mark.parametrize("version,mode", STANDALONE)
def test_standalone_layout_all_nodes(version, mode):
    result = plan(version, mode)
    assert result["layout"] == "standalone"
    operator, dra = result["releases"]
    assert operator["chart"] == "gpu-operator" and operator["chart_version"] == version
    assert operator["values"]["devicePlugin"] == {"enabled": False}
    assert operator["values"]["driver"] == {"enabled": True, "manager": {"env": EVICTION}}
    assert operator["values"]["toolkit"] == {"enabled": True}
    assert dra["values"] == {"nvidiaDriverRoot": "/run/nvidia/driver", "gpuResourcesEnabledOverride": True,
                             "resources": {"gpus": {"enabled": True}},
                             "kubeletPlugin": {"nodeSelector": {"nvidia.com/dra-kubelet-plugin": "true"}}}
    assert dra["namespace"] == "nvidia-dra-driver-gpu" and dra["name"] == "nvidia-dra-driver-gpu"
    assert result["dra_nodes"] == GPU_NODES and result["device_plugin_nodes"] == []
    if version.startswith("v26.7"):
        assert operator["values"]["clusterPolicy"] == {"deployCR": True}
        assert operator["values"]["gpuCluster"] == {"deployCR": False}
    else:
        assert "clusterPolicy" not in operator["values"] and "gpuCluster" not in operator["values"]


def test_auto_is_nvidias_supported_path_and_gpucluster_only_when_asked_for():
    assert plan("v26.7.0")["layout"] == "standalone"
    result = plan("v26.7.0", "gpucluster")
    assert result["layout"] == "gpucluster" and len(result["releases"]) == 1
    values = result["releases"][0]["values"]
    assert values["clusterPolicy"] == {"deployCR": False} and values["gpuCluster"] == {"deployCR": True}
    assert values["driver"] == {"enabled": True, "nvidiaDriverCRD": {"enabled": True}}
    assert result["device_plugin_enabled"] is False
    # the kubelet plugin NVIDIA's operator deploys for a GPUCluster
    assert result["plugin"] == {"namespace": "gpu-operator", "pod_selector": "app=nvidia-dra-driver-kubelet-plugin",
                                "daemonset": "nvidia-dra-driver-kubelet-plugin"}
    assert any("Technology Preview" in note for note in result["notes"])


def test_gpucluster_sets_no_toolkit_value_it_would_ignore():
    values = plan("v26.7.0", "gpucluster", driver_enabled=False, toolkit_enabled=False)["releases"][0]["values"]
    assert values["driver"] == {"enabled": False} and "toolkit" not in values
    note = [n for n in plan("v26.7.0", "gpucluster")["notes"] if "Container Toolkit" in n]
    assert note and "gpu_operator_toolkit_enabled has no effect" in note[0]


def test_host_driver_root_in_standalone():
    dra = plan("v26.3.1", driver_enabled=False)["releases"][1]
    assert dra["values"]["nvidiaDriverRoot"] == "/"


@pytest.mark.parametrize("version", ["v25.10.1", "v26.3.1", "v26.7.0"])
def test_dra_disabled_is_the_classic_device_plugin(version):
    result = plan(version, dra_enabled=False)
    assert result["layout"] == "device_plugin" and len(result["releases"]) == 1
    assert result["releases"][0]["values"]["devicePlugin"] == {"enabled": True}
    assert result["dra_nodes"] == [] and result["device_plugin_nodes"] == GPU_NODES and result["plugin"] is None


def test_partial_selection_keeps_the_device_plugin_on_the_other_nodes():
    result = plan("v26.3.1", dra_nodes=["node-b"])
    assert result["releases"][0]["values"]["devicePlugin"] == {"enabled": True}
    assert result["dra_nodes"] == ["node-b"] and result["device_plugin_nodes"] == ["node-a"]
    assert result["device_plugin_enabled"] is True


def test_partial_selection_refused_with_gpucluster():
    with pytest.raises(catalog.PlanError, match="cannot migrate node by node"):
        plan("v26.7.0", "gpucluster", dra_nodes=["node-b"])
    assert plan("v26.7.0", dra_nodes=["node-b"])["dra_nodes"] == ["node-b"]


def test_unknown_nodes_and_no_gpu_nodes_are_refused():
    with pytest.raises(catalog.PlanError, match="node-z, which is not a GPU node"):
        plan("v26.3.1", dra_nodes=["node-z"])
    with pytest.raises(catalog.PlanError, match="no GPU node"):
        plan("v26.3.1", gpu_nodes=[])


def test_extra_values_merge_deeply():
    result = plan("v26.3.1", operator_extra_values={"driver": {"version": "580.95.05"}, "dcgmExporter": {"enabled": False}},
                  dra_driver_extra_values={"kubeletPlugin": {"tolerations": [{"operator": "Exists"}]}})
    operator, dra = result["releases"]
    assert operator["values"]["driver"]["version"] == "580.95.05" and operator["values"]["driver"]["manager"]
    assert dra["values"]["kubeletPlugin"] == {"nodeSelector": {"nvidia.com/dra-kubelet-plugin": "true"},
                                              "tolerations": [{"operator": "Exists"}]}


def node(name, labels=None, annotations=None):
    return {"name": name, "labels": labels or {}, "annotations": annotations or {}}


def test_node_patches_for_a_partial_then_full_migration_and_idempotence():
    nodes = [node("node-a", {"nvidia.com/gpu.present": "true"}), node("node-b", {"nvidia.com/gpu.present": "true"})]
    patches = gov.node_patches(nodes, ["node-b"])
    # the device plugin leaves first, the DRA kubelet plugin comes after
    assert patches == [
        {"node": "node-b", "step": gov.DEVICE_PLUGIN_OFF, "patch": {"metadata": {
            "name": "node-b", "labels": {"nvidia.com/gpu.deploy.device-plugin": "false"},
            "annotations": {gov.OWNER_ANNOTATION: gov.OWNER}}}},
        {"node": "node-b", "step": gov.DRA_ON, "patch": {"metadata": {
            "name": "node-b", "labels": {"nvidia.com/dra-kubelet-plugin": "true"}}}}]
    applied = [nodes[0], node("node-b", dict(nodes[1]["labels"], **{
        "nvidia.com/gpu.deploy.device-plugin": "false", "nvidia.com/dra-kubelet-plugin": "true"}),
        {gov.OWNER_ANNOTATION: gov.OWNER})]
    assert gov.node_patches(applied, ["node-b"]) == []
    # Then every node moves to DRA: node-a the same two steps; node-b keeps its "false" label.
    patches = gov.node_patches(applied, ["node-a", "node-b"])
    assert [(p["node"], p["step"], p["patch"]["metadata"]["labels"]) for p in patches] == [
        ("node-a", gov.DEVICE_PLUGIN_OFF, {"nvidia.com/gpu.deploy.device-plugin": "false"}),
        ("node-a", gov.DRA_ON, {"nvidia.com/dra-kubelet-plugin": "true"})]
    # Removal (state absent): what we set goes, DRA first, then the device plugin's label.
    assert gov.node_patches(applied, []) == [
        {"node": "node-b", "step": gov.DRA_OFF, "patch": {"metadata": {
            "name": "node-b", "labels": {"nvidia.com/dra-kubelet-plugin": None}}}},
        {"node": "node-b", "step": gov.DEVICE_PLUGIN_ON, "patch": {"metadata": {
            "name": "node-b", "labels": {"nvidia.com/gpu.deploy.device-plugin": None},
            "annotations": {gov.OWNER_ANNOTATION: None}}}}]


def test_node_patches_never_take_someone_elses_label():
    theirs = node("node-a", {"nvidia.com/gpu.deploy.device-plugin": "false"})
    assert gov.node_patches([theirs], ["node-a"]) == [
        {"node": "node-a", "step": gov.DRA_ON,
         "patch": {"metadata": {"name": "node-a", "labels": {"nvidia.com/dra-kubelet-plugin": "true"}}}}]
    # Removal (state absent) leaves their label alone.
    assert gov.node_patches([theirs], []) == []


def test_the_operator_managed_layout_gets_no_device_plugin_label_and_ours_goes():
    ours = node("node-a", {"nvidia.com/gpu.deploy.device-plugin": "false", "nvidia.com/dra-kubelet-plugin": "true"},
                {gov.OWNER_ANNOTATION: gov.OWNER})
    assert gov.node_patches([ours], ["node-a"], device_plugin_label=False) == [
        {"node": "node-a", "step": gov.DEVICE_PLUGIN_OFF, "patch": {"metadata": {
            "name": "node-a", "labels": {"nvidia.com/gpu.deploy.device-plugin": None},
            "annotations": {gov.OWNER_ANNOTATION: None}}}}]
    assert [p["step"] for p in gov.node_patches([node("node-b")], ["node-b"], device_plugin_label=False)] == [
        gov.DRA_ON]


# gpu_operator_plan's options at their defaults, as plan_for and removal read them.
MODULE_PARAMS = {"version": "v26.3.1", "dra_mode": "auto", "dra_enabled": True, "driver_enabled": True,
                 "toolkit_enabled": True, "dra_nodes": ["node-b"], "dra_driver_values": {}, "dra_driver_version": None,
                 "image_registry": None, "dra_sharing": False, "namespace": "gpu-operator",
                 "dra_driver_namespace": "nvidia-dra-driver-gpu", "release_name": "gpu-operator",
                 "dra_driver_release_name": "nvidia-dra-driver-gpu"}


def test_plan_for_is_plan_with_the_modules_options():
    labels = {name: UBUNTU_22_04 for name in GPU_NODES}
    params = dict(MODULE_PARAMS, dra_sharing=True, namespace="ops", dra_driver_release_name="dra")
    values = {"operator": {"defaultRuntime": "containerd"}}
    assert gov.plan_for(params, GPU_NODES, values, None, labels) == \
        plan("v26.3.1", "auto", dra_nodes=["node-b"], operator_extra_values=values, sharing=True, namespace="ops",
             dra_driver_release_name="dra")


def test_plan_for_passes_the_live_dra_release_on():
    installed = {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "version": "25.12.0"}
    result = gov.plan_for(MODULE_PARAMS, GPU_NODES, {}, installed)
    assert result["dra_driver_upgrade"] == {"name_override": "nvidia-dra-driver-gpu", "apply_crds": True,
                                            "from": "25.12.0"}


def test_removal_plans_both_releases_dra_driver_first_and_only_our_labels():
    ours = node("node-b", {"nvidia.com/dra-kubelet-plugin": "true", "nvidia.com/gpu.deploy.device-plugin": "false"},
                {gov.OWNER_ANNOTATION: gov.OWNER})
    theirs = node("node-a", {"nvidia.com/gpu.deploy.device-plugin": "false"})
    result = gov.removal(dict(MODULE_PARAMS, release_name="op", dra_driver_namespace="dra-ns"), GPU_NODES,
                         [theirs, ours])
    assert result["releases"] == [{"name": "nvidia-dra-driver-gpu", "namespace": "dra-ns"},
                                  {"name": "op", "namespace": "gpu-operator"}]
    assert [(p["node"], p["step"]) for p in result["node_patches"]] == [("node-b", gov.DRA_OFF),
                                                                        ("node-b", gov.DEVICE_PLUGIN_ON)]
    assert result["moving_to_device_plugin"] == ["node-b"] and result["moving_to_dra"] == []
    assert result["gpu_nodes"] == GPU_NODES and result["layout"] is None and result["plugin"] is None
    assert result["dra_nodes"] == result["device_plugin_nodes"] == result["charts_checked"] == []


# ----- GPU sharing: the DRA driver's feature gates ----------------------------------------------

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


# ----- where the DRA driver's settings go per layout: gates and ConsumableShares (driver 0.5.0) -------

def test_dra_driver_settings_with_nothing_asked_for_are_empty():
    assert gov.dra_driver_settings("standalone") == gov.dra_driver_settings("gpucluster", {}) == {}


def test_consumable_shares_in_the_dra_chart_are_its_value_and_gate():
    assert gov.dra_driver_settings("standalone", catalog.SHARING_GATES, "memory", (0, 5, 0)) == {
        "featureGates": {"TimeSlicingSettings": True, "MPSSupport": True, "ConsumableShares": True},
        "consumableShares": "memory"}
    assert gov.dra_driver_settings("standalone", consumable_shares=4, dra_version=(0, 5, 1)) == {
        "featureGates": {"ConsumableShares": True}, "consumableShares": "4"}


def test_consumable_shares_in_the_gpucluster_are_its_gates_and_the_gpus_containers_env():
    # v26.7's GPUCluster has no consumableShares key: the variable the chart would set goes in
    # through the env the operator adds to the plugin's gpus container.
    assert gov.dra_driver_settings("gpucluster", None, "unlimited") == {"draDriver": {
        "featureGates": {"ConsumableShares": True},
        "gpus": {"kubeletPlugin": {"env": [{"name": "CONSUMABLE_SHARES", "value": "unlimited"}]}}}}


@pytest.mark.parametrize("dra_version", [(0, 4, 1), (25, 12, 0), None])
def test_consumable_shares_need_a_0_5_chart(dra_version):
    with pytest.raises(catalog.PlanError, match="needs DRA driver chart 0.5.0 or later"):
        gov.dra_driver_settings("standalone", None, "memory", dra_version)


def plan_with_shares(shares, version="v26.7.0", **extra):
    return gov.plan(version, gpu_nodes=["node-a", "node-b"], consumable_shares=shares, **extra)


@pytest.mark.parametrize("mode", ["memory", "unlimited", "4"])
def test_the_plan_gives_the_standalone_chart_0_5_its_gate_and_mode(mode):
    result = plan_with_shares(mode)
    values = result["releases"][1]["values"]
    assert result["releases"][1]["chart_version"] == "0.5.0"
    assert values["featureGates"] == {"ConsumableShares": True} and values["consumableShares"] == mode
    notes = " ".join(result["notes"])
    assert "scheduler accounting" in notes and "nothing caps the memory a pod really uses" in notes
    assert "time-slicing combines with it" in notes and "MPS does not" in notes
    assert sharing_config.shares_mode_words(mode) in notes


def test_the_plan_keeps_the_sharing_gates_beside_the_mode_and_says_mps_will_not_work():
    result = plan_with_shares("memory", sharing=True)
    assert result["releases"][1]["values"]["featureGates"] == {
        "TimeSlicingSettings": True, "MPSSupport": True, "ConsumableShares": True}
    assert any("MPSSupport, which NVIDIA's driver refuses to use while ConsumableShares is on" in n
               for n in result["notes"])


def test_the_plan_puts_the_mode_into_the_gpucluster():
    result = plan_with_shares("unlimited", mode="gpucluster")
    assert len(result["releases"]) == 1
    assert result["releases"][0]["values"]["draDriver"] == {
        "featureGates": {"ConsumableShares": True},
        "gpus": {"kubeletPlugin": {"env": [{"name": "CONSUMABLE_SHARES", "value": "unlimited"}]}}}


def test_the_plan_refuses_the_mode_with_a_0_4_chart_naming_both_variables():
    with pytest.raises(catalog.PlanError) as err:
        plan_with_shares("memory", version="v26.3.3")
    assert "gpu_operator_dra_consumable_shares needs DRA driver chart 0.5.0 or later" in str(err.value)
    assert "(this plan installs 0.4.1): set gpu_operator_dra_driver_version to 0.5.0" in str(err.value)
    assert plan_with_shares("memory", version="v26.3.3", dra_driver_version="0.5.0")["releases"][1]["values"][
        "consumableShares"] == "memory"


def test_the_plan_refuses_the_mode_without_dra():
    with pytest.raises(catalog.PlanError, match="gpu_operator_dra_consumable_shares turns on .* but DRA is off"):
        plan_with_shares("memory", dra_enabled=False)


@pytest.mark.parametrize("mode", ["", None])
def test_no_mode_changes_nothing_in_the_plan(mode):
    result = plan_with_shares(mode)
    assert "featureGates" not in result["releases"][1]["values"]
    assert "consumableShares" not in result["releases"][1]["values"]
    assert not any("ConsumableShares" in n for n in result["notes"])


def test_gpu_operator_sharing_without_dra_is_refused():
    with pytest.raises(catalog.PlanError) as err:
        gov.plan("v25.10.1", dra_enabled=False, gpu_nodes=["a"], sharing=True)
    assert "gpu_operator_dra_sharing" in str(err.value)


# ----- NVIDIA's NVML health check (issue 30): the gate NVMLDeviceHealthCheck ---------------------

@pytest.mark.parametrize("version, mode", [("v26.3.1", "auto"), ("v26.7.0", "gpucluster"), ("v26.7.0", "standalone")])
def test_the_health_check_turns_on_its_gate_beside_the_sharing_gates(version, mode):
    result = plan(version, mode, health=True, sharing=True)
    gates = result["releases"][0]["values"]["draDriver"]["featureGates"] if mode == "gpucluster" else \
        result["releases"][1]["values"]["featureGates"]
    assert gates == {"TimeSlicingSettings": True, "MPSSupport": True, "NVMLDeviceHealthCheck": True}
    alone = plan(version, mode, health=True)
    assert (alone["releases"][0]["values"]["draDriver"] if mode == "gpucluster" else
            alone["releases"][1]["values"])["featureGates"] == {"NVMLDeviceHealthCheck": True}


def test_the_health_check_is_refused_without_dra_before_v0_4_and_beside_dynamic_mig():
    with pytest.raises(catalog.PlanError, match="but DRA is off"):
        plan("v26.3.1", "auto", dra_enabled=False, health=True)
    with pytest.raises(catalog.PlanError, match="needs NVIDIA's DRA driver v0.4.0 or later"):
        plan("v25.10.1", "auto", health=True)
    with pytest.raises(catalog.PlanError, match="does not run together with DynamicMIG and PassthroughSupport"):
        plan("v26.3.1", "auto", health=True,
             dra_driver_extra_values={"featureGates": {"DynamicMIG": True, "PassthroughSupport": "true"}})
    assert plan("v26.3.1", "auto", dra_driver_extra_values={"featureGates": {"DynamicMIG": True}})
    params = dict(MODULE_PARAMS, dra_health_check=True)
    planned = gov.plan_for(params, GPU_NODES, {}, gpu_node_labels={n: UBUNTU_22_04 for n in GPU_NODES})
    assert planned["releases"][1]["values"]["featureGates"] == {"NVMLDeviceHealthCheck": True}
