from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils import inputs, role_inputs, smoke


@pytest.mark.parametrize("value", [0, -1, "0", "-3", True, None, "two", 1.5])
def test_counts_below_one_or_not_whole_are_refused(value):
    with pytest.raises(inputs.InputError) as err:
        inputs.integer("smoke_test_count", value)
    assert "smoke_test_count" in str(err.value) and "at least 1" in str(err.value) or "whole number" in str(err.value)


def test_counts_and_zero_where_allowed():
    assert inputs.integer("n", "3") == 3
    assert inputs.integer("grace", 0, minimum=0) == 0


@pytest.mark.parametrize("text", ["1.3x", "1.35.x", "v1.35.4.1", "1.35-rc", "latest1", "", "1"])
def test_versions_must_be_written_in_full(text):
    with pytest.raises(inputs.InputError) as err:
        inputs.version("cluster_upgrade_target", text, latest=True)
    assert "cluster_upgrade_target" in str(err.value) and "1.35" in str(err.value)


def test_good_versions():
    assert inputs.version("t", "1.35") == (1, 35, None)
    assert inputs.version("t", "v1.35.4") == (1, 35, 4)
    assert inputs.version("t", "latest", latest=True) == "latest"
    with pytest.raises(inputs.InputError, match="needs a patch"):
        inputs.version("available_versions[0]", "1.35", exact=True)


@pytest.mark.parametrize("check,value,words", [
    (inputs.dns_label, "Bad_NS", "namespace name"),
    (inputs.dns_label, "a" * 64, "at most 63"),
    (inputs.helm_release, "x" * 54, "at most 53"),
    (inputs.helm_release, "My-Release", "Helm refuses"),
    (inputs.dns_subdomain, "gpu_class", "lowercase"),
])
def test_names(check, value, words):
    with pytest.raises(inputs.InputError) as err:
        check("the_name", value)
    assert "the_name" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("selector,ok", [
    ("nvidia.com/gpu.present=true", True), ("a=b,c!=d", True), ("!a", True), ("a in (x, y)", True),
    ("a notin (x)", True), ("", True), ("a=b=c", False), ("=b", False), ("a in x", False), ("!a=b", False),
])
def test_label_selectors(selector, ok):
    if ok:
        inputs.label_selector("sel", selector)
    else:
        with pytest.raises(inputs.InputError, match="not a label selector"):
            inputs.label_selector("sel", selector)


def test_duplicates_and_inventory():
    with pytest.raises(inputs.InputError, match="names a more than once"):
        inputs.unique("device_classes_list", ["a", "b", "a"], "class")
    with pytest.raises(inputs.InputError) as err:
        inputs.in_inventory("preflight_gpu_hosts", ["gpu-9", "localhost"], ["gpu-1"])
    assert "gpu-9" in str(err.value) and "not in the inventory" in str(err.value) and "gpu-1" in str(err.value)


def test_labels_need_string_values():
    inputs.labels("node_selector", {"nvidia.com/gpu.present": "true", "x": True})
    with pytest.raises(inputs.InputError, match="label values are strings"):
        inputs.labels("node_selector", {"a": {"b": 1}})
    with pytest.raises(inputs.InputError, match="not a label key"):
        inputs.labels("node_selector", {"bad key": "x"})


def test_collect_reports_every_problem():
    problems = inputs.collect([lambda: inputs.integer("a", 0), lambda: inputs.integer("b", 2),
                               lambda: inputs.version("c", "x")])
    assert len(problems) == 2 and problems[0].startswith("a ") and problems[1].startswith("c ")


def test_device_classes_role_refuses_a_class_named_twice_and_bad_entries():
    values = {"device_classes_state": "present",
              "device_classes_list": [{"name": "gpu", "selectors": ["true"]}, {"name": "gpu", "selectors": ["x"]},
                                      {"name": "Bad_Name", "selectors": [""]},
                                      {"name": "cfg", "config": [{"driver": "x"}]}],
              "device_classes_managed_label_key": "app.kubernetes.io/managed-by",
              "device_classes_managed_label_value": "dra.gpu.device_classes"}
    found = role_inputs.problems("device_classes", values)
    text = " | ".join(found)
    assert "names gpu more than once" in text
    assert "device_classes_list[2] (Bad_Name).name" in text
    assert "device_classes_list[2] (Bad_Name).selectors[0]" in text
    assert "device_classes_list[3] (cfg).config[0]" in text


def test_gpu_operator_role_names_its_variables():
    values = {"gpu_operator_state": "present", "gpu_operator_version": "v26.3.1", "gpu_operator_namespace": "GPU_Op",
              "gpu_operator_dra_driver_namespace": "nvidia-dra-driver-gpu", "gpu_operator_release_name": "x" * 60,
              "gpu_operator_dra_driver_release_name": "nvidia-dra-driver-gpu", "gpu_operator_min_kubernetes_version": "1.3x",
              "gpu_operator_gpu_node_selector": "a==b==c", "gpu_operator_dra_nodes": ["n", "n"],
              "gpu_operator_timeout": 0, "gpu_operator_slice_timeout": 300, "gpu_operator_chart_source": "repo"}
    text = " | ".join(role_inputs.problems("gpu_operator", values))
    for words in ("gpu_operator_namespace is 'GPU_Op'", "gpu_operator_release_name", "at most 53",
                  "gpu_operator_min_kubernetes_version is '1.3x'", "gpu_operator_gpu_node_selector",
                  "gpu_operator_dra_nodes names n more than once", "gpu_operator_timeout is 0"):
        assert words in text


