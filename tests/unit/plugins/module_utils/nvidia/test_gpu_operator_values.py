from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_images as images
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config

GPU_NODES = ["node-a", "node-b"]
UBUNTU_22_04 = {images.OS_ID_LABEL: "ubuntu", images.OS_VERSION_LABEL: "22.04"}
EVICTION = [{"name": "NODE_LABEL_FOR_GPU_POD_EVICTION", "value": "nvidia.com/dra-kubelet-plugin"}]
STANDALONE = [("v25.10.0", "auto"), ("v25.10.1", "auto"), ("v26.3.0", "auto"), ("v26.3.1", "auto"),
              ("v26.3.2", "auto"), ("v26.3.3", "auto"), ("v26.3.1", "standalone"), ("v26.7.0", "standalone")]


def plan(version, mode="auto", **kwargs):
    kwargs.setdefault("gpu_nodes", GPU_NODES)
    # GPU nodes as Node Feature Discovery labels them, so the driver image's tag is known.
    kwargs.setdefault("gpu_node_labels", {name: UBUNTU_22_04 for name in kwargs["gpu_nodes"]})
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
    ("v25.10.1", "nvidia-dra-driver-gpu", "25.12.0"),
    ("v26.3.3", "dra-driver-nvidia-gpu", "0.4.1"),
    # as NVIDIA pairs them: v26.7's own GPUCluster runs DRA driver v0.5.0
    ("v26.7.0", "dra-driver-nvidia-gpu", "0.5.0"),
])
def test_dra_driver_chart_paired_with_operator_version(version, chart, chart_version):
    dra = plan(version)["releases"][1]
    assert (dra["chart"], dra["chart_version"]) == (chart, chart_version)
    assert plan(version)["plugin"]["pod_selector"] == chart + "-component=kubelet-plugin"


@pytest.mark.parametrize("version,dra_version", [("v26.3.3", "0.5.0"), ("v26.7.0", "0.4.1")])
def test_the_other_offered_dra_chart_is_taken_without_a_caution(version, dra_version):
    result = plan(version, dra_driver_version=dra_version)
    assert result["releases"][1]["chart_version"] == dra_version
    assert result["notes"] == []
    # the same values for both charts of that name
    assert result["releases"][1]["values"] == plan(version)["releases"][1]["values"]


def test_no_note_calls_a_paired_dra_chart_unreleased():
    for version in gov.supported_operator_versions():
        assert plan(version)["notes"] == [], version


def test_a_dra_chart_not_checked_with_the_operator_version_gets_a_caution():
    notes = plan("v26.3.1", dra_driver_version="0.4.0")["notes"]
    assert notes == ["DRA driver chart 0.4.0 was not checked with GPU Operator v26.3.1 (checked with it: 0.4.1, 0.5.0); "
                     "the plan sets it the same values as those."]
    assert [n for n in plan("v26.7.0", dra_driver_version="0.5.1")["notes"] if "(checked with it: 0.5.0, 0.4.1)" in n]


def test_v26_7_standalone_pulls_and_mirrors_the_0_5_0_image():
    assert plan("v26.7.0")["image_refs"][-1] == "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"
    mirrored = plan("v26.7.0", image_registry="m.example.com")
    assert mirrored["releases"][1]["values"]["image"] == {"repository": "m.example.com/dra-driver-nvidia/dra-driver-nvidia-gpu"}
    assert mirrored["image_refs"][-1] == "m.example.com/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"


def test_dra_driver_version_override_changes_the_chart_name():
    dra = plan("v26.3.1", dra_driver_version="v25.12.0")["releases"][1]
    assert (dra["chart"], dra["chart_version"]) == ("nvidia-dra-driver-gpu", "25.12.0")
    with pytest.raises(gov.PlanError, match="DRA driver chart 1.0.0"):
        plan("v26.3.1", dra_driver_version="v1.0.0")


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
        plan("v26.7.0", "gpucluster", dra_nodes=["node-b"])
    assert plan("v26.7.0", dra_nodes=["node-b"])["dra_nodes"] == ["node-b"]


def test_unknown_nodes_and_no_gpu_nodes_are_refused():
    with pytest.raises(gov.PlanError, match="node-z, which is not a GPU node"):
        plan("v26.3.1", dra_nodes=["node-z"])
    with pytest.raises(gov.PlanError, match="no GPU node"):
        plan("v26.3.1", gpu_nodes=[])


