"""gpu_operator_values, its image list: every image the planned releases pull, and the mirror values."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_images as images
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.nvidia.operator_plans import UBUNTU_22_04, plan

EVICTION = [{"name": "NODE_LABEL_FOR_GPU_POD_EVICTION", "value": "nvidia.com/dra-kubelet-plugin"}]


def test_v26_7_standalone_pulls_and_mirrors_the_0_5_0_image():
    assert plan("v26.7.0")["image_refs"][-1] == "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"
    mirrored = plan("v26.7.0", image_registry="m.example.com")
    assert mirrored["releases"][1]["values"]["image"] == {"repository": "m.example.com/dra-driver-nvidia/dra-driver-nvidia-gpu"}
    assert mirrored["image_refs"][-1] == "m.example.com/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"


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


ALL_COMBINATIONS = [(version, mode) for version in catalog.supported_operator_versions()
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