def test_gpu_operator_plan_module_names_its_options():
    problems = inputs.collect(gov.input_checks({"version": "26.3", "namespace": "ok", "dra_driver_namespace": "ok",
                                                "release_name": "a", "dra_driver_release_name": "a",
                                                "min_kubernetes_version": "1.35", "chart_source": "oci"}))
    text = " | ".join(problems)
    assert "version is '26.3'" in text and "same release" in text and "oci_repository" in text


def test_helm_connection_options():
    assert role_inputs.inputs.collect(role_inputs.helm_connection({"kubeconfig": "/k", "context": "c"})) == []
    found = role_inputs.inputs.collect(role_inputs.helm_connection({"client_cert": "/c", "client_key": "/k"}))
    assert "client_cert, client_key" in found[0] and "cannot reach Helm" in found[0]
    found = role_inputs.inputs.collect(role_inputs.helm_connection({"context": "c", "validate_certs": False}))
    assert "context and validate_certs" in found[0]


def test_smoke_test_role_and_module_checks():
    values = {"smoke_test_count": 0, "smoke_test_pods": -1, "smoke_test_timeout": 300, "smoke_test_slice_timeout": 0,
              "smoke_test_namespace": "dra-gpu-smoke-test", "smoke_test_device_class": "gpu.nvidia.com",
              "smoke_test_selectors": [], "smoke_test_node_selector": {},
              "smoke_test_first_available": [{"name": "a", "count": 0}, {"name": "a"}],
              "smoke_test_expect": {"min_memory": "lots"}, "smoke_test_wait_node_selector": "x=y"}
    text = " | ".join(role_inputs.problems("smoke_test", values))
    for words in ("smoke_test_count is 0", "smoke_test_pods is -1", "smoke_test_slice_timeout is 0",
                  "smoke_test_first_available[0].count is 0", "smoke_test_first_available names a more than once",
                  "smoke_test_expect.min_memory is 'lots'"):
        assert words in text
    module = inputs.collect(smoke.input_checks({"count": 1, "pods": 1, "timeout": 0, "namespace": "ns",
                                                "device_class": "gpu.nvidia.com"}))
    assert module == ["timeout is 0; it must be at least 1 (seconds to wait)"]


def test_preflight_and_cluster_upgrade_roles():
    text = " | ".join(role_inputs.problems("preflight", {"preflight_min_version": "1.3x",
                                                         "preflight_gpu_hosts": ["gpu-1", "gpu-9"]}, ["gpu-1"]))
    assert "preflight_min_version is '1.3x'" in text and "preflight_gpu_hosts names gpu-9" in text
    values = {"cluster_upgrade_target": "1.3x", "cluster_upgrade_available_versions": ["1.35"],
              "cluster_upgrade_dra_min_version": "1.35", "cluster_upgrade_api_host": "ctl",
              "cluster_upgrade_repo_url": "https://pkgs.k8s.io/core:/stable:/v{minor}",
              "cluster_upgrade_drain_timeout": 0, "cluster_upgrade_drain_retry_delay": 10,
              "cluster_upgrade_drain_grace_period": 0, "cluster_upgrade_node_ready_timeout": -1,
              "cluster_upgrade_node_names": {"w1": "node-1", "w2": "node-1"}}
    text = " | ".join(role_inputs.problems("cluster_upgrade", values, ["w1", "w2"]))
    for words in ("cluster_upgrade_target is '1.3x'", "cluster_upgrade_available_versions[0] is '1.35'",
                  "cluster_upgrade_api_host names ctl", "cluster_upgrade_drain_timeout is 0",
                  "cluster_upgrade_node_ready_timeout is -1", "node-1 (w1, w2)"):
        assert words in text
    assert "grace" not in text
    assert role_inputs.problems("cluster_upgrade", dict(values, cluster_upgrade_target="1.35",
                                                        cluster_upgrade_available_versions=["1.35.4"],
                                                        cluster_upgrade_api_host="localhost",
                                                        cluster_upgrade_drain_timeout=360,
                                                        cluster_upgrade_node_ready_timeout=300,
                                                        cluster_upgrade_node_names={"w1": "n1"})) == []


def test_workload_migration_role_names_each_bad_entry():
    values = {"workload_migration_device_class": "gpu.nvidia.com", "workload_migration_timeout": 300,
              "workload_migration_workloads": [
                  {"namespace": "ml", "name": "llm"},
                  {"namespace": "ml", "name": "llm", "label_selector": "a=b"},
                  {"namespace": "ml", "name": "batch", "kind": "Job"},
                  {"namespace": "ml", "name": "llm", "method": "rewrite"},
                  {"namespace": "ml", "name": "llm", "colour": "red"}]}
    found = role_inputs.problems("workload_migration", values)
    assert len(found) == 4, found
    text = " | ".join(found)
    assert "workload_migration_workloads[1] needs exactly one of name and label_selector" in text
    assert "workload_migration_workloads[2].kind is 'Job'" in text
    assert "workload_migration_workloads[3].method is 'rewrite'; use claim" in text
    assert "workload_migration_workloads[4] has colour" in text
    assert role_inputs.problems("workload_migration", dict(values, workload_migration_workloads=[])) == [
        "workload_migration_workloads is []; list the workloads to move, each with namespace and name (or "
        "label_selector), e.g. [{namespace: ml, name: llm}]"]
