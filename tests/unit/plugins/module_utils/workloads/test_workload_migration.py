from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm


def container(name="main", gpus=None, **extra):
    resources = {"limits": {"nvidia.com/gpu": gpus, "memory": "1Gi"}} if gpus is not None else {}
    return dict({"name": name, "image": "vllm", "resources": resources}, **extra)


def deployment(containers, init=None, claims=None, name="llm"):
    spec = {"containers": containers, "nodeSelector": {"nvidia.com/gpu.present": "true"}}
    if init:
        spec["initContainers"] = init
    if claims:
        spec["resourceClaims"] = claims
    return {"metadata": {"name": name, "namespace": "ml", "generation": 3, "labels": {"team": "a"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


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


def status(obj, **fields):
    obj = copy.deepcopy(obj)
    obj["status"] = dict({"observedGeneration": 3}, **fields)
    return obj


def test_deployment_rollout_states():
    obj = deployment([container(gpus=1)])
    assert wm.rollout("Deployment", status(obj, observedGeneration=2))[0] == "progressing"
    assert wm.rollout("Deployment", status(obj, updatedReplicas=2, replicas=3, availableReplicas=2))[0] == "progressing"
    assert wm.rollout("Deployment", status(obj, updatedReplicas=2, replicas=2, availableReplicas=2))[0] == "done"
    stalled = status(obj, conditions=[{"type": "Progressing", "reason": "ProgressDeadlineExceeded", "message": "x"}])
    assert wm.rollout("Deployment", stalled)[0] == "failed"


def test_statefulset_and_daemonset_rollout_states():
    sts = deployment([container(gpus=1)])
    assert wm.rollout("StatefulSet", status(sts, updateRevision="b", currentRevision="a", updatedReplicas=2,
                                            readyReplicas=2))[0] == "progressing"
    assert wm.rollout("StatefulSet", status(sts, updateRevision="b", currentRevision="b", updatedReplicas=2,
                                            readyReplicas=2))[0] == "done"
    sts["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert wm.rollout("StatefulSet", status(sts))[0] == "failed"
    ds = deployment([container(gpus=1)])
    assert wm.rollout("DaemonSet", status(ds, desiredNumberScheduled=3, updatedNumberScheduled=3,
                                          numberAvailable=2))[0] == "progressing"
    assert wm.rollout("DaemonSet", status(ds, desiredNumberScheduled=3, updatedNumberScheduled=3,
                                          numberAvailable=3))[0] == "done"


def test_label_selector_string():
    obj = {"spec": {"selector": {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["x", "y"]}, {"key": "canary", "operator": "DoesNotExist"}]}}}
    assert wm.label_selector(obj) == "a=1,b=2,tier in (x,y),!canary"


def pod(name, template="llm-gpu", conditions=None, waiting=None, claim_status=None, deleting=False):
    status = {"conditions": conditions or []}
    if waiting:
        status["containerStatuses"] = [{"name": "main", "state": {"waiting": waiting}}]
    if claim_status:
        status["resourceClaimStatuses"] = claim_status
    meta = {"name": name, "uid": "uid-" + name}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T19:00:00Z"
    claims = [{"name": "gpu", "resourceClaimTemplateName": template}] if template else []
    return {"metadata": meta, "spec": {"nodeName": "node-b", "resourceClaims": claims}, "status": status}


def test_stuck_pods_are_those_of_the_new_template_the_scheduler_cannot_place_or_start():
    refused = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/2 nodes are available: 2 cannot allocate all claims."}]
    assert wm.stuck_pods([pod("a", conditions=refused)], "llm-gpu") == [
        "pod a cannot be scheduled: 0/2 nodes are available: 2 cannot allocate all claims."]
    assert wm.stuck_pods([pod("old", template=None, conditions=refused)], "llm-gpu") == []
    assert wm.stuck_pods([pod("b", waiting={"reason": "ContainerCreating"})], "llm-gpu") == []
    assert wm.stuck_pods([pod("c", waiting={"reason": "CrashLoopBackOff", "message": "back-off"})], "llm-gpu") == [
        "pod c container main: CrashLoopBackOff back-off"]


def test_pod_claims_needs_the_allocation_reserved_for_that_pod():
    ready = [{"type": "Ready", "status": "True"}]
    p = pod("a", conditions=ready, claim_status=[{"name": "gpu", "resourceClaimName": "a-gpu-x"}])
    claim = {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-0"}]}}, "reservedFor": [{"uid": "uid-a"}]}}
    seen = wm.pod_claims(p, "llm-gpu", {"a-gpu-x": claim})
    assert seen == {"pod": "a", "node": "node-b", "ready": True, "claim": "a-gpu-x", "allocated": True,
                    "devices": ["gpu.nvidia.com/node-b/gpu-0"], "consumed": []}
    claim["status"]["reservedFor"] = [{"uid": "uid-other"}]
    assert not wm.pod_claims(p, "llm-gpu", {"a-gpu-x": claim})["allocated"]


def test_a_rollout_is_over_only_when_no_pod_of_the_replaced_template_is_left_terminating_or_not():
    pods = [pod("new"), pod("old", template=None, deleting=True)]
    assert wm.pods_left_over(pods, "llm-gpu", on_claim=True) == ["old"]
    assert wm.pods_left_over(pods, "llm-gpu", on_claim=False) == ["new"]
    assert wm.pods_left_over(pods[:1], "llm-gpu", on_claim=True) == []


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


def test_pod_claims_reports_the_consumed_capacity_of_each_share():
    pod = {"metadata": {"name": "p", "uid": "u"}, "spec": {"nodeName": "n", "resourceClaims": [
        {"name": "gpu", "resourceClaimTemplateName": "llm-gpu"}]},
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]}}
    claim = {"status": {"reservedFor": [{"uid": "u"}], "allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0", "shareID": "s1",
         "consumedCapacity": {"memory": "8Gi"}}]}}}}
    seen = wm.pod_claims(pod, "llm-gpu", {"p-gpu-x": claim})
    assert seen["consumed"] == [{"memory": "8Gi"}] and seen["allocated"]
    whole = dict(claim, status=dict(claim["status"], allocation={"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0"}]}}))
    assert wm.pod_claims(pod, "llm-gpu", {"p-gpu-x": whole})["consumed"] == []


