"""The smoke test's settings and run verdicts (smoke.py), against plain dicts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke


def pod(name, phase="Pending", node="node-a", conditions=(), waiting=None, message=None, claims=()):
    status = {"phase": phase, "conditions": list(conditions)}
    if waiting:
        status["containerStatuses"] = [{"image": "img", "state": {"waiting": waiting}}]
    if message:
        status["containerStatuses"] = [{"state": {"terminated": {"message": message}}}]
    return {"metadata": {"name": name}, "spec": {"nodeName": node, "resourceClaims": list(claims)}, "status": status}


def test_settings_name_the_options_and_fill_in_their_defaults():
    s = smoke.settings({"count": 2, "pods": 3, "verify": "allocation", "keep": True})
    assert (s.devices_per_claim, s.probe_pods, s.verify_container, s.keep_objects) == (2, 3, False, True)
    assert s.namespace == "dra-gpu-smoke-test" and s.timeout == 300 and s.command == smoke.DEFAULT_COMMAND
    assert s.selectors == [] and s.first_available == [] and s.expect == {} and s.node_selector == {}
    assert (s.namespace_security, s.probe_security) == ("restricted", "restricted")
    unlabelled = smoke.settings({"pod_security": "none"})
    assert (unlabelled.namespace_security, unlabelled.probe_security) == (None, "privileged")
    assert set(smoke.ARGUMENT_SPEC) == set(("namespace device_class count selectors first_available pods image "
                                            "command probe probe_pattern probe_attribute verify driver expect "
                                            "node_selector tolerations pod_security pod_annotations timeout "
                                            "keep share_memory").split())
    assert s.share_memory is None and smoke.settings({"share_memory": "8Gi"}).share_memory == "8Gi"


def test_namespace_and_claim_objects():
    ns = smoke.namespace_manifest("smoke", "baseline")
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert "pod-security.kubernetes.io/enforce" not in smoke.namespace_manifest("smoke", None)["metadata"]["labels"]
    spec = smoke.claim_spec("gpu.nvidia.com")
    shared, ref = smoke.claim_object("smoke-1", "1", spec, True, "resource.k8s.io/v1")
    assert shared["kind"] == "ResourceClaim" and shared["spec"] == spec and ref == {"resourceClaimName": "smoke-1"}
    template, ref = smoke.claim_object("smoke-1", "1", spec, False, "resource.k8s.io/v1")
    assert template["kind"] == "ResourceClaimTemplate" and template["spec"]["spec"] == spec
    assert template["spec"]["metadata"]["labels"][smoke.RUN_LABEL] == "1"
    assert ref == {"resourceClaimTemplateName": "smoke-1"}


@pytest.mark.parametrize("the_pod, kind, words", [
    (pod("p", conditions=[{"type": "PodScheduled", "reason": "Unschedulable",
                           "message": "0/2 nodes: cannot allocate all claims"}]), "unschedulable", "cannot allocate"),
    (pod("p", waiting={"reason": "ImagePullBackOff", "message": "not found"}), "image_pull", "cannot pull image img"),
    (pod("p", waiting={"reason": "CreateContainerConfigError"}), "container_start", "cannot start its probe"),
    (pod("p", phase="Failed", message="boom"), "probe_failed", "failed: boom"),
])
def test_a_pod_that_cannot_complete_fails_with_its_reason(the_pod, kind, words):
    verdict, failure = smoke.pods_verdict([pod("ok", phase="Succeeded"), the_pod], 2, {})
    assert verdict == "failed" and failure.kind == kind and words in str(failure)


def test_pods_are_done_when_every_expected_one_succeeded():
    waiting = pod("p", conditions=[{"type": "PodScheduled", "reason": "Unschedulable", "message": "waiting"}])
    assert smoke.pods_verdict([waiting], 1, {}) is None
    assert smoke.pods_verdict([pod("a", phase="Succeeded")], 2, {}) is None
    done = [pod("a", phase="Succeeded"), pod("b", phase="Succeeded")]
    assert smoke.pods_verdict(done, 2, {}) == ("done", done)
    verdict, failure = smoke.pods_verdict(done, 2, {"b": "strict decoding error"})
    assert failure.kind == "prepare_failed" and failure.details == {"event": "strict decoding error"}


def test_describe_pods_names_what_each_waits_for():
    assert smoke.describe_pods([]) == "no smoke-test pod exists"
    stuck = pod("p", conditions=[{"type": "Ready", "status": "False", "message": "containers not ready"}])
    assert smoke.describe_pods([stuck, pod("q", phase="Running")]) == \
        "pod p: Pending (containers not ready); pod q: Running"


def test_a_claim_keeps_every_pod_it_was_reserved_for():
    first = {"metadata": {"name": "c"}, "status": {"allocation": {}, "reservedFor": [{"name": "p0"}]}}
    later = {"metadata": {"name": "c"}, "status": {"allocation": {}, "reservedFor": [{"name": "p1"}]}}
    kept = smoke.with_every_reservation(later, smoke.with_every_reservation(first, None))
    assert kept["status"]["reservedFor"] == [{"name": "p0"}, {"name": "p1"}]
    assert later["status"]["reservedFor"] == [{"name": "p1"}]


def test_prepare_events_about_the_runs_pods_only():
    refusal = "NodePrepareResources failed for ResourceClaim smoke-1: strict decoding error"
    assert smoke.prepare_event({"involvedObject": {"name": "other-0"}, "message": refusal}, "smoke-1-") is None
    assert smoke.prepare_event({"involved_object": {"name": "smoke-1-0"}, "message": refusal}, "smoke-1-") == \
        ("smoke-1-0", refusal, True)
    assert smoke.prepare_event({"involvedObject": {"name": "smoke-1-0"}, "message": "not registered"},
                               "smoke-1-")[2] is False


def test_claim_names_and_the_result_of_shared_pods():
    shared = [pod("a", phase="Succeeded", claims=[{"name": "gpu", "resourceClaimName": "smoke-1"}]),
              pod("b", phase="Succeeded", node="node-b", claims=[{"name": "gpu", "resourceClaimName": "smoke-1"}])]
    assert smoke.claim_names(shared[0]) == ["smoke-1"]
    generated = pod("c", claims=[{"name": "gpu", "resourceClaimTemplateName": "t"}])
    generated["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "c-gpu-x"}]
    assert smoke.claim_names(generated) == ["c-gpu-x"]
    devices = []
    smoke.add_devices(devices, [{"pool": "node-a", "name": "gpu-0"}])
    smoke.add_devices(devices, [{"pool": "node-a", "name": "gpu-0"}, {"pool": "node-a", "name": "gpu-1"}])
    assert [d["name"] for d in devices] == ["gpu-0", "gpu-1"]
    result = smoke.run_result(shared, devices, [], None, {"a": ["G1"], "b": ["G1"]}, None)
    assert result["node"] == ["node-a", "node-b"]
    assert result["shared"] == {"pods": 2, "same_devices": True, "seen": ["G1"]}
    assert smoke.run_result(shared[:1], devices, [], "alt1", {}, None)["node"] == "node-a"
    assert smoke.run_result(shared[:1], devices, [], "alt1", {}, None)["shared"] is None


def test_selectors_as_the_cluster_checks_read_them():
    assert smoke.node_selector_text({"b": True, "a": "x"}) == "a=x,b=true"
    assert "node_selector a=x matches no node (nodes: n1, n2)" in str(smoke.no_node_matches("a=x", ["n1", "n2"]))
    assert smoke.selector_expressions(["s0"], [{"selectors": ["f0"]}, {}]) == [
        ("selectors[0]", "s0"), ("first_available[0].selectors[0]", "f0")]


def test_own_claims_are_labelled_or_owned_by_the_runs_pods():
    claims = [{"metadata": {"name": "mine", "labels": {smoke.RUN_LABEL: "r1"}}},
              {"metadata": {"name": "generated", "ownerReferences": [{"name": "smoke-r1-0"}]}},
              {"metadata": {"name": "other", "labels": {smoke.RUN_LABEL: "r2"}}}]
    assert smoke.own_claims(claims, "r1", ["smoke-r1-0"]) == ["mine", "generated"]
