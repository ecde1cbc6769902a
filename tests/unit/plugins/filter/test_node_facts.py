from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import node_facts


def test_the_filter_is_named_node_facts_and_reads_the_host_facts():
    function = node_facts.FilterModule().filters()["node_facts"]
    hostvars = {"h1": {"host_facts_cgroup_fs": "cgroup2fs", "cluster_upgrade_node_name": "node-1"}}
    assert function(["h1"], hostvars, "cluster_upgrade_node_name") == {"node-1": {"cgroup_fs": "cgroup2fs"}}