@pytest.mark.parametrize("version", ["v26.4.0", "v27.1.0", "v24.9.2", "latest", "26.3"])
def test_unknown_minors_are_refused_with_the_known_list(version):
    with pytest.raises(gov.PlanError) as info:
        plan(version)
    assert "v26.3.1" in str(info.value) or "chart version" in str(info.value)


def test_a_newer_patch_of_a_known_minor_is_accepted_with_a_caution():
    result = plan("v26.3.4")
    assert result["releases"][0]["chart_version"] == "v26.3.4"
    assert "newer patch than this collection was checked against (v26.3.3)" in result["notes"][0]
    # the operator's own images follow the chart version; the operands' tags are v26.3.3's
    refs = result["image_refs"]
    assert "nvcr.io/nvidia/gpu-operator:v26.3.4" in refs and "nvcr.io/nvidia/k8s/container-toolkit:v1.19.1" in refs
    assert not any("newer patch" in note for note in plan("v26.3.3")["notes"])


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
        plan("v26.7.0", "gpucluster", operator_extra_values=extra, dra_driver_extra_values=dra_extra)


def test_standalone_chart_beside_the_operator_managed_driver_is_refused():
    with pytest.raises(gov.PlanError, match="must not be installed beside"):
        plan("v26.7.0", "standalone", operator_extra_values={"gpuCluster": {"deployCR": True},
                                                             "clusterPolicy": {"deployCR": False},
                                                             "driver": {"nvidiaDriverCRD": {"enabled": True}}})
    with pytest.raises(gov.PlanError, match="only apply to the standalone"):
        plan("v26.7.0", "gpucluster", dra_driver_extra_values={"x": 1})


def test_gpu_resources_without_override_is_refused():
    with pytest.raises(gov.PlanError, match="gpuResourcesEnabledOverride"):
        plan("v26.3.1", dra_driver_extra_values={"gpuResourcesEnabledOverride": False})


def test_image_registry_keeps_the_upstream_paths():
    operator, dra = plan("v26.3.1", image_registry="mirror.example.com/")["releases"]
    # the validator and node status exporter run the operator's image, under nvcr.io/nvidia
    assert operator["values"]["validator"]["repository"] == "mirror.example.com/nvidia"
    assert operator["values"]["nodeStatusExporter"]["repository"] == "mirror.example.com/nvidia"
    assert operator["values"]["driver"]["manager"]["repository"] == "mirror.example.com/nvidia/cloud-native"
    assert operator["values"]["driver"]["manager"]["env"] == EVICTION
    # Node Feature Discovery's subchart, from registry.k8s.io
    assert operator["values"]["node-feature-discovery"] == {
        "image": {"repository": "mirror.example.com/nfd/node-feature-discovery"}}
    assert "initContainer" not in operator["values"].get("operator", {})
    # the DRA driver 0.4.x image moved to registry.k8s.io with the chart's rename
    assert dra["values"]["image"] == {"repository": "mirror.example.com/dra-driver-nvidia/dra-driver-nvidia-gpu"}


def test_image_registry_per_version():
    old_operator, old_dra = plan("v25.10.1", image_registry="m.example.com")["releases"]
    # v25.10's operator.initContainer (CUDA) and the v25.12 DRA image under nvcr.io
    assert old_operator["values"]["operator"] == {"repository": "m.example.com/nvidia",
                                                  "initContainer": {"repository": "m.example.com/nvidia"}}
    assert old_dra["values"]["image"] == {"repository": "m.example.com/nvidia/k8s-dra-driver-gpu"}
    # v26.7's GPUCluster deploys the DRA driver from draDriver.repository
    gpucluster = plan("v26.7.0", "gpucluster", image_registry="m.example.com")["releases"][0]["values"]
    assert gpucluster["draDriver"]["repository"] == "m.example.com/nvidia"


ALL_COMBINATIONS = [(version, mode) for version in gov.supported_operator_versions()
                    for mode in ("standalone", "gpucluster") if mode == "standalone" or version >= "v26.7"]


@pytest.mark.parametrize("version,mode", ALL_COMBINATIONS)
@pytest.mark.parametrize("dra_nodes", [[], ["node-b"]])
def test_every_planned_image_comes_from_the_mirror(version, mode, dra_nodes):
    if mode == "gpucluster" and dra_nodes:
        return
    result = plan(version, mode, image_registry="mirror.example.com", dra_nodes=dra_nodes)
    assert result["image_refs"] and all(ref.startswith("mirror.example.com/") for ref in result["image_refs"])
    assert all(ref.count(":") == 1 and not ref.endswith(":") for ref in result["image_refs"])
    upstream = plan(version, mode, dra_nodes=dra_nodes)
    # the mirror changes the host only: the same images, the same paths and tags
    assert [ref.split("/", 1)[1] for ref in result["image_refs"]] == \
        [ref.split("/", 1)[1] for ref in upstream["image_refs"]]


