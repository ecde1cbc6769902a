from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs import role_inputs
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke


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


def test_helm_connection_options():
    assert role_inputs.helm_connection({"kubeconfig": "/k", "context": "c"}) == []
    found = role_inputs.helm_connection({"client_cert": "/c", "client_key": "/k"})
    assert "client_cert, client_key" in found[0] and "cannot reach Helm" in found[0]
    found = role_inputs.helm_connection({"context": "c", "validate_certs": False})
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
    module = smoke.input_problems({"count": 1, "pods": 1, "timeout": 0, "namespace": "ns",
                                   "device_class": "gpu.nvidia.com"})
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


def test_workload_migration_memory_must_be_a_quantity_in_the_role_and_in_each_entry():
    values = {"workload_migration_device_class": "gpu.nvidia.com", "workload_migration_timeout": 300,
              "workload_migration_memory": "8 GB",
              "workload_migration_workloads": [{"namespace": "ml", "name": "llm", "memory": "8Gi"},
                                               {"namespace": "ml", "name": "vdb", "memory": "0"}]}
    found = role_inputs.problems("workload_migration", values)
    assert len(found) == 2, found
    assert found[0].startswith("workload_migration_memory is '8 GB', which is not a quantity")
    assert found[1].startswith("workload_migration_workloads[1].memory is '0'; a share must ask for some memory")
    assert role_inputs.problems("workload_migration", dict(values, workload_migration_memory="")) == found[1:]


def test_an_unknown_role_is_named_with_the_known_ones():
    assert role_inputs.problems("gpu_magic", {}) == [
        "role must be one of %s, not 'gpu_magic'" % ", ".join(role_inputs.ROLES)]


# ----- device_classes -------------------------------------------------------------------------

MANAGED = {"device_classes_managed_label_key": "app.kubernetes.io/managed-by",
           "device_classes_managed_label_value": "dra.gpu.device_classes"}


def test_a_class_list_that_is_not_a_list_is_the_only_problem_named():
    assert role_inputs.problems("device_classes", dict(MANAGED, device_classes_list={"name": "gpu"})) == [
        "device_classes_list is {'name': 'gpu'}; it must be a list of classes, each with name and selectors"]


def test_an_entry_that_is_not_a_mapping_is_named_by_its_index():
    found = role_inputs.problems("device_classes", dict(MANAGED, device_classes_list=[
        {"name": "gpu", "selectors": ["true"]}, "gpu-2"]))
    assert found == ["device_classes_list[1] is 'gpu-2'; each class is a mapping with name and selectors"]


def test_classes_are_not_checked_when_they_are_to_be_removed():
    values = dict(MANAGED, device_classes_state="absent", device_classes_list="not even a list")
    assert role_inputs.problems("device_classes", values) == []
    bad_key = dict(values, device_classes_managed_label_key="bad key")
    assert "device_classes_managed_label_key has the key 'bad key'" in role_inputs.problems("device_classes", bad_key)[0]


def test_good_classes_pass():
    values = dict(MANAGED, device_classes_list=[{"name": "gpu.example.com", "selectors": ["true"],
                                                 "labels": {"team": "ml"}}])
    assert role_inputs.problems("device_classes", values) == []


# ----- gpu_operator ---------------------------------------------------------------------------

REMOVAL = {"gpu_operator_state": "absent", "gpu_operator_namespace": "gpu-operator",
           "gpu_operator_dra_driver_namespace": "nvidia-dra-driver-gpu", "gpu_operator_release_name": "gpu-operator",
           "gpu_operator_dra_driver_release_name": "nvidia-dra-driver-gpu", "gpu_operator_timeout": 600,
           "gpu_operator_slice_timeout": 300, "gpu_operator_eviction_timeout": 300}


def test_a_removal_checks_only_the_names_and_waits():
    assert role_inputs.problems("gpu_operator", dict(REMOVAL, gpu_operator_version="not checked")) == []
    found = role_inputs.problems("gpu_operator", dict(REMOVAL, gpu_operator_namespace="GPU",
                                                      gpu_operator_eviction_timeout=0))
    assert len(found) == 2
    assert found[0].startswith("gpu_operator_namespace is 'GPU'")
    assert found[1].startswith("gpu_operator_eviction_timeout is 0")


