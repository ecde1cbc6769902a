from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import gpu_operator_values as gov

GPU_NODES = ["node-a", "node-b"]
EVICTION = [{"name": "NODE_LABEL_FOR_GPU_POD_EVICTION", "value": "nvidia.com/dra-kubelet-plugin"}]
STANDALONE = [("v25.10.0", "auto"), ("v25.10.1", "auto"), ("v26.3.0", "auto"), ("v26.3.1", "auto"),
              ("v26.3.2", "auto"), ("v26.3.3", "auto"), ("v26.3.1", "standalone"), ("v26.7.0", "standalone")]


def plan(version, mode="auto", **kwargs):
    kwargs.setdefault("gpu_nodes", GPU_NODES)
    return gov.plan(version, mode, **kwargs)


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


@pytest.mark.parametrize("version,chart,chart_version", [
    ("v25.10.1", "nvidia-dra-driver-gpu", "v25.12.0"),
    ("v26.3.3", "dra-driver-nvidia-gpu", "v0.4.1"),
])
def test_dra_driver_chart_paired_with_operator_version(version, chart, chart_version):
    dra = plan(version)["releases"][1]
    assert (dra["chart"], dra["chart_version"]) == (chart, chart_version)
    assert plan(version)["plugin"]["pod_selector"] == chart + "-component=kubelet-plugin"


def test_dra_driver_version_override_changes_the_chart_name():
    dra = plan("v26.3.1", dra_driver_version="v25.12.0")["releases"][1]
    assert dra["chart"] == "nvidia-dra-driver-gpu"
    with pytest.raises(gov.PlanError, match="DRA driver chart v1.0.0"):
        plan("v26.3.1", dra_driver_version="v1.0.0")


@pytest.mark.parametrize("mode", ["auto", "gpucluster"])
def test_gpucluster_layout_on_v26_7(mode):
    result = plan("v26.7.0", mode)
    assert result["layout"] == "gpucluster" and len(result["releases"]) == 1
    values = result["releases"][0]["values"]
    assert values["clusterPolicy"] == {"deployCR": False} and values["gpuCluster"] == {"deployCR": True}
    assert values["driver"] == {"enabled": True, "nvidiaDriverCRD": {"enabled": True}}
    assert result["device_plugin_enabled"] is False and result["plugin"]["namespace"] == "gpu-operator"


def test_gpucluster_with_a_host_driver():
    values = plan("v26.7.0", driver_enabled=False, toolkit_enabled=False)["releases"][0]["values"]
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}


def test_host_driver_root_in_standalone():
    dra = plan("v26.3.1", driver_enabled=False)["releases"][1]
    assert dra["values"]["nvidiaDriverRoot"] == "/"


@pytest.mark.parametrize("version", ["v25.10.1", "v26.3.1"])
def test_gpucluster_refused_before_26_7(version):
    with pytest.raises(gov.PlanError, match="needs GPU Operator v26.7"):
        plan(version, "gpucluster")


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
    with pytest.raises(gov.PlanError, match="cannot migrate node by node"):
        plan("v26.7.0", dra_nodes=["node-b"])
    assert plan("v26.7.0", "standalone", dra_nodes=["node-b"])["dra_nodes"] == ["node-b"]


def test_unknown_nodes_and_no_gpu_nodes_are_refused():
    with pytest.raises(gov.PlanError, match="node-z, which is not a GPU node"):
        plan("v26.3.1", dra_nodes=["node-z"])
    with pytest.raises(gov.PlanError, match="no GPU node"):
        plan("v26.3.1", gpu_nodes=[])


@pytest.mark.parametrize("version", ["v26.4.0", "v26.3.9", "v24.9.2", "latest", "26.3"])
def test_unknown_versions_are_refused_with_the_known_list(version):
    with pytest.raises(gov.PlanError) as info:
        plan(version)
    assert "v26.3.1" in str(info.value) or "chart version" in str(info.value)