def test_the_complete_image_list_of_a_version():
    refs = plan("v26.3.3", dra_nodes=["node-b"])["image_refs"]
    assert refs == [
        "nvcr.io/nvidia/gpu-operator:v26.3.3",
        "nvcr.io/nvidia/driver:580.126.20-ubuntu22.04",
        "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.11.0",
        "nvcr.io/nvidia/k8s/container-toolkit:v1.19.1",
        "nvcr.io/nvidia/k8s-device-plugin:v0.19.3",
        "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.14.2",
        "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless",
        "registry.k8s.io/nfd/node-feature-discovery:v0.18.3",
        "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1",
    ]
    # every node on DRA: no device plugin, but GPU Feature Discovery runs from the same image
    assert "nvcr.io/nvidia/k8s-device-plugin:v0.19.3" in plan("v26.3.3")["image_refs"]
    assert "nvcr.io/nvidia/k8s-device-plugin:v0.19.3" not in plan(
        "v26.3.3", operator_extra_values={"gfd": {"enabled": False}})["image_refs"]


def test_the_image_list_follows_the_users_values():
    result = plan("v26.3.3", driver_enabled=False, toolkit_enabled=False,
                  operator_extra_values={"dcgm": {"enabled": True}, "dcgmExporter": {"version": "9.9.9"},
                                         "nfd": {"enabled": False}},
                  dra_driver_extra_values={"image": {"repository": "nvcr.io/nvidia/dra-driver-nvidia-gpu"}})
    components = {image["component"]: image["ref"] for image in result["images"]}
    assert "driver" not in components and "toolkit" not in components and "node-feature-discovery" not in components
    assert components["dcgm"] == "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04"
    assert components["dcgmExporter"] == "nvcr.io/nvidia/k8s/dcgm-exporter:9.9.9"
    # NVIDIA's own build of the DRA driver
    assert components["draDriver"] == "nvcr.io/nvidia/dra-driver-nvidia-gpu:v0.4.1"


def test_the_driver_tag_gets_each_gpu_nodes_os_and_says_when_it_cannot():
    mixed = plan("v26.3.3", gpu_node_labels={"node-a": UBUNTU_22_04, "node-b": {
        images.OS_ID_LABEL: "rhel", images.OS_VERSION_LABEL: "9.4"}})
    assert [i["tag"] for i in mixed["images"] if i["component"] == "driver"] == [
        "580.126.20-rhel9.4", "580.126.20-ubuntu22.04"]
    unlabelled = plan("v26.3.3", gpu_node_labels={"node-a": UBUNTU_22_04, "node-b": {}})
    assert any("which node-b lacks: add the suffix by hand" in note for note in unlabelled["notes"])
    assert images.driver_os_tag({images.OS_ID_LABEL: "rocky", images.OS_VERSION_LABEL: "9.5"}) == "rocky9"
    assert images.driver_os_tag({images.OS_ID_LABEL: "rhel", images.OS_VERSION_LABEL: "10.0"}) == "rhel10"
    assert images.driver_os_tag({}) is None


OLD_PLUGIN = {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "version": "25.12.0"}


def test_upgrading_the_dra_chart_across_its_rename_keeps_the_names_and_applies_the_crds():
    result = plan("v26.3.3", installed_dra_driver=OLD_PLUGIN)
    dra = result["releases"][1]
    assert dra["values"]["nameOverride"] == "nvidia-dra-driver-gpu"
    assert result["dra_driver_upgrade"] == {"name_override": "nvidia-dra-driver-gpu", "apply_crds": True,
                                            "from": "25.12.0"}
    assert result["plugin"]["pod_selector"] == "nvidia-dra-driver-gpu-component=kubelet-plugin"
    assert result["plugin"]["daemonset"] == "nvidia-dra-driver-gpu-kubelet-plugin"
    # the second run finds the renamed chart under the old names: the override stays, no CRD to apply
    again = plan("v26.3.3", installed_dra_driver={"name": "nvidia-dra-driver-gpu-kubelet-plugin", "version": "0.4.1"})
    assert again["dra_driver_upgrade"] == {"name_override": "nvidia-dra-driver-gpu", "apply_crds": False,
                                           "from": "0.4.1"}
    # a fresh install or a release already under the new name needs neither
    assert plan("v26.3.3")["dra_driver_upgrade"]["name_override"] is None
    new = plan("v26.7.0", installed_dra_driver={"name": "dra-driver-nvidia-gpu-kubelet-plugin", "version": "0.4.0"})
    assert new["dra_driver_upgrade"] == {"name_override": None, "apply_crds": True, "from": "0.4.0"}
    assert "nameOverride" not in new["releases"][1]["values"]


