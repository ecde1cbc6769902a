from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import node_rules, readiness, versions


@pytest.mark.parametrize("text,parsed", [
    ("containerd://2.1.4", ("containerd", (2, 1))), ("cri-o://1.30.1", ("cri-o", (1, 30))),
    ("docker://v24.0.7", ("docker", (24, 0))), ("containerd://", ("containerd", None)), ("", (None, None)),
])
def test_runtime(text, parsed):
    assert node_rules.runtime(text) == parsed


def test_cgroup_v1_blocks_from_1_35_only_and_an_unread_host_is_not_judged():
    assert node_rules.cgroup("a", "tmpfs", 35)["severity"] == node_rules.BLOCKER
    assert node_rules.cgroup("a", "tmpfs", 34) is None
    assert node_rules.cgroup("a", "cgroup2fs", 36) is None
    assert node_rules.cgroup("a", None, 36) is None


@pytest.mark.parametrize("runtime,minor,expected", [
    ("containerd://1.7.27", 36, ("containerd_1", node_rules.BLOCKER)),
    ("containerd://1.7.27", 35, ("containerd_1", node_rules.CAUTION)),
    ("containerd://1.7.27", 34, None),
    ("containerd://2.0.0", 37, None),
    ("cri-o://1.30.1", 36, None),
])
def test_containerd_version(runtime, minor, expected):
    finding = node_rules.containerd_version("a", runtime, minor)
    assert (None if finding is None else (finding["code"], finding["severity"])) == expected


@pytest.mark.parametrize("runtime,expected", [
    ("containerd://2.0.1", None), ("cri-o://1.27.0", None),
    ("containerd://1.7.27", "cdi_opt_in"), ("containerd://1.6.9", "no_cdi"), ("cri-o://1.26.3", "no_cdi"),
    ("docker://24.0.7", "no_cdi"), (None, "no_cdi"),
])
def test_cdi(runtime, expected):
    finding = node_rules.cdi("a", runtime)
    assert (finding["code"] if finding else None) == expected


def test_readiness_and_the_upgrade_plan_give_a_cgroup_v1_host_the_same_fix():
    # One rule, two callers: the words a person reads in preflight and in the plan agree.
    facts = {"a": {"cgroup_fs": "tmpfs"}}
    check = readiness.check_cgroups([{"name": "a"}], facts)
    plan = versions.plan("v1.34.4", [{"name": "a", "kubelet": "v1.34.4", "runtime": "containerd://2.1.4"}], "1.35.4",
                         ["1.35.4"], node_facts=facts, identity={"distribution": "kubeadm"})
    assert check["status"] == readiness.FAIL
    assert check["fix"] == plan["blockers"][0]["fix"] == node_rules.CGROUP_V1_FIX