def test_extra_values_merge_deeply():
    result = plan("v26.3.1", operator_extra_values={"driver": {"version": "580.95.05"}, "dcgmExporter": {"enabled": False}},
                  dra_driver_extra_values={"kubeletPlugin": {"tolerations": [{"operator": "Exists"}]}})
    operator, dra = result["releases"]
    assert operator["values"]["driver"]["version"] == "580.95.05" and operator["values"]["driver"]["manager"]
    assert dra["values"]["kubeletPlugin"] == {"nodeSelector": {"nvidia.com/dra-kubelet-plugin": "true"},
                                              "tolerations": [{"operator": "Exists"}]}


@pytest.mark.parametrize("extra,dra_extra,match", [
    ({"clusterPolicy": {"deployCR": True}}, None, "both true"),
    ({"driver": {"nvidiaDriverCRD": {"enabled": False}}}, None, "nvidiaDriverCRD"),
])
def test_refusals_of_the_gpucluster_chart(extra, dra_extra, match):
    with pytest.raises(gov.PlanError, match=match):
        plan("v26.7.0", operator_extra_values=extra, dra_driver_extra_values=dra_extra)


def test_standalone_chart_beside_the_operator_managed_driver_is_refused():
    with pytest.raises(gov.PlanError, match="must not be installed beside"):
        plan("v26.7.0", "standalone", operator_extra_values={"gpuCluster": {"deployCR": True},
                                                             "clusterPolicy": {"deployCR": False},
                                                             "driver": {"nvidiaDriverCRD": {"enabled": True}}})
    with pytest.raises(gov.PlanError, match="only apply to the standalone"):
        plan("v26.7.0", dra_driver_extra_values={"x": 1})


def test_gpu_resources_without_override_is_refused():
    with pytest.raises(gov.PlanError, match="gpuResourcesEnabledOverride"):
        plan("v26.3.1", dra_driver_extra_values={"gpuResourcesEnabledOverride": False})


def test_image_registry_keeps_nvidia_paths():
    operator, dra = plan("v26.3.1", image_registry="mirror.example.com/")["releases"]
    assert operator["values"]["validator"]["repository"] == "mirror.example.com/nvidia/cloud-native"
    assert operator["values"]["driver"]["manager"]["repository"] == "mirror.example.com/nvidia/cloud-native"
    assert operator["values"]["driver"]["manager"]["env"] == EVICTION
    assert dra["values"]["image"] == {"repository": "mirror.example.com/nvidia/k8s-dra-driver-gpu"}


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
    # Removal (state absent): what we set goes.
    assert gov.node_patches(applied, [])[0]["patch"]["metadata"] == {
        "name": "node-b",
        "labels": {"nvidia.com/dra-kubelet-plugin": None, "nvidia.com/gpu.deploy.device-plugin": None},
        "annotations": {gov.OWNER_ANNOTATION: None}}


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


def test_check_cluster():
    assert gov.check_cluster("v1.35.4", True, "1.35") == []
    assert "below the minimum" in gov.check_cluster("v1.34.2", True, "1.35")[0]
    assert "below the minimum" in gov.check_cluster("v1.35.1", True, "1.35.2")[0]
    assert "resource.k8s.io/v1" in gov.check_cluster("v1.36.0", False, "1.35")[0]
    assert gov.check_cluster("v1.36.0", False, "1.35", dra_enabled=False) == []


def test_a_partial_migration_says_what_the_operators_validator_does_on_dra_nodes():
    partial = gov.plan("v26.3.1", gpu_nodes=["node-a", "node-b"], dra_nodes=["node-b"])
    assert len(partial["notes"]) == 2
    assert "plugin-validation step on the DRA nodes (node-b)" in partial["notes"][0]
    assert "driver upgrades wait for the validator" in partial["notes"][1]
    host_driver = gov.plan("v26.3.1", driver_enabled=False, gpu_nodes=["node-a", "node-b"], dra_nodes=["node-b"])
    assert len(host_driver["notes"]) == 1
    # every node on DRA: the device plugin is off, and the operator drops plugin-validation
    assert gov.plan("v26.3.1", gpu_nodes=["node-a", "node-b"], dra_nodes=[])["notes"] == []
