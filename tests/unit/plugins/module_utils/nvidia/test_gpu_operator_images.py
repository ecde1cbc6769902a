from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_images as images

V25_10_0 = images.OPERATOR_TAGS[(25, 10, 0)]
V26_3_3 = images.OPERATOR_TAGS[(26, 3, 3)]
V26_7_0 = images.OPERATOR_TAGS[(26, 7, 0)]


def refs(found):
    return {image["component"]: image["ref"] for image in found}


# ----- mirrors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("repository, registry, mirrored", [
    ("nvcr.io/nvidia/k8s", "registry.example.com", "registry.example.com/nvidia/k8s"),
    ("nvcr.io/nvidia", "registry.example.com/", "registry.example.com/nvidia"),
    ("registry.k8s.io/nfd/node-feature-discovery", "m.example.com/mirror", "m.example.com/mirror/nfd/node-feature-discovery"),
    ("busybox", "m.example.com", "m.example.com/busybox"),
])
def test_a_mirror_replaces_the_registry_host_and_keeps_the_path(repository, registry, mirrored):
    assert images.mirrored(repository, registry) == mirrored


def test_standalone_mirror_values_cover_every_clusterpolicy_operand_of_the_version():
    values = images.operator_mirror_values(V26_3_3, "m.example.com", "standalone")
    assert values["operator.repository"] == values["validator.repository"] == "m.example.com/nvidia"
    assert values["toolkit.repository"] == "m.example.com/nvidia/k8s"
    assert values["node-feature-discovery.image.repository"] == "m.example.com/nfd/node-feature-discovery"
    # off by default, mirrored all the same
    assert values["gds.repository"] == "m.example.com/nvidia/cloud-native"
    assert values["nodeStatusExporter.repository"] == "m.example.com/nvidia"
    # not in v26.3's chart, or not in this layout
    for key in ("operator.initContainer.repository", "kataManager.repository", "draDriver.repository"):
        assert key not in values


def test_a_gpucluster_gets_mirror_values_only_for_what_it_deploys():
    values = images.operator_mirror_values(V26_7_0, "m.example.com", "gpucluster")
    assert values["draDriver.repository"] == "m.example.com/nvidia"
    for key in ("toolkit.repository", "devicePlugin.repository", "migManager.repository", "vfioManager.repository"):
        assert key not in values
    assert "driver.repository" in values and "dcgmExporter.repository" in values


def test_a_version_specific_repository_is_what_gets_mirrored():
    # v25.10's VFIO manager ran the CUDA image from nvcr.io/nvidia, not the driver manager's repository
    values = images.operator_mirror_values(V25_10_0, "m.example.com", "standalone")
    assert values["vfioManager.repository"] == "m.example.com/nvidia"
    assert values["operator.initContainer.repository"] == "m.example.com/nvidia"
    assert values["kataManager.repository"] == "m.example.com/nvidia/cloud-native"


def test_without_nfd_in_the_tags_no_nfd_value_is_written():
    assert "node-feature-discovery.image.repository" not in images.operator_mirror_values({}, "m", "standalone")


@pytest.mark.parametrize("chart, repository", [
    ("nvidia-dra-driver-gpu", "m.example.com/nvidia/k8s-dra-driver-gpu"),
    ("dra-driver-nvidia-gpu", "m.example.com/dra-driver-nvidia/dra-driver-nvidia-gpu"),
])
def test_the_dra_driver_mirror_follows_the_charts_name(chart, repository):
    assert images.dra_driver_mirror_values(chart, "m.example.com") == {"image.repository": repository}


# ----- the driver's OS suffix -------------------------------------------------------------------

@pytest.mark.parametrize("os_id, version, tag", [
    ("ubuntu", "22.04", "ubuntu22.04"), ("ubuntu", "24.04", "ubuntu24.04"), ("rhel", "9.4", "rhel9.4"),
    ("rhel", "10.0", "rhel10"), ("rhel", "10", "rhel10"), ("rocky", "9.5", "rocky9"), ("rhcos", "4.16", "rhcos4.16"),
])
def test_the_driver_os_tag_from_nfd_labels(os_id, version, tag):
    assert images.driver_os_tag({images.OS_ID_LABEL: os_id, images.OS_VERSION_LABEL: version}) == tag


@pytest.mark.parametrize("labels", [None, {}, {images.OS_ID_LABEL: "ubuntu"}, {images.OS_VERSION_LABEL: "22.04"},
                                    {images.OS_ID_LABEL: "", images.OS_VERSION_LABEL: "22.04"}])
def test_no_driver_os_tag_without_both_labels(labels):
    assert images.driver_os_tag(labels) is None


# ----- the images a release pulls ---------------------------------------------------------------

def test_a_standalone_release_pulls_the_operands_on_by_default():
    found = images.operator_images("gpu-operator", "v26.3.3", V26_3_3, "standalone", {})
    assert [i["component"] for i in found] == ["operator", "validator", "driver", "driver.manager", "toolkit",
                                               "devicePlugin", "gfd", "migManager", "dcgmExporter",
                                               "node-feature-discovery"]
    assert found[0] == {"release": "gpu-operator", "component": "operator", "repository": "nvcr.io/nvidia/gpu-operator",
                        "tag": "v26.3.3", "ref": "nvcr.io/nvidia/gpu-operator:v26.3.3"}
    assert refs(found)["gfd"] == "nvcr.io/nvidia/k8s-device-plugin:v0.19.3"
    assert refs(found)["node-feature-discovery"] == "registry.k8s.io/nfd/node-feature-discovery:v0.18.3"


