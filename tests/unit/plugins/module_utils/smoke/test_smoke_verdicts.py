"""smoke_verdicts.py: what the pods' states, the kubelet's events and the cluster's nodes mean to a
smoke test, against plain dicts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_verdicts


def pod(name, phase="Pending", node="node-a", conditions=(), waiting=None, message=None, claims=()):
    status = {"phase": phase, "conditions": list(conditions)}
    if waiting:
        status["containerStatuses"] = [{"image": "img", "state": {"waiting": waiting}}]
    if message:
        status["containerStatuses"] = [{"state": {"terminated": {"message": message}}}]
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "resourceClaims": list(claims)}, "status": status}


@pytest.mark.parametrize("the_pod, kind, words", [
    (pod("p", conditions=[{"type": "PodScheduled", "reason": "Unschedulable",
                           "message": "0/2 nodes: cannot allocate all claims"}]), "unschedulable", "cannot allocate"),
    (pod("p", waiting={"reason": "ImagePullBackOff", "message": "not found"}), "image_pull", "cannot pull image img"),
    (pod("p", waiting={"reason": "CreateContainerConfigError"}), "container_start", "cannot start its probe"),
    (pod("p", phase="Failed", message="boom"), "probe_failed", "failed: boom"),
])
def test_a_pod_that_cannot_complete_fails_with_its_reason(the_pod, kind, words):
    verdict, failure = smoke_verdicts.pods_verdict([pod("ok", phase="Succeeded"), the_pod], 2, {})
    assert verdict == "failed" and failure.kind == kind and words in str(failure)


def test_pods_are_done_when_every_expected_one_succeeded():
    waiting = pod("p", conditions=[{"type": "PodScheduled", "reason": "Unschedulable", "message": "waiting"}])
    assert smoke_verdicts.pods_verdict([waiting], 1, {}) is None
    assert smoke_verdicts.pods_verdict([pod("a", phase="Succeeded")], 2, {}) is None
    done = [pod("a", phase="Succeeded"), pod("b", phase="Succeeded")]
    assert smoke_verdicts.pods_verdict(done, 2, {}) == ("done", done)
    verdict, failure = smoke_verdicts.pods_verdict(done, 2, {"b": "strict decoding error"})
    assert failure.kind == "prepare_failed" and failure.details == {"event": "strict decoding error"}


def test_describe_pods_names_what_each_waits_for():
    assert smoke_verdicts.describe_pods([]) == "no smoke-test pod exists"
    stuck = pod("p", conditions=[{"type": "Ready", "status": "False", "message": "containers not ready"}])
    assert smoke_verdicts.describe_pods([stuck, pod("q", phase="Running")]) == \
        "pod p: Pending (containers not ready); pod q: Running"


def test_a_claim_keeps_every_pod_it_was_reserved_for():
    first = {"metadata": {"name": "c"}, "status": {"allocation": {}, "reservedFor": [{"name": "p0"}]}}
    later = {"metadata": {"name": "c"}, "status": {"allocation": {}, "reservedFor": [{"name": "p1"}]}}
    kept = smoke_verdicts.with_every_reservation(later, smoke_verdicts.with_every_reservation(first, None))
    assert kept["status"]["reservedFor"] == [{"name": "p0"}, {"name": "p1"}]
    assert later["status"]["reservedFor"] == [{"name": "p1"}]


def test_prepare_events_about_the_runs_pods_only():
    refusal = "NodePrepareResources failed for ResourceClaim smoke-1: strict decoding error"
    assert smoke_verdicts.prepare_event({"involvedObject": {"name": "other-0"}, "message": refusal}, "smoke-1-") is None
    assert smoke_verdicts.prepare_event({"involved_object": {"name": "smoke-1-0"}, "message": refusal}, "smoke-1-") == \
        ("smoke-1-0", refusal, True)
    assert smoke_verdicts.prepare_event({"involvedObject": {"name": "smoke-1-0"}, "message": "not registered"},
                                        "smoke-1-")[2] is False


def test_selectors_as_the_cluster_checks_read_them():
    assert smoke_verdicts.node_selector_text({"b": True, "a": "x"}) == "a=x,b=true"
    assert "node_selector a=x matches no node (nodes: n1, n2)" in str(smoke_verdicts.no_node_matches("a=x", ["n1", "n2"]))
    assert smoke_verdicts.selector_expressions(["s0"], [{"selectors": ["f0"]}, {}]) == [
        ("selectors[0]", "s0"), ("first_available[0].selectors[0]", "f0")]


def test_own_claims_are_labelled_or_owned_by_the_runs_pods():
    claims = [{"metadata": {"name": "mine", "labels": {smoke.RUN_LABEL: "r1"}}},
              {"metadata": {"name": "generated", "ownerReferences": [{"name": "smoke-r1-0"}]}},
              {"metadata": {"name": "other", "labels": {smoke.RUN_LABEL: "r2"}}}]
    assert smoke_verdicts.own_claims(claims, "r1", ["smoke-r1-0"]) == ["mine", "generated"]
