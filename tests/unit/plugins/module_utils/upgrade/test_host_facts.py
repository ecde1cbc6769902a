from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import host_facts


def test_facts_are_keyed_by_the_node_name_variable_else_the_hostname_and_unread_hosts_are_left_out():
    hostvars = {"gpu-1.example.com": {"host_facts_cgroup_fs": "cgroup2fs", "preflight_node_name": "gpu-1"},
                "gpu-2": {"host_facts_cgroup_fs": "tmpfs"},
                "gpu-3": {"preflight_node_name": "gpu-3"}}
    assert host_facts.by_node_name(["gpu-1.example.com", "gpu-2", "gpu-3", "not-in-inventory"], hostvars,
                                   "preflight_node_name") == {"gpu-1": {"cgroup_fs": "cgroup2fs"},
                                                              "gpu-2": {"cgroup_fs": "tmpfs"}}
    assert host_facts.by_node_name(None, hostvars, "preflight_node_name") == {}


def test_node_names_map_every_host_to_its_node_name_variable_else_its_hostname():
    hostvars = {"gpu-1.example.com": {"cluster_upgrade_node_name": "gpu-1"}, "gpu-2": {}}
    assert host_facts.node_names(["gpu-1.example.com", "gpu-2", "not-in-inventory"], hostvars,
                                 "cluster_upgrade_node_name") == {"gpu-1.example.com": "gpu-1", "gpu-2": "gpu-2",
                                                                  "not-in-inventory": "not-in-inventory"}