def test_the_image_list_file_must_be_writable_where_it_is_to_go(tmp_path):
    assert role_inputs.problems("gpu_operator", dict(REMOVAL, gpu_operator_image_list_file=str(tmp_path / "i.txt"))) == []
    missing = str(tmp_path / "no-such-dir" / "i.txt")
    found = role_inputs.problems("gpu_operator", dict(REMOVAL, gpu_operator_image_list_file=missing))
    assert found == ["gpu_operator_image_list_file is %r: it must be a file in a directory that exists and can be "
                     "written (%s); create the directory or pick another path" % (missing, os.path.dirname(missing))]
    found = role_inputs.problems("gpu_operator", dict(REMOVAL, gpu_operator_image_list_file=str(tmp_path)))
    assert len(found) == 1 and "it must be a file" in found[0]


# ----- gpu_sharing ----------------------------------------------------------------------------

def sharing(**values):
    return dict({"gpu_sharing_state": "present", "gpu_sharing_mig_timeout": 900, "gpu_sharing_classes": [],
                 "gpu_sharing_mig_nodes": [], "gpu_sharing_mig_layout": ""}, **values)


MIG_1G = {"name": "mig-1g", "strategy": "mig", "profile": "1g.10gb"}
MIG_3G = {"name": "mig-3g", "strategy": "mig", "profile": "3g.40gb"}


def test_sharing_class_problems_are_given_as_they_are():
    too_many = {"name": "a", "strategy": "mps", "mps": {"active_thread_percentage": 101}}
    found = role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[too_many]))
    assert len(found) == 1 and found[0].startswith("gpu_sharing_classes[0]") and "must be 0 to 100" in found[0]


def test_mig_nodes_need_a_layout_unless_one_profile_names_it():
    assert role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[MIG_1G], gpu_sharing_mig_nodes=["w1"])) == []
    found = role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[MIG_1G, MIG_3G],
                                                        gpu_sharing_mig_nodes=["w1"]))
    assert found == ["gpu_sharing_mig_nodes is set but gpu_sharing_mig_layout is empty and the mig classes name 2 "
                     "profiles (1g.10gb, 3g.40gb), so no all-<profile> layout follows from them; set "
                     "gpu_sharing_mig_layout (for example all-balanced)"]


def test_gpu_sharing_claim_templates_are_checked_against_the_memory_classes():
    memory = {"name": "nvidia-gpu-memory", "strategy": "memory"}
    good = {"name": "gpu-8gi", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"}
    assert role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[memory],
                                                       gpu_sharing_claim_templates=[good])) == []
    found = role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[memory], gpu_sharing_claim_templates=[
        dict(good, memory="eight")]))
    assert len(found) == 1 and found[0].startswith("gpu_sharing_claim_templates[0].memory is 'eight'")
    # state absent removes them whatever they say
    assert role_inputs.problems("gpu_sharing", sharing(gpu_sharing_state="absent", gpu_sharing_claim_templates=[
        dict(good, memory="eight")])) == []
    assert "name 0 profiles (no)" in role_inputs.problems("gpu_sharing", sharing(gpu_sharing_mig_nodes=["w1"]))[0]
    assert role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[MIG_1G, MIG_3G], gpu_sharing_mig_nodes=["w1"],
                                                       gpu_sharing_mig_layout="all-balanced")) == []
    assert role_inputs.problems("gpu_sharing", sharing(gpu_sharing_classes=[MIG_1G, MIG_3G])) == []


def test_removing_sharing_checks_only_the_mig_settings():
    values = sharing(gpu_sharing_state="absent", gpu_sharing_classes=[{"strategy": "nonsense"}],
                     gpu_sharing_mig_nodes=["w1", "w1"], gpu_sharing_mig_timeout=0)
    found = role_inputs.problems("gpu_sharing", values)
    assert len(found) == 2
    assert found[0].startswith("gpu_sharing_mig_timeout is 0") and "gpu_sharing_mig_nodes names w1 more than once" in found[1]


# ----- cluster_upgrade ------------------------------------------------------------------------

UPGRADE = {"cluster_upgrade_target": "latest", "cluster_upgrade_available_versions": [],
           "cluster_upgrade_dra_min_version": "1.34", "cluster_upgrade_api_host": "localhost"}


def test_the_repository_url_needs_its_minor_placeholder():
    assert role_inputs.problems("cluster_upgrade", UPGRADE) == []
    found = role_inputs.problems("cluster_upgrade", dict(UPGRADE, cluster_upgrade_repo_url="https://pkgs.k8s.io/v1.35"))
    assert found == ["cluster_upgrade_repo_url is 'https://pkgs.k8s.io/v1.35', without {minor}: every hop would read "
                     "the same repository; write it like https://pkgs.k8s.io/core:/stable:/v{minor}"]


@pytest.mark.parametrize("option, lowest", [("cluster_upgrade_drain_grace_period", 0), ("cluster_upgrade_api_retry_timeout", 0),
                                            ("cluster_upgrade_api_restart_window", 0), ("cluster_upgrade_api_retry_delay", 1),
                                            ("cluster_upgrade_api_ready_timeout", 1)])
