from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import workload_migration


def test_workload_migration_role_names_each_bad_entry():
    values = {"workload_migration_device_class": "gpu.nvidia.com", "workload_migration_timeout": 300,
              "workload_migration_workloads": [
                  {"namespace": "ml", "name": "llm"},
                  {"namespace": "ml", "name": "llm", "label_selector": "a=b"},
                  {"namespace": "ml", "name": "batch", "kind": "Job"},
                  {"namespace": "ml", "name": "llm", "method": "rewrite"},
                  {"namespace": "ml", "name": "llm", "colour": "red"}]}
    found = workload_migration.problems(values, [])
    assert len(found) == 4, found
    text = " | ".join(found)
    assert "workload_migration_workloads[1] needs exactly one of name and label_selector" in text
    assert "workload_migration_workloads[2].kind is 'Job'" in text
    assert "workload_migration_workloads[3].method is 'rewrite'; use claim" in text
    assert "workload_migration_workloads[4] has colour" in text
    assert workload_migration.problems(dict(values, workload_migration_workloads=[]), []) == [
        "workload_migration_workloads is []; list the workloads to move, each with namespace and name (or "
        "label_selector), e.g. [{namespace: ml, name: llm}]"]


def test_workload_migration_memory_must_be_a_quantity_in_the_role_and_in_each_entry():
    values = {"workload_migration_device_class": "gpu.nvidia.com", "workload_migration_timeout": 300,
              "workload_migration_memory": "8 GB",
              "workload_migration_workloads": [{"namespace": "ml", "name": "llm", "memory": "8Gi"},
                                               {"namespace": "ml", "name": "vdb", "memory": "0"}]}
    found = workload_migration.problems(values, [])
    assert len(found) == 2, found
    assert found[0].startswith("workload_migration_memory is '8 GB', which is not a quantity")
    assert found[1].startswith("workload_migration_workloads[1].memory is '0'; a share must ask for some memory")
    assert workload_migration.problems(dict(values, workload_migration_memory=""), []) == found[1:]


def migration(*workloads):
    return {"workload_migration_device_class": "gpu.nvidia.com", "workload_migration_timeout": 300,
            "workload_migration_workloads": list(workloads)}


def test_a_workload_list_that_is_not_a_list_is_refused_alone():
    assert workload_migration.problems(dict(migration(), workload_migration_workloads="llm"), [])[0].startswith(
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
    found = workload_migration.problems(migration(entry), [])
    assert len(found) == 1 and words in found[0]


def test_good_workload_entries():
    assert workload_migration.problems(migration(
        {"namespace": "ml", "name": "llm"},
        {"namespace": "ml", "label_selector": "app=train", "kind": "StatefulSet", "claim_mode": "shared",
         "claim_name": "gpus", "device_class": "gpu.nvidia.com", "method": "extended_resource"}), []) == []
