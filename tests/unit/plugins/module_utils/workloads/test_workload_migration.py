from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.workloads.workload_specs import container, deployment


def test_each_gpu_container_becomes_a_request_of_its_own_count_and_nothing_else_changes():
    obj = deployment([container("model", 2), container("sidecar"), container("tokenizer", 1)])
    before = copy.deepcopy(obj)
    plan = wm.rewrite("Deployment", obj, "gpu.nvidia.com")
    assert obj == before  # the read object is not touched
    spec = plan["template"]["spec"]
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "llm-gpu"}]
    model, sidecar, tokenizer = spec["containers"]
    assert model["resources"] == {"limits": {"memory": "1Gi"}, "claims": [{"name": "gpu", "request": "model"}]}
    assert sidecar == before["spec"]["template"]["spec"]["containers"][1]
    assert tokenizer["resources"]["claims"] == [{"name": "gpu", "request": "tokenizer"}]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert plan["claim"] == {"kind": "ResourceClaimTemplate", "name": "llm-gpu", "spec": {"devices": {"requests": [
        {"name": "model", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}},
        {"name": "tokenizer", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}]}}}
    assert plan["requests"] == [{"container": "model", "count": 2}, {"container": "tokenizer", "count": 1}]


def test_requests_written_alone_are_removed_and_empty_maps_dropped():
    obj = deployment([{"name": "main", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "1"}}}])
    [main] = wm.rewrite("Deployment", obj, "gpu.nvidia.com")["template"]["spec"]["containers"]
    assert main["resources"] == {"claims": [{"name": "gpu", "request": "main"}]}


def test_shared_mode_names_one_claim_for_all_pods():
    plan = wm.rewrite("Deployment", deployment([container(gpus=1)]), "gpu-mps", mode="shared", name="team-a-gpu")
    assert plan["template"]["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "team-a-gpu"}]
    body = wm.claim_object(plan["claim"], "ml", "Deployment", "llm")
    assert body["kind"] == "ResourceClaim" and body["spec"] == plan["claim"]["spec"]
    assert wm.is_ours(body, "Deployment", "llm") and not wm.is_ours(body, "Deployment", "other")


def test_a_claim_template_carries_the_spec_under_spec_spec():
    plan = wm.rewrite("Deployment", deployment([container(gpus=1)]), "gpu.nvidia.com")
    body = wm.claim_object(plan["claim"], "ml", "Deployment", "llm")
    assert body["apiVersion"] == "resource.k8s.io/v1" and body["metadata"]["namespace"] == "ml"
    assert body["spec"]["spec"] == plan["claim"]["spec"]


def test_an_existing_claim_entry_named_gpu_is_kept_and_a_free_name_taken():
    obj = deployment([container(gpus=1)], claims=[{"name": "gpu", "resourceClaimName": "other"}])
    # a pod with both: refused, not half-converted
    with pytest.raises(wm.MigrationRefused, match="at once"):
        wm.rewrite("Deployment", obj, "gpu.nvidia.com")
    spec = {"resourceClaims": [{"name": "gpu"}, {"name": "gpu-2"}]}
    assert wm._entry_name(spec) == "gpu-3"  # pylint: disable=protected-access


def test_sidecars_are_migrated_plain_init_containers_refused():
    sidecar = container("proxy", 1, restartPolicy="Always")
    plan = wm.rewrite("Deployment", deployment([container(gpus=1)], init=[sidecar]), "gpu.nvidia.com")
    assert [r["container"] for r in plan["requests"]] == ["proxy", "main"]
    with pytest.raises(wm.MigrationRefused, match="init container warmup"):
        wm.rewrite("Deployment", deployment([container(gpus=1)], init=[container("warmup", 1)]), "gpu.nvidia.com")


@pytest.mark.parametrize("kind, why", [("Job", "cannot change"), ("Pod", "cannot change"),
                                       ("CronJob", "next Job"), ("ReplicaSet", "Deployment first")])
def test_kinds_without_a_rollout_are_refused_with_the_reason(kind, why):
    with pytest.raises(wm.MigrationRefused, match=why):
        wm.rewrite(kind, deployment([container(gpus=1)]), "gpu.nvidia.com")


def test_nothing_to_migrate_is_refused():
    with pytest.raises(wm.MigrationRefused, match="no nvidia.com/gpu"):
        wm.rewrite("Deployment", deployment([container()]), "gpu.nvidia.com")


def test_migrated_keeps_the_old_template_and_reverted_restores_it():
    obj = deployment([container(gpus=1)])
    plan = wm.rewrite("Deployment", obj, "gpu.nvidia.com")
    new = wm.migrated(obj, plan, "gpu.nvidia.com", "2026-12-04T19:00:00Z")
    assert wm.status_of("Deployment", new) == "migrated"
    assert wm.status_of("Deployment", obj) == "device-plugin"
    kept = json.loads(new["metadata"]["annotations"][wm.MIGRATION_ANNOTATION])
    assert kept["template"] == obj["spec"]["template"] and kept["claim_name"] == "llm-gpu"
    back, kept = wm.reverted(new)
    assert back["spec"] == obj["spec"] and wm.MIGRATION_ANNOTATION not in back["metadata"]["annotations"]
    assert kept["claim_kind"] == "ResourceClaimTemplate"
    with pytest.raises(wm.MigrationRefused, match="not migrated"):
        wm.reverted(obj)


def test_a_damaged_annotation_is_named():
    obj = deployment([container(gpus=1)])
    obj["metadata"]["annotations"] = {wm.MIGRATION_ANNOTATION: "{not json"}
    with pytest.raises(wm.MigrationRefused, match="remove it"):
        wm.previous(obj)


def test_a_template_written_back_by_gitops_counts_as_not_migrated():
    obj = deployment([container(gpus=1)])
    obj["metadata"]["annotations"] = {wm.MIGRATION_ANNOTATION: json.dumps({"template": {}})}
    assert wm.status_of("Deployment", obj) == "device-plugin"


# ----- a share of a card (issue 27 item 4) ---------------------------------------------------

def test_with_memory_each_one_gpu_container_asks_a_share_of_that_size_and_nothing_else():
    obj = deployment([container("model", 1), container("sidecar"), container("tokenizer", "1")])
    plan = wm.rewrite("Deployment", obj, "gpu.nvidia.com", memory="8Gi")
    assert plan["claim"]["spec"] == {"devices": {"requests": [
        {"name": "model", "exactly": {"deviceClassName": "gpu.nvidia.com", "capacity": {"requests": {"memory": "8Gi"}}}},
        {"name": "tokenizer", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                          "capacity": {"requests": {"memory": "8Gi"}}}}]}}
    assert plan["requests"] == [{"container": "model", "count": 1, "memory": "8Gi"},
                                {"container": "tokenizer", "count": 1, "memory": "8Gi"}]
    # the pod template is the same rewrite as for whole cards
    assert plan["template"] == wm.rewrite("Deployment", obj, "gpu.nvidia.com")["template"]
    assert wm.before_and_after(plan, "gpu.nvidia.com")[1] == (
        "after: ResourceClaimTemplate llm-gpu, request model: 8Gi of one gpu.nvidia.com device, "
        "request tokenizer: 8Gi of one gpu.nvidia.com device")