def test_each_wait_option_has_its_own_minimum(option, lowest):
    assert role_inputs.problems("cluster_upgrade", dict(UPGRADE, **{option: lowest})) == []
    found = role_inputs.problems("cluster_upgrade", dict(UPGRADE, **{option: lowest - 1}))
    assert len(found) == 1 and found[0].startswith("%s is %d" % (option, lowest - 1))


# ----- workload_migration ---------------------------------------------------------------------

def migration(*workloads):
    return {"workload_migration_device_class": "gpu.nvidia.com", "workload_migration_timeout": 300,
            "workload_migration_workloads": list(workloads)}


def test_a_workload_list_that_is_not_a_list_is_refused_alone():
    assert role_inputs.problems("workload_migration", dict(migration(), workload_migration_workloads="llm"))[0].startswith(
        "workload_migration_workloads is 'llm'; list the workloads to move")


@pytest.mark.parametrize("entry, words", [
    ("ml/llm", "workload_migration_workloads[0] is 'ml/llm'; each workload is a mapping"),
    ({"namespace": "ml"}, "needs exactly one of name and label_selector"),
    ({"namespace": "ML", "name": "llm"}, "workload_migration_workloads[0].namespace is 'ML'"),
    ({"namespace": "ml", "label_selector": "a==b==c"}, "workload_migration_workloads[0].label_selector"),
    ({"namespace": "ml", "name": "llm", "kind": "Widget"}, "kind is 'Widget'; use one of Deployment, StatefulSet, DaemonSet"),
    ({"namespace": "ml", "name": "llm", "kind": "CronJob"}, "kind is 'CronJob'; a CronJob's next Job"),
    ({"namespace": "ml", "name": "llm", "device_class": "GPU"}, "workload_migration_workloads[0].device_class is 'GPU'"),
    ({"namespace": "ml", "name": "llm", "claim_mode": "per_node"}, "claim_mode is 'per_node'; use template"),
])
def test_bad_workload_entries(entry, words):
    found = role_inputs.problems("workload_migration", migration(entry))
    assert len(found) == 1 and words in found[0]


def test_good_workload_entries():
    assert role_inputs.problems("workload_migration", migration(
        {"namespace": "ml", "name": "llm"},
        {"namespace": "ml", "label_selector": "app=train", "kind": "StatefulSet", "claim_mode": "shared",
         "claim_name": "gpus", "device_class": "gpu.nvidia.com", "method": "extended_resource"})) == []


# ----- connection options Helm cannot take ----------------------------------------------------

def test_one_option_helm_cannot_take_is_named_in_the_singular():
    found = role_inputs.helm_connection({"proxy": "http://p:3128", "username": "", "password": None})
    assert len(found) == 1
    assert found[0].startswith("the connection option proxy (a task option")
    assert "put it into a kubeconfig" in found[0]


def test_context_and_ca_cert_are_refused_together_but_not_alone():
    found = role_inputs.helm_connection({"context": "c", "ca_cert": "/ca.pem"})
    assert found == ["the connection options context and ca_cert are set together, which kubernetes.core.helm refuses; "
                     "drop ca_cert and keep it in the kubeconfig of that context (certificate-authority, "
                     "insecure-skip-tls-verify)"]
    assert role_inputs.helm_connection({"ca_cert": "/ca.pem", "validate_certs": True}) == []
    assert role_inputs.helm_connection({"context": None, "validate_certs": False}) == []


def test_a_null_api_host_is_named_not_a_traceback():
    problems = role_inputs.problems("cluster_upgrade", {"cluster_upgrade_api_host": None}, ["cp-1"])
    assert any("cluster_upgrade_api_host names None" in p for p in problems)


def test_a_password_in_a_proxy_or_host_option_is_refused_naming_the_way_out():
    options = {"proxy": "http://bob:pr0xy-pw@p:3128", "host": "https://h:6443"}
    found = role_inputs.credentials_in_urls(options)
    assert len(found) == 1 and "proxy" in found[0] and "http://bob:***@p:3128" in found[0]
    assert "proxy_basic_auth" in found[0] and "K8S_AUTH_PROXY" in found[0] and "pr0xy-pw" not in found[0]
    found = role_inputs.credentials_in_urls({"host": "https://admin:adm1n@h:6443"})
    assert "https://admin:***@h:6443" in found[0] and "api_key" in found[0]
    assert role_inputs.credentials_in_urls({"proxy": "http://p:3128", "host": None}) == []
    assert role_inputs.credentials_in_urls({"proxy": "http://b:pw@p:1"}, skip=("proxy",)) == []
