"""usage_claims: each allocated claim in use or idle (and why), named after its workload, and
since when it is allocated, from API-shaped lists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.report import usage_claims
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.report.usage_api_lists import claim, pod, run


def test_a_template_claim_is_held_by_its_running_pod_and_named_after_its_deployment():
    pods = [pod("team-a", "train-7d9f8-x2x", owner=("ReplicaSet", "train-7d9f8"), template_hash="7d9f8",
                scheduled="2026-12-05T13:00:00Z")]
    claims = [claim("team-a", "train-7d9f8-x2x-gpu-abcde", [("node-a", "gpu-1")], ["train-7d9f8-x2x"],
                    from_template=True)]
    result = run(claims, pods)
    entry = result["claims"][0]
    assert entry["state"] == "in_use" and entry["shared"] is False and entry["devices"] == ["node-a/gpu-1"]
    assert entry["pods"][0]["owner"] == {"kind": "Deployment", "name": "train"}
    expected = ("2026-12-05T13:00:00Z", "pod scheduled", 3 * 3600)
    assert (entry["since"], entry["since_source"], entry["age_seconds"]) == expected
    device = result["nodes"][0]["devices"][1]
    assert device["state"] == "in_use" and device["claim"]["name"] == "train-7d9f8-x2x-gpu-abcde"
    assert result["summary"]["in_use"] == 1 and result["summary"]["free"] == 5 and result["idle"] == []


@pytest.mark.parametrize("the_pod, reason", [
    (pod("ml", "job-x-0", phase="Pending", waiting="ImagePullBackOff", owner=("Job", "job-x")),
     "pod ml/job-x-0 is Pending (ImagePullBackOff)"),
    (pod("ml", "job-x-0", phase="Succeeded", owner=("Job", "job-x")),
     "pod ml/job-x-0 has Succeeded and the claim is not yet released"),
    (pod("ml", "job-x-0", phase="Running", deleting=True), "pod ml/job-x-0 is Terminating"),
    (pod("ml", "job-x-0", uid="a-newer-pod"), "pod ml/job-x-0 is gone"),
])
def test_an_allocation_no_running_pod_uses_is_idle_and_says_why(the_pod, reason):
    claims = [claim("ml", "shared-gpu", [("node-a", "gpu-0")], ["job-x-0"])]
    result = run(claims, [the_pod])
    assert [c["name"] for c in result["idle"]] == ["shared-gpu"]
    assert result["idle"][0]["idle_reason"] == reason
    assert result["nodes"][0]["devices"][0]["state"] == "idle"
    assert result["summary"]["idle"] == 1 and result["summary"]["free"] == 5
    assert result["by_namespace"][0]["idle_devices"] == 1


def test_a_claim_reserved_for_nobody_is_idle_since_the_scheduler_wrote_it():
    managed = [{"manager": "kube-controller-manager", "subresource": "status", "time": "2026-12-05T09:00:00Z"},
               {"manager": "kube-scheduler", "subresource": "status", "time": "2026-12-05T11:30:00Z"}]
    result = run([claim("ml", "kept", [("node-a", "gpu-3")], managed=managed)], [])
    entry = result["idle"][0]
    assert entry["idle_reason"] == "allocated, but reserved for no pod"
    assert (entry["since"], entry["since_source"]) == ("2026-12-05T11:30:00Z", "scheduler's status write")


def test_timestamps():
    expected = datetime.datetime(2026, 12, 5, 15, 40, tzinfo=datetime.timezone.utc)
    assert usage_claims.parse_time("2026-12-05T15:40:00Z") == expected
    assert usage_claims.parse_time("2026-12-05T15:40:00.123456Z").minute == 40
    assert usage_claims.parse_time("yesterday") is None and usage_claims.parse_time(None) is None
