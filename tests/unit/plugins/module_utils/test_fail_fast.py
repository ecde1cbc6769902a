"""Waits that cannot succeed fail at once: nodes that are not there, selectors that are not
conditions, node selectors that match nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_wait, slices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import node_wait
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke_verdicts
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke_run import SmokeRun

NODES = [{"metadata": {"name": n, "labels": {"nvidia.com/gpu.present": "true"}, "resourceVersion": "1"},
          "status": {"nodeInfo": {"kubeletVersion": "v1.35.4"}, "conditions": [{"type": "Ready", "status": "True"}]}}
         for n in ("node-a", "node-b")]
SLICE = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a",
                                             "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                                             "devices": [{"name": "gpu-0", "attributes": {
                                                 "productName": {"string": "NVIDIA A10"}}}]}}


class FakeCore:
    def list_node(self, **kwargs):
        return {"items": NODES}

    def list_namespaced_pod(self, namespace, **kwargs):
        return {"items": []}

    def list_namespaced_event(self, namespace, **kwargs):
        return {"items": []}


class FakeKube:
    def __init__(self):
        self.core = FakeCore()
        self.api = None

    def list_all(self, fn, **kwargs):
        selector = kwargs.get("field_selector")
        items = NODES
        if selector:
            items = [n for n in NODES if "metadata.name=%s" % n["metadata"]["name"] == selector]
        return items, "1"

    def node_names(self, label_selector):
        if label_selector and label_selector != "nvidia.com/gpu.present=true":
            return []
        return [n["metadata"]["name"] for n in NODES]

    def slices(self, driver=None):
        return [SLICE], "1"


def test_node_wait_fails_at_once_for_a_node_that_is_not_there(monkeypatch):
    monkeypatch.setattr(watch, "kube_watcher", lambda *a, **k: lambda version, seconds: iter(()))
    with pytest.raises(node_wait.NotANode) as err:
        node_wait.wait(FakeKube(), ["node-x"], "1.35.4", 300)
    assert "node-x is not a node of the cluster (its nodes: node-a, node-b)" in str(err.value)
    with pytest.raises(node_wait.NotANode, match="node-x is not"):
        node_wait.wait(FakeKube(), ["node-a", "node-x"], None, 300)
    assert [n["name"] for n in node_wait.wait(FakeKube(), ["node-a"], "1.35", 300)] == ["node-a"]


def test_slice_wait_refuses_unknown_nodes_and_non_bool_selectors():
    with pytest.raises(slice_wait.InputError, match="nodes names node-x, which is not a node"):
        slice_wait.check_inputs(FakeKube(), slices.Filters(driver="gpu.nvidia.com", nodes=["node-a", "node-x"]))
    with pytest.raises(slice_wait.InputError) as err:
        slice_wait.check_inputs(FakeKube(), slices.Filters(driver="gpu.nvidia.com"),
                                cel.Selectors(["device.attributes['gpu.nvidia.com'].productName"]))
    assert "gives a string (NVIDIA A10) on device gpu-0, not true or false" in str(err.value)
    # A result typed int is a compile error for the API server: refused when compiled (issue 33).
    with pytest.raises(cel.Invalid, match="not int"):
        cel.Selectors(["1 + 1"])
    slice_wait.check_inputs(FakeKube(), slices.Filters(driver="gpu.nvidia.com", nodes=["node-a"]),
                            cel.Selectors(["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'"]))


def smoke_params(**extra):
    params = {"namespace": "ns", "node_selector": None, "selectors": [], "first_available": None,
              "driver": "gpu.nvidia.com"}
    params.update(extra)
    return params


def test_smoke_test_refuses_a_node_selector_that_matches_no_node():
    run = SmokeRun(FakeKube(), smoke_params(node_selector={"pool": "training"}))
    with pytest.raises(SmokeFailure) as err:
        run.check_cluster()
    assert err.value.kind == "bad_input" and "node_selector pool=training matches no node" in str(err.value)
    assert run.created == [] and run.cleanup() == []
    SmokeRun(FakeKube(), smoke_params(node_selector={"nvidia.com/gpu.present": "true"})).check_cluster()


def test_smoke_test_refuses_selectors_that_are_not_conditions():
    run = SmokeRun(FakeKube(), smoke_params(first_available=[{"name": "a", "selectors": ["device.driver"]}]))
    with pytest.raises(SmokeFailure, match=r"first_available\[0\].selectors\[0\] 'device.driver' gives a string"):
        run.check_cluster()


def test_a_prepare_failure_still_reports_when_the_claim_was_allocated():
    """The driver refuses a pod only after the scheduler placed it: the verdict must not
    return before it has noted the allocation, whichever pod comes first in the list."""
    clock = iter([0.0, 2.5, 9.0]).__next__
    run = SmokeRun(FakeKube(), smoke_params(pods=2), clock=clock)
    run.prepare_failures["probe-0"] = "strict decoding error"
    pods = [{"metadata": {"name": "probe-%d" % i}, "spec": {"nodeName": "node-a"}, "status": {"phase": "Pending"}}
            for i in range(2)]
    verdict, failure = run._pod_verdict(pods)
    assert verdict == "failed" and failure.kind == "prepare_failed"
    assert run.timings == {"allocated_after": 2.5}


# Messages as the kubelet (pkg/kubelet/cm/dra/manager.go, v1.35) and NVIDIA's driver word them.
AUTHORIZER_RACE = ('Failed to prepare dynamic resources: prepare dynamic resources: fetch ResourceClaim smoke-1: '
                   'resourceclaims.resource.k8s.io "smoke-1" is forbidden: User "system:node:w1" cannot get resource '
                   '"resourceclaims" in API group "resource.k8s.io" in the namespace "smoke": no relationship found '
                   "between node 'w1' and this object")
DRIVER_REFUSAL = ("Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for "
                  "ResourceClaim smoke-1: error preparing devices for claim smoke/smoke-1:0f: prepare devices failed: "
                  "strict decoding error: unknown field \"sharing.bogus\"")
LOCK_TIMEOUT = ("Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for "
                "ResourceClaim smoke-1: error acquiring prep/unprep lock: timeout")
NOT_REGISTERED = ("Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.nvidia.com "
                  "is not registered")


@pytest.mark.parametrize("message, final", [(DRIVER_REFUSAL, True), (AUTHORIZER_RACE, False),
                                            (LOCK_TIMEOUT, False), (NOT_REGISTERED, False), ("", False)])
def test_only_the_driver_refusing_a_claim_is_a_verdict(message, final):
    assert smoke_verdicts.prepare_failure_is_final(message) is final


class FakeEventsKube(FakeKube):
    def __init__(self, events):
        super().__init__()
        self.events = events

    def list_all(self, fn, **kwargs):
        return self.events, "1"


def test_the_kubelet_retrying_a_prepare_is_not_a_failure_but_is_named_on_timeout(monkeypatch):
    """CI (stop 23) failed a node upgrade's smoke test on the kubelet's first try, which the node
    authorizer refused because its graph had not yet linked the pod to its claim; the kubelet's
    retry succeeds. Such an event is kept for the timeout message; the driver's refusal fails."""
    monkeypatch.setattr(watch, "kube_watcher", lambda *a, **k: lambda version, seconds: iter(()))
    run = SmokeRun(FakeKube(), smoke_params(pods=1))
    pod = "smoke-%s-0" % run.run_id
    events = [{"metadata": {"name": "e1"}, "involvedObject": {"name": pod}, "message": AUTHORIZER_RACE},
              {"metadata": {"name": "e2"}, "involvedObject": {"name": "someone-else-0"}, "message": DRIVER_REFUSAL}]
    run.kube = FakeEventsKube(events)
    run._record_prepare_failures(0.05).join()
    assert run.prepare_failures == {} and run.prepare_retries == {pod: AUTHORIZER_RACE}
    pending = [{"metadata": {"name": pod}, "spec": {"nodeName": "node-a"}, "status": {"phase": "Pending"}}]
    assert run._pod_verdict(pending) is None

    events.append({"metadata": {"name": "e3"}, "involvedObject": {"name": pod}, "message": DRIVER_REFUSAL})
    run._record_prepare_failures(0.05).join()
    verdict, failure = run._pod_verdict(pending)
    assert verdict == "failed" and failure.kind == "prepare_failed" and "strict decoding" in str(failure)


def test_a_timeout_names_what_the_kubelet_is_retrying(monkeypatch):
    def never(*args, **kwargs):
        raise watch.WaitTimeout("timed out after 1s waiting for the smoke-test pods to complete", state=[])
    run = SmokeRun(FakeKube(), smoke_params(timeout=1))
    run.prepare_retries["smoke-x-0"] = NOT_REGISTERED
    monkeypatch.setattr(run, "_wait_for", never)
    with pytest.raises(SmokeFailure) as err:
        run.wait_for_pods()
    assert err.value.kind == "timeout"
    assert "the kubelet is retrying pod smoke-x-0 after: %s" % NOT_REGISTERED in str(err.value)
