"""gpu_operator_checks: the plan's options, the cluster, the values NVIDIA's charts refuse, and the cautions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_checks as checks
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.nvidia.operator_plans import plan


def test_gpu_operator_plan_module_names_its_options():
    problems = checks.input_problems({"version": "26.3", "namespace": "ok", "dra_driver_namespace": "ok",
                                      "release_name": "a", "dra_driver_release_name": "a",
                                      "min_kubernetes_version": "1.35", "chart_source": "oci"})
    text = " | ".join(problems)
    assert "version is '26.3'" in text and "same release" in text and "oci_repository" in text


@pytest.mark.parametrize("mode, ok", [("memory", True), ("12", True), ("", True), ("disabled", False),
                                      ("0", False), ("half", False)])
def test_the_role_variable_is_checked_before_anything_with_its_own_name(mode, ok):
    params = {"version": "v26.7.0", "dra_consumable_shares": mode, "namespace": "gpu-operator",
              "dra_driver_namespace": "nvidia-dra-driver-gpu", "release_name": "gpu-operator",
              "dra_driver_release_name": "nvidia-dra-driver-gpu", "min_kubernetes_version": "1.35",
              "gpu_node_selector": "nvidia.com/gpu.present=true", "dra_nodes": []}
    errors = checks.input_problems(params, lambda option: "gpu_operator_" + option)
    assert (errors == []) == ok, errors
    if not ok:
        assert errors[0].startswith("gpu_operator_dra_consumable_shares is %r" % mode)


def test_check_cluster():
    assert checks.check_cluster("v1.35.4", True, "1.35") == []
    assert "below the minimum" in checks.check_cluster("v1.34.2", True, "1.35")[0]
    assert "below the minimum" in checks.check_cluster("v1.35.1", True, "1.35.2")[0]
    assert "resource.k8s.io/v1" in checks.check_cluster("v1.36.0", False, "1.35")[0]
    with pytest.raises(catalog.PlanError, match="not a Kubernetes version"):
        checks.check_cluster("v1.36.0", True, "1.3x")
    assert checks.check_cluster("v1.36.0", False, "1.35", dra_enabled=False) == []


@pytest.mark.parametrize("extra,dra_extra,match", [
    ({"clusterPolicy": {"deployCR": True}}, None, "both true"),
    ({"driver": {"nvidiaDriverCRD": {"enabled": False}}}, None, "nvidiaDriverCRD"),
])
def test_refusals_of_the_gpucluster_chart(extra, dra_extra, match):
    with pytest.raises(catalog.PlanError, match=match):
        plan("v26.7.0", "gpucluster", operator_extra_values=extra, dra_driver_extra_values=dra_extra)


def test_standalone_chart_beside_the_operator_managed_driver_is_refused():
    with pytest.raises(catalog.PlanError, match="must not be installed beside"):
        plan("v26.7.0", "standalone", operator_extra_values={"gpuCluster": {"deployCR": True},
                                                             "clusterPolicy": {"deployCR": False},
                                                             "driver": {"nvidiaDriverCRD": {"enabled": True}}})
    with pytest.raises(catalog.PlanError, match="only apply to the standalone"):
        plan("v26.7.0", "gpucluster", dra_driver_extra_values={"x": 1})


def test_gpu_resources_without_override_is_refused():
    with pytest.raises(catalog.PlanError, match="gpuResourcesEnabledOverride"):
        plan("v26.3.1", dra_driver_extra_values={"gpuResourcesEnabledOverride": False})


@pytest.mark.parametrize("mode", ["0", "-2", "disabled", "Memory", "", "1.5"])
def test_consumable_shares_modes_the_driver_refuses_are_refused(mode):
    with pytest.raises(catalog.PlanError, match="gpu_operator_dra_consumable_shares is .*; NVIDIA's DRA driver takes "
                                                "memory, unlimited or a positive whole number of shares per GPU"):
        gov.dra_driver_settings("gpucluster", None, mode)


def test_disabled_is_told_to_leave_the_variable_empty():
    with pytest.raises(catalog.PlanError, match="leave it empty"):
        checks.consumable_shares_mode("disabled")


# ----- cautions: the plan's notes ----------------------------------------------------------------

def test_a_dra_chart_not_checked_with_the_operator_version_gets_a_caution():
    notes = plan("v26.3.1", dra_driver_version="0.4.0")["notes"]
    assert notes == ["DRA driver chart 0.4.0 was not checked with GPU Operator v26.3.1 (checked with it: 0.4.1, 0.5.0); "
                     "the plan sets it the same values as those."]
    assert [n for n in plan("v26.7.0", dra_driver_version="0.5.1")["notes"] if "(checked with it: 0.5.0, 0.4.1)" in n]


def test_a_partial_migration_says_what_the_operators_validator_does_on_dra_nodes():
    partial = plan("v26.3.1", dra_nodes=["node-b"])
    assert len(partial["notes"]) == 2
    assert "plugin-validation step on the DRA nodes (node-b)" in partial["notes"][0]
    assert "driver upgrades wait for the validator" in partial["notes"][1]
    host_driver = plan("v26.3.1", driver_enabled=False, dra_nodes=["node-b"])
    assert len(host_driver["notes"]) == 1
    # every node on DRA: the device plugin is off, and the operator drops plugin-validation
    assert plan("v26.3.1", dra_nodes=[])["notes"] == []
