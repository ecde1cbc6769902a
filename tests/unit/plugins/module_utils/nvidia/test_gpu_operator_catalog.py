"""gpu_operator_catalog: the chart versions known, the DRA chart per version and its rename, the layouts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.nvidia.operator_plans import plan


# ----- the catalog read directly -------------------------------------------------------------------

def test_chart_versions_are_read_with_or_without_v_and_written_both_ways():
    assert catalog.parse_version("v26.3.1") == catalog.parse_version(" 26.3.1 ") == (26, 3, 1)
    assert catalog.version_text((26, 3, 1)) == "v26.3.1" and catalog.dra_version_text((0, 4, 1)) == "0.4.1"
    for text in ("26.3", "latest", None, "v26.3.1-rc1"):
        with pytest.raises(catalog.PlanError, match="is not a chart version"):
            catalog.parse_version(text)


def test_every_offered_dra_chart_has_a_known_name():
    for info in catalog.OPERATOR_VERSIONS.values():
        for version in info["dra_drivers"]:
            assert catalog.dra_driver_chart(version) in (nvidia.DRA_CHART, nvidia.OLD_DRA_CHART)
    assert catalog.dra_driver_chart("25.12.0") == "nvidia-dra-driver-gpu"
    assert catalog.dra_driver_chart("0.5.0") == "dra-driver-nvidia-gpu"


@pytest.mark.parametrize("version,dra_enabled,mode,layout", [
    ("v26.3.1", True, "auto", "standalone"), ("v26.7.0", True, "auto", "standalone"),
    ("v26.7.0", True, "gpucluster", "gpucluster"), ("v26.7.0", False, "gpucluster", "device_plugin")])
def test_a_version_and_mode_give_a_layout(version, dra_enabled, mode, layout):
    assert catalog.resolve_layout(version, dra_enabled, mode) == layout


def test_an_unknown_mode_is_refused_by_name():
    with pytest.raises(catalog.PlanError, match="gpu_operator_dra_mode must be one of auto, standalone, gpucluster"):
        catalog.resolve_layout("v26.3.1", True, "operator")


def test_a_fresh_install_needs_no_rename_and_no_crds():
    assert catalog.dra_chart_upgrade("dra-driver-nvidia-gpu", (0, 5, 0), None) == {
        "name_override": None, "apply_crds": False, "from": None}


# ----- the catalog as the plan uses it -------------------------------------------------------------

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
    for version in catalog.supported_operator_versions():
        assert plan(version)["notes"] == [], version


def test_dra_driver_version_override_changes_the_chart_name():
    dra = plan("v26.3.1", dra_driver_version="v25.12.0")["releases"][1]
    assert (dra["chart"], dra["chart_version"]) == ("nvidia-dra-driver-gpu", "25.12.0")
    with pytest.raises(catalog.PlanError, match="DRA driver chart 1.0.0"):
        plan("v26.3.1", dra_driver_version="v1.0.0")


@pytest.mark.parametrize("version", ["v25.10.1", "v26.3.1"])
def test_gpucluster_refused_before_26_7(version):
    with pytest.raises(catalog.PlanError, match="needs GPU Operator v26.7"):
        plan(version, "gpucluster")


@pytest.mark.parametrize("version", ["v26.4.0", "v27.1.0", "v24.9.2", "latest", "26.3"])
def test_unknown_minors_are_refused_with_the_known_list(version):
    with pytest.raises(catalog.PlanError) as info:
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
    with pytest.raises(catalog.PlanError, match="going back to 25.12.0 is not supported"):
        plan("v25.10.1", installed_dra_driver={"name": "nvidia-dra-driver-gpu-kubelet-plugin", "version": "0.4.1"})