@pytest.mark.parametrize("value,words", [
    ("8 GB", "not a quantity"), ("lots", "not a quantity"), ("0", "some memory"), ("-1Gi", "some memory"),
])
def test_memory_that_is_not_a_positive_quantity_is_refused_naming_the_option(value, words):
    with pytest.raises(wm.inputs.InputError) as refused:
        wm.check_memory("memory", value)
    assert str(refused.value).startswith("memory is ") and words in str(refused.value)


def test_memory_quantities_are_read_exactly():
    assert wm.check_memory("memory", "8Gi") == 8 * 2 ** 30 and wm.check_memory("memory", "8192Mi") == 8 * 2 ** 30


# As NVIDIA's plugin (main at 95932046, taken as 0.5.0) publishes an L4 in memory mode.
def shared_gpu(name="gpu-0", memory="23034Mi", multiple=True, policy=True):
    capacity = {"value": memory}
    if policy:
        capacity["requestPolicy"] = {"default": memory, "validRange": {"min": "1Mi", "max": memory, "step": "1Mi"}}
    device = {"name": name, "attributes": {}, "capacity": {"memory": capacity}}
    if multiple:
        device["allowMultipleAllocations"] = True
    return device


def test_a_share_is_offered_by_a_device_that_takes_several_allocations_and_has_the_memory():
    assert wm.share_refusal("gpu.nvidia.com", [("node-b", shared_gpu())], "8Gi") is None
    assert wm.share_refusal("gpu.nvidia.com", [("node-b", shared_gpu(multiple=False)),
                                               ("node-a", shared_gpu("gpu-1"))], "22Gi") is None


def test_no_device_of_the_class_is_refused_naming_the_class():
    assert "DeviceClass small selects no published device" in wm.share_refusal("small", [], "8Gi")


def test_devices_without_multiple_allocations_are_refused_naming_consumable_shares():
    refusal = wm.share_refusal("gpu.nvidia.com", [("node-b", shared_gpu(multiple=False, policy=False))], "8Gi")
    assert "takes more than one allocation" in refusal and "ConsumableShares" in refusal
    assert "leave memory unset" in refusal


def test_a_share_larger_than_any_device_allows_is_refused_naming_the_largest():
    matched = [("node-a", shared_gpu("gpu-0", "23028Mi")), ("node-b", shared_gpu("gpu-1", "23034Mi"))]
    refusal = wm.share_refusal("gpu.nvidia.com", matched, "24Gi")
    assert "can give a share of 24Gi: the most one allows is 23034Mi (gpu-1 on node-b)" in refusal
    # a request policy's maximum below the memory limits a share too
    capped = shared_gpu()
    capped["capacity"]["memory"]["requestPolicy"]["validRange"]["max"] = "8Gi"
    assert "the most one allows is 8Gi" in wm.share_refusal("c", [("n", capped)], "9Gi")
    assert wm.share_refusal("c", [("n", capped)], "8Gi") is None