def test_a_gpucluster_release_pulls_the_dra_driver_and_no_clusterpolicy_operand():
    components = [i["component"] for i in images.operator_images("op", "v26.7.0", V26_7_0, "gpucluster", {})]
    assert "draDriver" in components and "toolkit" not in components and "devicePlugin" not in components
    assert refs(images.operator_images("op", "v26.7.0", V26_7_0, "gpucluster", {}))["draDriver"] == \
        "nvcr.io/nvidia/dra-driver-nvidia-gpu:v0.5.0"


def test_the_driver_is_listed_once_per_os_in_order():
    found = images.operator_images("op", "v26.3.3", V26_3_3, "standalone", {},
                                   os_tags=["ubuntu22.04", "rhel9.4", "ubuntu22.04"])
    assert [i["tag"] for i in found if i["component"] == "driver"] == ["580.126.20-rhel9.4", "580.126.20-ubuntu22.04"]


def test_the_users_values_change_repository_image_and_tag():
    values = {"operator": {"version": "v26.3.3-custom"},
              "toolkit": {"repository": "m.example.com/tk", "image": "toolkit", "version": "v9"},
              "node-feature-discovery": {"image": {"repository": "m.example.com/nfd", "tag": "v0.99"}}}
    found = refs(images.operator_images("op", "v26.3.3", V26_3_3, "standalone", values))
    assert found["operator"] == "nvcr.io/nvidia/gpu-operator:v26.3.3-custom"
    assert found["validator"] == "nvcr.io/nvidia/gpu-operator:v26.3.3"
    assert found["toolkit"] == "m.example.com/tk/toolkit:v9"
    assert found["node-feature-discovery"] == "m.example.com/nfd:v0.99"


def test_switches_turn_operands_off_and_on_strings_included():
    off = refs(images.operator_images("op", "v26.3.3", V26_3_3, "standalone",
                                      {"driver": {"enabled": False}, "gds": {"enabled": True}, "nfd": {"enabled": "false"},
                                       "dcgm": {"enabled": "true"}, "toolkit": {"enabled": False}}))
    # gds runs inside the driver's pod: without the driver there is none
    for component in ("driver", "driver.manager", "gds", "node-feature-discovery", "toolkit"):
        assert component not in off
    assert off["dcgm"] == "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04"


def test_sandbox_operands_follow_the_sandbox_mode():
    kubevirt = refs(images.operator_images("op", "v26.3.3", V26_3_3, "standalone", {"sandboxWorkloads": {"enabled": True}}))
    assert "sandboxDevicePlugin" in kubevirt and "kataSandboxDevicePlugin" not in kubevirt and "ccManager" not in kubevirt
    assert kubevirt["vfioManager"] == "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.11.0"
    kata = refs(images.operator_images("op", "v26.3.3", V26_3_3, "standalone",
                                       {"sandboxWorkloads": {"enabled": "True", "mode": "kata"}}))
    assert "sandboxDevicePlugin" not in kata
    assert kata["kataSandboxDevicePlugin"] == "nvcr.io/nvidia/cloud-native/nvidia-sandbox-device-plugin:v0.0.3"
    assert kata["ccManager"] == "nvcr.io/nvidia/cloud-native/k8s-cc-manager:v0.4.0"
    # a mode without sandboxWorkloads.enabled turns nothing on
    assert "ccManager" not in refs(images.operator_images("op", "v26.3.3", V26_3_3, "standalone",
                                                          {"sandboxWorkloads": {"mode": "kata"}}))


def test_a_version_specific_image_replaces_the_tables_default():
    found = refs(images.operator_images("op", "v25.10.0", V25_10_0, "standalone", {"sandboxWorkloads": {"enabled": True}}))
    assert found["vfioManager"] == "nvcr.io/nvidia/cuda:13.0.1-base-ubi9"
    assert found["operator.initContainer"] == "nvcr.io/nvidia/cuda:13.0.1-base-ubi9"


@pytest.mark.parametrize("chart_version, ref", [
    ("0.4.1", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"),
    ("v0.4.1", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"),
    # 0.5.0 keeps the repository (read in main's values.yaml, which has every 0.5.0 change)
    ("0.5.0", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"),
])
def test_the_dra_driver_image_is_tagged_v_and_the_charts_version(chart_version, ref):
    repository, tag = ref.split(":")
    assert images.dra_driver_images("dra", "dra-driver-nvidia-gpu", chart_version, {}) == [
        {"release": "dra", "component": "draDriver", "repository": repository, "tag": tag, "ref": ref}]


def test_the_dra_driver_image_follows_the_values():
    found = images.dra_driver_images("dra", "nvidia-dra-driver-gpu", "25.12.0",
                                     {"image": {"repository": "m.example.com/dra", "tag": 25}})
    assert found[0]["ref"] == "m.example.com/dra:25"
    assert images.dra_driver_images("dra", "nvidia-dra-driver-gpu", "25.12.0", {})[0]["ref"] == \
        "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"


def test_unique_refs_keep_the_order_first_met():
    found = [{"ref": "a:1"}, {"ref": "b:1"}, {"ref": "a:1"}, {"ref": "c:1"}, {"ref": "b:1"}]
    assert images.unique_refs(found) == ["a:1", "b:1", "c:1"]
    assert images.unique_refs([]) == []
