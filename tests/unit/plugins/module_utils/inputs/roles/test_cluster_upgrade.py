from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import cluster_upgrade


def test_cluster_upgrade_role():
    values = {"cluster_upgrade_target": "1.3x", "cluster_upgrade_available_versions": ["1.35"],
              "cluster_upgrade_dra_min_version": "1.35", "cluster_upgrade_api_host": "ctl",
              "cluster_upgrade_repo_url": "https://pkgs.k8s.io/core:/stable:/v{minor}",
              "cluster_upgrade_drain_timeout": 0, "cluster_upgrade_drain_retry_delay": 10,
              "cluster_upgrade_drain_grace_period": 0, "cluster_upgrade_node_ready_timeout": -1,
              "cluster_upgrade_node_names": {"w1": "node-1", "w2": "node-1"}}
    text = " | ".join(cluster_upgrade.problems(values, ["w1", "w2"]))
    for words in ("cluster_upgrade_target is '1.3x'", "cluster_upgrade_available_versions[0] is '1.35'",
                  "cluster_upgrade_api_host names ctl", "cluster_upgrade_drain_timeout is 0",
                  "cluster_upgrade_node_ready_timeout is -1", "node-1 (w1, w2)"):
        assert words in text
    assert "grace" not in text
    assert cluster_upgrade.problems(dict(values, cluster_upgrade_target="1.35",
                                         cluster_upgrade_available_versions=["1.35.4"],
                                         cluster_upgrade_api_host="localhost",
                                         cluster_upgrade_drain_timeout=360,
                                         cluster_upgrade_node_ready_timeout=300,
                                         cluster_upgrade_node_names={"w1": "n1"}), []) == []


UPGRADE = {"cluster_upgrade_target": "latest", "cluster_upgrade_available_versions": [],
           "cluster_upgrade_dra_min_version": "1.34", "cluster_upgrade_api_host": "localhost"}


def test_the_repository_url_needs_its_minor_placeholder():
    assert cluster_upgrade.problems(UPGRADE, []) == []
    found = cluster_upgrade.problems(dict(UPGRADE, cluster_upgrade_repo_url="https://pkgs.k8s.io/v1.35"), [])
    assert found == ["cluster_upgrade_repo_url is 'https://pkgs.k8s.io/v1.35', without {minor}: every hop would read "
                     "the same repository; write it like https://pkgs.k8s.io/core:/stable:/v{minor}"]


@pytest.mark.parametrize("option, lowest", [("cluster_upgrade_drain_grace_period", 0), ("cluster_upgrade_api_retry_timeout", 0),
                                            ("cluster_upgrade_api_restart_window", 0), ("cluster_upgrade_api_retry_delay", 1),
                                            ("cluster_upgrade_api_ready_timeout", 1)])
def test_each_wait_option_has_its_own_minimum(option, lowest):
    assert cluster_upgrade.problems(dict(UPGRADE, **{option: lowest}), []) == []
    found = cluster_upgrade.problems(dict(UPGRADE, **{option: lowest - 1}), [])
    assert len(found) == 1 and found[0].startswith("%s is %d" % (option, lowest - 1))


def test_a_null_api_host_is_named_not_a_traceback():
    problems = cluster_upgrade.problems({"cluster_upgrade_api_host": None}, ["cp-1"])
    assert any("cluster_upgrade_api_host names None" in p for p in problems)
