"""workload_migration_rollout.py: when a rollout is done, failed or progressing, which pods are left
over or stuck, and what each new pod got from its claim."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_rollout as rollouts
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.workloads.workload_specs import container, deployment


def status(obj, **fields):
    obj = copy.deepcopy(obj)
    obj["status"] = dict({"observedGeneration": 3}, **fields)
    return obj


def test_deployment_rollout_states():
    obj = deployment([container(gpus=1)])
    assert rollouts.rollout("Deployment", status(obj, observedGeneration=2))[0] == "progressing"
    assert rollouts.rollout("Deployment", status(obj, updatedReplicas=2, replicas=3, availableReplicas=2))[0] == "progressing"
    assert rollouts.rollout("Deployment", status(obj, updatedReplicas=2, replicas=2, availableReplicas=2))[0] == "done"
    stalled = status(obj, conditions=[{"type": "Progressing", "reason": "ProgressDeadlineExceeded", "message": "x"}])
    assert rollouts.rollout("Deployment", stalled)[0] == "failed"


def test_statefulset_and_daemonset_rollout_states():
    sts = deployment([container(gpus=1)])
    assert rollouts.rollout("StatefulSet", status(sts, updateRevision="b", currentRevision="a", updatedReplicas=2,
                                                  readyReplicas=2))[0] == "progressing"
    assert rollouts.rollout("StatefulSet", status(sts, updateRevision="b", currentRevision="b", updatedReplicas=2,
                                                  readyReplicas=2))[0] == "done"
    sts["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert rollouts.rollout("StatefulSet", status(sts))[0] == "failed"
    ds = deployment([container(gpus=1)])
    assert rollouts.rollout("DaemonSet", status(ds, desiredNumberScheduled=3, updatedNumberScheduled=3,
                                                numberAvailable=2))[0] == "progressing"
    assert rollouts.rollout("DaemonSet", status(ds, desiredNumberScheduled=3, updatedNumberScheduled=3,
                                                numberAvailable=3))[0] == "done"


def test_label_selector_string():
    obj = {"spec": {"selector": {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["x", "y"]}, {"key": "canary", "operator": "DoesNotExist"}]}}}
    assert rollouts.label_selector(obj) == "a=1,b=2,tier in (x,y),!canary"


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
    assert rollouts.stuck_pods([pod("a", conditions=refused)], "llm-gpu") == [
        "pod a cannot be scheduled: 0/2 nodes are available: 2 cannot allocate all claims."]
    assert rollouts.stuck_pods([pod("old", template=None, conditions=refused)], "llm-gpu") == []
    assert rollouts.stuck_pods([pod("b", waiting={"reason": "ContainerCreating"})], "llm-gpu") == []
    assert rollouts.stuck_pods([pod("c", waiting={"reason": "CrashLoopBackOff", "message": "back-off"})], "llm-gpu") == [
        "pod c container main: CrashLoopBackOff back-off"]


def test_pod_claims_needs_the_allocation_reserved_for_that_pod():
    ready = [{"type": "Ready", "status": "True"}]
    p = pod("a", conditions=ready, claim_status=[{"name": "gpu", "resourceClaimName": "a-gpu-x"}])
    claim = {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-0"}]}}, "reservedFor": [{"uid": "uid-a"}]}}
    seen = rollouts.pod_claims(p, "llm-gpu", {"a-gpu-x": claim})
    assert seen == {"pod": "a", "node": "node-b", "ready": True, "claim": "a-gpu-x", "allocated": True,
                    "devices": ["gpu.nvidia.com/node-b/gpu-0"], "consumed": []}
    claim["status"]["reservedFor"] = [{"uid": "uid-other"}]
    assert not rollouts.pod_claims(p, "llm-gpu", {"a-gpu-x": claim})["allocated"]


def test_a_rollout_is_over_only_when_no_pod_of_the_replaced_template_is_left_terminating_or_not():
    pods = [pod("new"), pod("old", template=None, deleting=True)]
    assert rollouts.pods_left_over(pods, "llm-gpu", on_claim=True) == ["old"]
    assert rollouts.pods_left_over(pods, "llm-gpu", on_claim=False) == ["new"]
    assert rollouts.pods_left_over(pods[:1], "llm-gpu", on_claim=True) == []


def test_pod_claims_reports_the_consumed_capacity_of_each_share():
    pod = {"metadata": {"name": "p", "uid": "u"}, "spec": {"nodeName": "n", "resourceClaims": [
        {"name": "gpu", "resourceClaimTemplateName": "llm-gpu"}]},
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]}}
    claim = {"status": {"reservedFor": [{"uid": "u"}], "allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0", "shareID": "s1",
         "consumedCapacity": {"memory": "8Gi"}}]}}}}
    seen = rollouts.pod_claims(pod, "llm-gpu", {"p-gpu-x": claim})
    assert seen["consumed"] == [{"memory": "8Gi"}] and seen["allocated"]
    whole = dict(claim, status=dict(claim["status"], allocation={"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0"}]}}))
    assert rollouts.pod_claims(pod, "llm-gpu", {"p-gpu-x": whole})["consumed"] == []
