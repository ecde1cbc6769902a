"""smoke_run.py: the smoke test's run against the API (creating, waiting, verifying) and the
module's result, against fakes of the few calls it makes; the verdicts themselves are
smoke_verdicts.py's and smoke_checks.py's, the cleanup smoke_cleanup.py's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_cleanup, smoke_run, smoke_share, smoke_verdicts
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke_share_run import ShareRun


@pytest.mark.parametrize("keep, outcome, left, passed, keys", [
    (False, "pass", [], True, {"node", "changed"}),
    (True, "pass", [], True, {"node", "changed"}),
    (False, "pass", ["Pod/p"], False, {"node", "msg", "left_behind"}),
    (False, "fail", [], False, {"msg", "failure", "timings", "output"}),
    (False, "fail", ["Pod/p"], False, {"msg", "failure", "timings", "output", "left_behind"}),
    (False, "api", [], False, {"msg", "failure", "timings"}),
])
def test_the_module_result_of_a_run_and_its_cleanup(monkeypatch, keep, outcome, left, passed, keys):
    cleaned = []

    def run(self):
        if outcome == "fail":
            raise SmokeFailure("probe_failed", "the probe failed", output="boom")
        if outcome == "api":
            raise ApiException()
        return {"node": "node-a"}

    def cleanup(self, timeout=60):
        cleaned.append(True)
        return left
    monkeypatch.setattr(smoke_run.SmokeRun, "run", run)
    monkeypatch.setattr(smoke_run.SmokeRun, "cleanup", cleanup)
    ok, result = smoke_run.run_and_clean_up(RunKube(), {"keep": keep})
    assert ok is passed and set(result) == keys
    assert cleaned == ([] if keep else [True])
    if passed:
        assert result["changed"] is keep
    if outcome == "api":
        assert result["failure"] == "api" and "could not talk to the API server" in result["msg"]


def test_the_result_of_a_failure_carries_its_details_and_the_timings(monkeypatch):
    def run(self):
        self.timings["allocated_after"] = 1.5
        raise SmokeFailure("unschedulable", "no device fits", scheduler_message="0/2 nodes")
    monkeypatch.setattr(smoke_run.SmokeRun, "run", run)
    monkeypatch.setattr(smoke_run.SmokeRun, "cleanup", lambda self, timeout=60: [])
    ok, result = smoke_run.run_and_clean_up(RunKube(), {})
    assert not ok and result == {"msg": "no device fits", "failure": "unschedulable", "scheduler_message": "0/2 nodes",
                                 "timings": {"allocated_after": 1.5}}


def test_a_pass_with_leftovers_fails_naming_them(monkeypatch):
    monkeypatch.setattr(smoke_run.SmokeRun, "run", lambda self: {"node": "node-a"})
    monkeypatch.setattr(smoke_run.SmokeRun, "cleanup", lambda self, timeout=60: ["Pod/p", "ResourceClaim/c"])
    ok, result = smoke_run.run_and_clean_up(RunKube(), {})
    assert not ok and result["msg"] == "the smoke test passed but could not remove Pod/p, ResourceClaim/c"


class RunCore:
    def __init__(self, namespace_status=None):
        self.namespace_status = namespace_status
        self.made = []

    def read_namespace(self, name):
        if self.namespace_status:
            raise ApiException(status=self.namespace_status)
        return {"metadata": {"name": name}}

    def create_namespace(self, body):
        self.made.append(("Namespace", body))
        return body

    def create_namespaced_pod(self, namespace, body):
        self.made.append(("Pod", namespace, body["metadata"]["name"]))
        return body

    def list_namespaced_service_account(self, namespace, **kwargs):
        return {"items": []}

    def list_namespaced_pod(self, namespace, **kwargs):
        return {"items": []}


class RunCustom:
    def __init__(self, made, refuse=False):
        self.made, self.refuse = made, refuse

    def create_namespaced_custom_object(self, group, version, namespace, plural, body):
        if self.refuse:
            exc = ApiException(status=422)
            exc.body = '{"message": "spec.devices: Invalid value"}'
            raise exc
        self.made.append((plural, namespace, body["metadata"]["name"]))
        return body


class RunKube:
    def __init__(self, namespace_status=None, refuse=False):
        self.core = RunCore(namespace_status)
        self.custom = RunCustom(self.core.made, refuse)
        self.api = None

    def list_all(self, fn, **kwargs):
        return fn(**kwargs)["items"], "1"


def new_run(kube=None, clock=None, **params):
    params.setdefault("namespace", "smoke")
    if clock is None:
        return smoke_run.SmokeRun(kube or RunKube(), params)
    return smoke_run.SmokeRun(kube or RunKube(), params, clock=clock)


def test_each_object_is_created_with_its_call_and_remembered_in_order():
    run = new_run()
    run.create("Pod", {"metadata": {"name": "p"}})
    run.create("ResourceClaimTemplate", {"metadata": {"name": "t"}})
    assert run.kube.core.made == [("Pod", "smoke", "p"), ("resourceclaimtemplates", "smoke", "t")]
    assert run.created == [("Pod", "p"), ("ResourceClaimTemplate", "t")]


def test_an_object_the_api_server_refuses_fails_the_run_and_is_not_remembered():
    run = new_run(RunKube(refuse=True))
    with pytest.raises(SmokeFailure) as err:
        run.create("ResourceClaim", {"metadata": {"name": "c"}})
    assert err.value.kind == "rejected"
    assert str(err.value) == "the API server refused the smoke test's ResourceClaim: spec.devices: Invalid value"
    assert run.created == []


def test_the_claim_is_a_template_for_one_pod_and_shared_for_several():
    one = new_run(pods=1)
    assert one._claim_ref() == {"resourceClaimTemplateName": "smoke-%s" % one.run_id}
    several = new_run(pods=3)
    assert several._claim_ref() == {"resourceClaimName": "smoke-%s" % several.run_id}
    assert several.created == [("ResourceClaim", "smoke-%s" % several.run_id)]


def test_an_existing_namespace_is_used_as_it_is():
    run = new_run()
    run._ensure_namespace()
    assert run.kube.core.made == [] and run.namespace_created is False


def test_a_missing_namespace_is_made_with_its_pod_security_and_waited_for(monkeypatch):
    run = new_run(RunKube(namespace_status=404), pod_security="baseline")
    waited = []

    def wait(kube, clock, lister, list_fn, condition, description, timeout, **kwargs):
        waited.append(description)
        assert list_fn == kube.core.list_namespaced_service_account and kwargs == {"namespace": "smoke"}
        assert condition([{"metadata": {"name": "builder"}}]) is None
        assert condition([{"metadata": {"name": "default"}}]) is True
    monkeypatch.setattr(smoke_cleanup, "wait_for", wait)
    run._ensure_namespace()
    kind, body = run.kube.core.made[0]
    assert kind == "Namespace" and body["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert run.namespace_created is True and run.created == [("Namespace", "smoke")]
    assert waited == ["the default service account of namespace smoke"]


def test_a_namespace_that_cannot_be_read_is_an_error_not_a_reason_to_create_one():
    run = new_run(RunKube(namespace_status=403))
    with pytest.raises(ApiException):
        run._ensure_namespace()
    assert run.kube.core.made == []


def test_no_node_selector_and_no_selectors_read_nothing():
    class NoReads:
        def __getattr__(self, name):
            raise AssertionError("check_cluster called %s" % name)
    smoke_run.SmokeRun(NoReads(), {}).check_cluster()


def scheduled(name, node=None, phase="Pending"):
    return {"metadata": {"name": name}, "spec": {"nodeName": node} if node else {}, "status": {"phase": phase}}


def test_the_allocation_time_is_when_the_first_pod_got_a_node_and_is_kept():
    # the clock is read at the start and once more, when a pod first has a node
    run = new_run(clock=iter([10.0, 12.5]).__next__, pods=1)
    assert run._pod_verdict([scheduled("p")]) is None
    assert run.timings == {}
    assert run._pod_verdict([scheduled("p", "node-a")]) is None
    assert run._pod_verdict([scheduled("p", "node-a", "Succeeded")]) == ("done", [scheduled("p", "node-a", "Succeeded")])
    assert run.timings == {"allocated_after": 2.5}


def test_done_pods_are_returned_with_the_completion_time(monkeypatch):
    run = new_run(clock=iter([0.0, 1.0, 4.25]).__next__)
    pods = [scheduled("p", "node-a", "Succeeded")]
    monkeypatch.setattr(run, "_wait_for", lambda *a, **k: ("done", pods))
    assert run.wait_for_pods() == pods
    assert run.timings == {"completed_after": 4.25}


def test_a_failed_verdict_is_raised_as_it_is(monkeypatch):
    failure = SmokeFailure("probe_failed", "the probe in pod p failed: boom")
    run = new_run()
    monkeypatch.setattr(run, "_wait_for", lambda *a, **k: ("failed", failure))
    with pytest.raises(SmokeFailure) as err:
        run.wait_for_pods()
    assert err.value is failure


def test_a_pods_claims_are_paired_with_what_the_claim_watch_recorded(monkeypatch):
    monkeypatch.setattr(smoke_run, "CLAIM_WATCH_LAG", 0.01)
    run = new_run()
    pod = {"metadata": {"name": "p"}, "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "c1"}]}}
    run.claims["c1"] = {"metadata": {"name": "c1"}}
    assert run.claims_of([pod]) == [(pod, {"metadata": {"name": "c1"}})]
    del run.claims["c1"]
    with pytest.raises(SmokeFailure) as err:
        run.claims_of([pod])
    assert err.value.kind == "not_allocated"
    assert str(err.value) == "claim c1 of pod p was never seen allocated and reserved"


def test_a_pod_watch_that_times_out_fails_the_run_naming_the_pods_state(monkeypatch):
    run = new_run()
    seen = {}

    def wait(lister, list_fn, condition, description, timeout, **kwargs):
        seen.update(kwargs, description=description, condition=condition)
        raise watch.WaitTimeout("timed out waiting for %s" % description, state=[scheduled("h")])
    monkeypatch.setattr(run, "_wait_for", wait)
    with pytest.raises(SmokeFailure) as err:
        run.watch_pod("h", smoke_verdicts.holder_scheduled, "pod h to be scheduled")
    assert err.value.kind == "timeout" and str(err.value).startswith("timed out waiting for pod h to be scheduled; ")
    assert "h" in str(err.value)[len("timed out waiting for pod h to be scheduled; "):]
    assert seen == {"namespace": "smoke", "field_selector": "metadata.name=h", "description": "pod h to be scheduled",
                    "condition": smoke_verdicts.holder_scheduled}


def test_a_shared_claim_is_held_by_a_scheduled_pod_before_any_probe_is_made(monkeypatch):
    # Without the holder, a claim whose first probe is done before the next is scheduled is
    # deallocated and may be allocated anew on another node: the probes would not share a GPU.
    run = new_run(pods=2)
    steps = []
    for name in ("check_cluster", "_ensure_namespace", "_record_claims", "_record_prepare_failures"):
        monkeypatch.setattr(run, name, lambda *a, **k: None)

    def wait(lister, list_fn, condition, description, timeout, **kwargs):
        steps.append(("wait", kwargs.get("field_selector") or kwargs.get("label_selector")))
        if condition is smoke_verdicts.holder_scheduled:
            assert condition([scheduled("smoke-%s-hold" % run.run_id)]) is None
            return condition([scheduled("smoke-%s-hold" % run.run_id, "node-a")])
        return "done", [scheduled("p", "node-a", "Succeeded")]
    monkeypatch.setattr(run, "_wait_for", wait)
    monkeypatch.setattr(run, "verify", lambda pods: {})
    made = run.kube.core.made
    original = run.kube.core.create_namespaced_pod

    def create(namespace, body):
        steps.append(("Pod", body["metadata"]["name"], body["metadata"]["labels"][smoke.ROLE_LABEL]))
        return original(namespace, body)
    monkeypatch.setattr(run.kube.core, "create_namespaced_pod", create)
    run.run()
    rid = run.run_id
    assert made[0] == ("resourceclaims", "smoke", "smoke-%s" % rid)
    assert steps[:2] == [("Pod", "smoke-%s-hold" % rid, smoke.HOLDER), ("wait", "metadata.name=smoke-%s-hold" % rid)]
    assert steps[2:] == [("Pod", "smoke-%s-0" % rid, smoke.PROBE), ("Pod", "smoke-%s-1" % rid, smoke.PROBE),
                         ("wait", "%s,%s=%s" % (run.selector, smoke.ROLE_LABEL, smoke.PROBE))]


def test_a_claim_for_one_pod_has_no_holder(monkeypatch):
    run = new_run(pods=1)
    for name in ("check_cluster", "_ensure_namespace", "_record_claims", "_record_prepare_failures"):
        monkeypatch.setattr(run, name, lambda *a, **k: None)
    monkeypatch.setattr(run, "_wait_for", lambda *a, **k: ("done", [scheduled("p", "node-a", "Succeeded")]))
    monkeypatch.setattr(run, "verify", lambda pods: {})
    run.run()
    assert [m[2] for m in run.kube.core.made if m[0] == "Pod"] == ["smoke-%s-0" % run.run_id]


def test_a_shares_device_is_looked_up_in_its_pools_newest_generation():
    def item(generation, node):
        return {"metadata": {"name": "s%d" % generation}, "spec": {
            "driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": "p", "generation": generation},
            "devices": [{"name": "gpu-0", "attributes": {"uuid": {"string": "GPU-%d" % generation}}}]}}
    share = {"driver": "gpu.nvidia.com", "pool": "p", "device": "gpu-0"}
    found = ShareRun(new_run())._published([item(1, "node-a"), item(2, "node-b")], share)
    assert (found["node"], smoke_share.published_attribute(found, "uuid")) == ("node-b", "GPU-2")
    with pytest.raises(SmokeFailure, match="allocated device gpu.nvidia.com/p/gpu-1 is in no ResourceSlice"):
        ShareRun(new_run())._published([item(2, "node-b")], dict(share, device="gpu-1"))
