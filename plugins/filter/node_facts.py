# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: node_facts
short_description: The host facts dra.gpu.host_facts read, by node name, for dra_readiness and upgrade_plan
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Turns the fact C(host_facts_cgroup_fs) that the role C(dra.gpu.host_facts) set on each inventory host into
    the C(node_facts) option of M(dra.gpu.dra_readiness) and M(dra.gpu.upgrade_plan), keyed by node name.
  - A host's node name is its host variable named by O(node_name_variable), else its inventory hostname. Hosts
    that were not read are left out (the checks call them not checked).
options:
  _input:
    description: Inventory hosts.
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: raw
    required: true
  node_name_variable:
    description: The host variable that holds a host's Kubernetes node name.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check the cluster with the GPU hosts' cgroup file systems
  dra.gpu.dra_readiness:
    node_facts: "{{ groups['gpu_nodes'] | dra.gpu.node_facts(hostvars, 'preflight_node_name') }}"
"""

RETURN = r"""
_value:
  description: "C({node name: {cgroup_fs: ...}}) for every host that was read."
  type: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import host_facts


def node_facts(hosts, hostvars, node_name_variable):
    return host_facts.by_node_name(hosts, hostvars, node_name_variable)


class FilterModule(object):
    def filters(self):
        return {"node_facts": node_facts}