def test_going_back_across_the_rename_is_refused():
    with pytest.raises(gov.PlanError, match="going back to 25.12.0 is not supported"):
        plan("v25.10.1", installed_dra_driver={"name": "nvidia-dra-driver-gpu-kubelet-plugin", "version": "0.4.1"})


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
    with pytest.raises(gov.PlanError, match="not a Kubernetes version"):
        gov.check_cluster("v1.36.0", True, "1.3x")
    assert gov.check_cluster("v1.36.0", False, "1.35", dra_enabled=False) == []


def test_a_partial_migration_says_what_the_operators_validator_does_on_dra_nodes():
    partial = plan("v26.3.1", dra_nodes=["node-b"])
    assert len(partial["notes"]) == 2
    assert "plugin-validation step on the DRA nodes (node-b)" in partial["notes"][0]
    assert "driver upgrades wait for the validator" in partial["notes"][1]
    host_driver = plan("v26.3.1", driver_enabled=False, dra_nodes=["node-b"])
    assert len(host_driver["notes"]) == 1
    # every node on DRA: the device plugin is off, and the operator drops plugin-validation
    assert plan("v26.3.1", dra_nodes=[])["notes"] == []


def test_operands_off_by_default_are_mirrored_and_listed_once_turned_on():
    values = plan("v26.3.3", image_registry="m.example.com")["releases"][0]["values"]
    # mirrored even while off, so that turning one on later pulls from the mirror too
    for key in ("gds", "gdrcopy", "vgpuDeviceManager", "vfioManager", "sandboxDevicePlugin", "kataSandboxDevicePlugin",
                "ccManager", "dcgm", "nodeStatusExporter"):
        assert values[key]["repository"].startswith("m.example.com/"), key
    assert "kataManager" not in values  # gone from the chart at v26.3
    assert values["vgpuManager"] == {"driverManager": {"repository": "m.example.com/nvidia/cloud-native"}}
    off = plan("v26.3.3")["image_refs"]
    assert not any("nvidia-fs" in ref or "sandbox" in ref or "cc-manager" in ref for ref in off)
    kata = plan("v26.3.3", operator_extra_values={"sandboxWorkloads": {"enabled": True, "mode": "kata"},
                                                  "gds": {"enabled": True}})["image_refs"]
    assert "nvcr.io/nvidia/cloud-native/nvidia-fs:2.27.3" in kata
    assert "nvcr.io/nvidia/cloud-native/nvidia-sandbox-device-plugin:v0.0.3" in kata
    assert "nvcr.io/nvidia/cloud-native/k8s-cc-manager:v0.4.0" in kata
    assert not any("kubevirt" in ref for ref in kata)
    # v25.10's VFIO manager ran a CUDA image from nvcr.io/nvidia
    kubevirt = plan("v25.10.1", operator_extra_values={"sandboxWorkloads": {"enabled": True}})["images"]
    assert {i["component"]: i["ref"] for i in kubevirt}["vfioManager"] == "nvcr.io/nvidia/cuda:13.0.1-base-ubi9"


def test_a_gpucluster_gets_mirror_values_only_for_what_it_deploys():
    values = plan("v26.7.0", "gpucluster", image_registry="m.example.com")["releases"][0]["values"]
    assert "toolkit" not in values and "devicePlugin" not in values and "migManager" not in values
    assert values["draDriver"]["repository"] == "m.example.com/nvidia"
    standalone = plan("v26.7.0", image_registry="m.example.com")["releases"][0]["values"]
    assert "draDriver" not in standalone and standalone["toolkit"]["repository"] == "m.example.com/nvidia/k8s"


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
    assert [p["node"] for p in result["node_patches"]] == ["node-b"]
    assert result["gpu_nodes"] == GPU_NODES and result["layout"] is None and result["plugin"] is None
    assert result["dra_nodes"] == result["device_plugin_nodes"] == result["charts_checked"] == []


