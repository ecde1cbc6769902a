"""dra.gpu.upgrade_plan against the lab's real API server (nodes are simulated)."""

import os

from conftest import run_module

LAB_VERSION = os.environ.get("LAB_K8S_VERSION", "1.35.4")
AVAILABLE = ["1.34.4", "1.35.4", "1.36.3", "1.37.2"]


def test_plan_reads_the_live_cluster():
    result = run_module("dra.gpu.upgrade_plan", {"target": LAB_VERSION.rsplit(".", 1)[0],
                                                 "available_versions": AVAILABLE})
    assert not result.get("failed"), result.get("msg")
    assert result["current"] == LAB_VERSION and result["up_to_date"] and result["blockers"] == []
    assert {n["name"] for n in result["node_order"]} >= {"node-a", "node-b"}


def test_plan_to_latest_goes_one_minor_at_a_time_and_flags_cgroup_v1():
    result = run_module("dra.gpu.upgrade_plan", {"target": "latest", "available_versions": AVAILABLE,
                                                 "node_facts": {"node-a": {"cgroup_fs": "tmpfs"}}})
    minors = [h["minor"] for h in result["hops"]]
    assert minors == sorted(minors) and len(set(minors)) == len(minors)
    if LAB_VERSION != "1.37.2":
        assert result["hops"][-1]["version"] == "1.37.2"
    assert [b["code"] for b in result["blockers"]] == ["cgroup_v1"]
    assert "node-a" in result["blockers"][0]["message"]


def test_downgrade_and_bad_targets_are_refused():
    down = run_module("dra.gpu.upgrade_plan", {"target": "1.34", "available_versions": AVAILABLE})
    assert "downgrade" in [b["code"] for b in down["blockers"]]
    bad = run_module("dra.gpu.upgrade_plan", {"target": "one.thirty-five"})
    assert bad["failed"] and "not a Kubernetes version" in bad["msg"]
