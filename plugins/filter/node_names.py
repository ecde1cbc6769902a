# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: node_names
short_description: Each inventory host's Kubernetes node name
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Maps inventory hosts to the names of their Kubernetes nodes - a host's variable named by O(node_name_variable),
    else its inventory hostname - as M(dra.gpu.upgrade_plan)'s C(inventory_nodes) takes them.
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
- name: Plan with the node name of each host to upgrade
  dra.gpu.upgrade_plan:
    target: "1.35"
    inventory_nodes: "{{ groups['kube_node'] | dra.gpu.node_names(hostvars, 'cluster_upgrade_node_name') }}"
"""

RETURN = r"""
_value:
  description: "C({inventory host: node name}) for every host given."
  type: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import host_facts


def node_names(hosts, hostvars, node_name_variable):
    return host_facts.node_names(hosts, hostvars, node_name_variable)


class FilterModule(object):
    def filters(self):
        return {"node_names": node_names}
