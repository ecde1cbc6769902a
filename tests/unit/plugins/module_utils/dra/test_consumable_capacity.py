from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity as cc


class FakeCustom:
    """Answers a dry-run create as an API server does: with or without the capacity requests."""

    def __init__(self, keeps):
        self.keeps, self.calls = keeps, []

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, dry_run=None):
        self.calls.append((group, version, namespace, plural, dry_run))
        answer = copy.deepcopy(body)
        if not self.keeps:
            del answer["spec"]["devices"]["requests"][0]["exactly"]["capacity"]
        answer["spec"]["devices"]["requests"][0]["exactly"].update(allocationMode="ExactCount", count=1)
        return answer


class FakeKube:
    def __init__(self, version, keeps):
        self.version, self.custom = version, FakeCustom(keeps)

    def server_version(self):
        return self.version


def test_a_server_that_drops_the_request_is_refused_naming_both_fixes():
    kube = FakeKube("v1.35.4", keeps=False)
    found = cc.availability(kube)
    assert kube.custom.calls == [("resource.k8s.io", "v1", "default", "resourceclaims", "All")]
    assert not found["available"]
    reason = found["reason"]
    assert reason.startswith("this API server (v1.35.4) drops a claim's capacity requests")
    assert "Upgrade to Kubernetes 1.36 or later" in reason
    assert "turn the feature gate DRAConsumableCapacity on for kube-apiserver, kube-scheduler, " \
           "kube-controller-manager and every kubelet" in reason


def test_a_server_that_keeps_it_is_available_and_says_what_it_could_not_see():
    found = cc.availability(FakeKube("v1.37.2", keeps=True), namespace="team-a")
    assert found["available"]
    assert "keeps a claim's capacity requests" in found["reason"]
    assert "cannot tell whether DRAConsumableCapacity is on for kube-scheduler" in found["reason"]


def test_the_probe_asks_for_memory_through_exactly():
    body = cc.probe_claim("team-a")
    assert body["metadata"] == {"name": cc.PROBE_CLAIM, "namespace": "team-a"}
    assert body["spec"]["devices"]["requests"][0]["exactly"]["capacity"] == {"requests": {"memory": "1Mi"}}
    assert cc.keeps_capacity_requests(body)


def test_an_answer_without_requests_or_spec_counts_as_dropped():
    assert not cc.keeps_capacity_requests({})
    assert not cc.keeps_capacity_requests({"spec": {"devices": {"requests": []}}})
    assert not cc.keeps_capacity_requests({"spec": {"devices": {"requests": [{"exactly": {"capacity": {}}}]}}})
