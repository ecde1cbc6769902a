"""smoke_cleanup.py: removing what a smoke test made and the waits on the API, against fakes of
the few calls they make."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_cleanup
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException


def not_found():
    return ApiException(status=404)


class FakeCore:
    def __init__(self, namespace_left=False):
        self.deleted = []
        self.namespace_left = namespace_left

    def delete_namespaced_pod(self, name, namespace, grace_period_seconds=None):
        self.deleted.append("Pod/" + name)

    def delete_namespace(self, name):
        self.deleted.append("Namespace/" + name)

    def read_namespace(self, name):
        if not self.namespace_left:
            raise not_found()
        return {"metadata": {"name": name}}

    def list_namespaced_pod(self, namespace, **kwargs):
        return {"items": []}

    def list_namespace(self, **kwargs):
        return {"items": []}


class FakeCustom:
    def __init__(self, deleted):
        self.deleted = deleted

    def delete_namespaced_custom_object(self, group, version, namespace, plural, name):
        self.deleted.append("%s/%s" % (plural, name))
        raise not_found()


class FakeKube:
    def __init__(self, namespace_left=False, pods_left=()):
        self.core = FakeCore(namespace_left)
        self.custom = FakeCustom(self.core.deleted)
        self.pods_left = list(pods_left)
        self.api = None

    def list_all(self, fn, **kwargs):
        return [{"metadata": {"name": n}} for n in self.pods_left], "1"

    def list_resource(self, plural, namespace=None, **kwargs):
        return [], "1"


def test_cleanup_deletes_newest_first_and_reports_what_is_left(monkeypatch):
    def timeout(*args, **kwargs):
        raise watch.WaitTimeout("timed out", state=[])
    monkeypatch.setattr(smoke_cleanup, "wait_for", timeout)
    created = [("ResourceClaimTemplate", "smoke-r1"), ("Pod", "smoke-r1-0")]
    kube = FakeKube(pods_left=["smoke-r1-0"])
    left = smoke_cleanup.SmokeCleanup(kube, "ns", "r1").remove(created, False)
    assert kube.core.deleted == ["Pod/smoke-r1-0", "resourceclaimtemplates/smoke-r1"]
    assert left == ["Pod/smoke-r1-0"]
    kube = FakeKube(namespace_left=True)
    assert smoke_cleanup.SmokeCleanup(kube, "ns", "r1").remove([("Namespace", "ns")], True) == ["Namespace/ns"]
    assert smoke_cleanup.SmokeCleanup(FakeKube(), "ns", "r1").remove([], False) == []
    monkeypatch.setattr(smoke_cleanup, "wait_for", lambda *a, **k: True)
    assert smoke_cleanup.SmokeCleanup(FakeKube(), "ns", "r1").remove([("Namespace", "ns")], True) == []


def test_cleanup_of_nothing_created_asks_nothing():
    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError("cleanup called %s" % name)
    assert smoke_cleanup.SmokeCleanup(Untouchable(), "ns", "r1").remove([], True) == []


def test_cleanup_stops_on_an_error_other_than_gone():
    class Refusing(FakeCore):
        def delete_namespaced_pod(self, name, namespace, grace_period_seconds=None):
            raise ApiException(status=403)
    kube = FakeKube()
    kube.core = Refusing()
    with pytest.raises(ApiException):
        smoke_cleanup.SmokeCleanup(kube, "ns", "r1").remove([("Pod", "smoke-r1-0")], False)


def test_cleanup_deletes_pods_at_once_and_claim_objects_by_plural(monkeypatch):
    monkeypatch.setattr(smoke_cleanup, "wait_for", lambda *a, **k: True)
    kube = FakeKube()
    created = [("ResourceClaim", "smoke-r1"), ("Pod", "smoke-r1-0"), ("Pod", "smoke-r1-1")]
    assert smoke_cleanup.SmokeCleanup(kube, "ns", "r1").remove(created, False) == []
    assert kube.core.deleted == ["Pod/smoke-r1-1", "Pod/smoke-r1-0", "resourceclaims/smoke-r1"]


class LeftKube:
    """What leftovers lists: the run's pods, the namespace's claims, the run's claim templates."""

    def __init__(self):
        self.core = FakeCore()
        self.asked = []

    def list_all(self, fn, **kwargs):
        self.asked.append(("pods", kwargs))
        return [{"metadata": {"name": "smoke-r1-0"}}], "1"

    def list_resource(self, plural, namespace=None, **kwargs):
        self.asked.append((plural, kwargs))
        if plural == "resourceclaims":
            return [{"metadata": {"name": "smoke-r1", "labels": {smoke.RUN_LABEL: "r1"}}},
                    {"metadata": {"name": "smoke-r1-0-gpu-x", "ownerReferences": [{"name": "smoke-r1-0"}]}},
                    {"metadata": {"name": "someone-elses"}}], "1"
        return [{"metadata": {"name": "smoke-r1"}}], "1"


def test_leftovers_name_pods_own_claims_and_templates_of_the_run():
    kube = LeftKube()
    assert smoke_cleanup.SmokeCleanup(kube, "ns", "r1").leftovers(["smoke-r1-0"], False) == [
        "Pod/smoke-r1-0", "ResourceClaim/smoke-r1", "ResourceClaim/smoke-r1-0-gpu-x", "ResourceClaimTemplate/smoke-r1"]
    selector = {"label_selector": "%s=r1" % smoke.RUN_LABEL}
    assert kube.asked == [("pods", dict(selector, namespace="ns")), ("resourceclaims", {}),
                          ("resourceclaimtemplates", selector)]


def test_leftovers_of_a_run_that_made_its_namespace_are_the_namespace_or_nothing():
    assert smoke_cleanup.SmokeCleanup(FakeKube(namespace_left=True), "ns", "r1").leftovers([], True) == ["Namespace/ns"]
    assert smoke_cleanup.SmokeCleanup(FakeKube(), "ns", "r1").leftovers([], True) == []


def test_wait_for_watches_the_list_call_and_returns_only_the_conditions_result(monkeypatch):
    seen = {}

    def kube_watcher(list_fn, api, **kwargs):
        seen["watcher"] = (list_fn, api, kwargs)
        return "watcher"

    def wait_until(lister, watcher, condition, timeout, description, clock=None, recheck_every=None):
        seen["wait"] = (lister, watcher, condition, timeout, description, clock, recheck_every)
        return "result", {"relists": 0}
    monkeypatch.setattr(watch, "kube_watcher", kube_watcher)
    monkeypatch.setattr(watch, "wait_until", wait_until)
    kube = FakeKube()
    kube.api = "api"
    assert smoke_cleanup.wait_for(kube, "clock", "lister", "list_fn", "condition", "the pods", 30, recheck_every=3,
                                  namespace="ns") == "result"
    assert seen == {"watcher": ("list_fn", "api", {"namespace": "ns"}),
                    "wait": ("lister", "watcher", "condition", 30, "the pods", "clock", 3)}