def test_without_memory_whole_cards_are_asked_for_as_before():
    plan = wm.rewrite("Deployment", deployment([container(gpus=2)]), "gpu.nvidia.com", memory=None)
    assert plan["claim"]["spec"]["devices"]["requests"] == [
        {"name": "main", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]
    assert plan["requests"] == [{"container": "main", "count": 2}]


def test_a_share_of_more_than_one_card_is_refused_naming_the_container_and_what_to_do():
    with pytest.raises(wm.MigrationRefused) as refused:
        wm.rewrite("Deployment", deployment([container("a", 1), container("b", 2)]), "gpu.nvidia.com", memory="8Gi")
    assert "container b asks nvidia.com/gpu: 2" in str(refused.value)
    assert "leave memory unset" in str(refused.value) and "nvidia.com/gpu: 1" in str(refused.value)


def test_a_share_in_one_claim_for_all_pods_is_refused():
    with pytest.raises(wm.MigrationRefused, match="claim_mode template"):
        wm.rewrite("Deployment", deployment([container(gpus=1)]), "gpu.nvidia.com", mode="shared", memory="8Gi")


def test_the_annotation_keeps_the_memory_and_the_report_shows_each_share():
    obj = deployment([container(gpus=1)])
    plan = wm.rewrite("Deployment", obj, "gpu.nvidia.com", memory="8Gi")
    kept = wm.previous(wm.migrated(obj, plan, "gpu.nvidia.com", "now", "8Gi"))
    assert kept["memory"] == "8Gi" and "memory" not in wm.previous(wm.migrated(obj, plan, "c", "now"))
    pods = [{"pod": "llm-1", "node": "node-b", "devices": ["gpu.nvidia.com/node-b/gpu-0"],
             "consumed": [{"memory": "8Gi"}]}]
    assert wm.before_and_after(plan, "gpu.nvidia.com", pods)[2] == \
        "pod llm-1 on node-b: gpu.nvidia.com/node-b/gpu-0 (share of 8Gi memory)"