def test_gpu_operator_plan_module_names_its_options():
    problems = inputs.collect(gov.input_checks({"version": "26.3", "namespace": "ok", "dra_driver_namespace": "ok",
                                                "release_name": "a", "dra_driver_release_name": "a",
                                                "min_kubernetes_version": "1.35", "chart_source": "oci"}))
    text = " | ".join(problems)
    assert "version is '26.3'" in text and "same release" in text and "oci_repository" in text


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
    assert gov.dra_driver_settings("standalone", gov.SHARING_GATES, "memory", (0, 5, 0)) == {
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
    with pytest.raises(gov.PlanError, match="needs DRA driver chart 0.5.0 or later"):
        gov.dra_driver_settings("standalone", None, "memory", dra_version)


@pytest.mark.parametrize("mode", ["0", "-2", "disabled", "Memory", "", "1.5"])
def test_consumable_shares_modes_the_driver_refuses_are_refused(mode):
    with pytest.raises(gov.PlanError, match="gpu_operator_dra_consumable_shares is .*; NVIDIA's DRA driver takes "
                                            "memory, unlimited or a positive whole number of shares per GPU"):
        gov.dra_driver_settings("gpucluster", None, mode)


def test_disabled_is_told_to_leave_the_variable_empty():
    with pytest.raises(gov.PlanError, match="leave it empty"):
        gov.consumable_shares_mode("disabled")


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
    with pytest.raises(gov.PlanError) as err:
        plan_with_shares("memory", version="v26.3.3")
    assert "gpu_operator_dra_consumable_shares needs DRA driver chart 0.5.0 or later" in str(err.value)
    assert "(this plan installs 0.4.1): set gpu_operator_dra_driver_version to 0.5.0" in str(err.value)
    assert plan_with_shares("memory", version="v26.3.3", dra_driver_version="0.5.0")["releases"][1]["values"][
        "consumableShares"] == "memory"


def test_the_plan_refuses_the_mode_without_dra():
    with pytest.raises(gov.PlanError, match="gpu_operator_dra_consumable_shares turns on .* but DRA is off"):
        plan_with_shares("memory", dra_enabled=False)


@pytest.mark.parametrize("mode", ["", None])
def test_no_mode_changes_nothing_in_the_plan(mode):
    result = plan_with_shares(mode)
    assert "featureGates" not in result["releases"][1]["values"]
    assert "consumableShares" not in result["releases"][1]["values"]
    assert not any("ConsumableShares" in n for n in result["notes"])


@pytest.mark.parametrize("mode, ok", [("memory", True), ("12", True), ("", True), ("disabled", False),
                                      ("0", False), ("half", False)])
def test_the_role_variable_is_checked_before_anything_with_its_own_name(mode, ok):
    params = {"version": "v26.7.0", "dra_consumable_shares": mode, "namespace": "gpu-operator",
              "dra_driver_namespace": "nvidia-dra-driver-gpu", "release_name": "gpu-operator",
              "dra_driver_release_name": "nvidia-dra-driver-gpu", "min_kubernetes_version": "1.35",
              "gpu_node_selector": "nvidia.com/gpu.present=true", "dra_nodes": []}
    errors = []
    for check in gov.input_checks(params, lambda option: "gpu_operator_" + option):
        try:
            check()
        except Exception as exc:  # pylint: disable=broad-except
            errors.append(str(exc))
    assert (errors == []) == ok, errors
    if not ok:
        assert errors[0].startswith("gpu_operator_dra_consumable_shares is %r" % mode)


def test_gpu_operator_sharing_without_dra_is_refused():
    with pytest.raises(gov.PlanError) as err:
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
    with pytest.raises(gov.PlanError, match="but DRA is off"):
        plan("v26.3.1", "auto", dra_enabled=False, health=True)
    with pytest.raises(gov.PlanError, match="needs NVIDIA's DRA driver v0.4.0 or later"):
        plan("v25.10.1", "auto", health=True)
    with pytest.raises(gov.PlanError, match="does not run together with DynamicMIG and PassthroughSupport"):
        plan("v26.3.1", "auto", health=True,
             dra_driver_extra_values={"featureGates": {"DynamicMIG": True, "PassthroughSupport": "true"}})
    assert plan("v26.3.1", "auto", dra_driver_extra_values={"featureGates": {"DynamicMIG": True}})
    params = dict(MODULE_PARAMS, dra_health_check=True)
    planned = gov.plan_for(params, GPU_NODES, {}, gpu_node_labels={n: UBUNTU_22_04 for n in GPU_NODES})
    assert planned["releases"][1]["values"]["featureGates"] == {"NVMLDeviceHealthCheck": True}
