# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host facts role host_facts read, keyed by the node name the checks know a host by.

dra_readiness and upgrade_plan take ``node_facts`` as {node name: {cgroup_fs}}; an inventory
host is a node under its inventory name unless a host variable (preflight_node_name,
cluster_upgrade_node_name) says otherwise.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

CGROUP_FACT = "host_facts_cgroup_fs"


def node_names(hosts, hostvars, node_name_variable):
    """{inventory host: node name} for each of ``hosts``: its ``node_name_variable``, else its hostname."""
    return dict((host, (hostvars[host] if host in hostvars else {}).get(node_name_variable) or host)
                for host in hosts or [])


def by_node_name(hosts, hostvars, node_name_variable):
    """{node name: {"cgroup_fs": ...}} for each of ``hosts`` whose cgroup file system was read."""
    facts = {}
    for host, node in node_names(hosts, hostvars, node_name_variable).items():
        cgroup_fs = hostvars[host].get(CGROUP_FACT) if host in hostvars else None
        if cgroup_fs:
            facts[node] = {"cgroup_fs": cgroup_fs}
    return facts
