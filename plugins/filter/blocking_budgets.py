# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: blocking_budgets
short_description: The PodDisruptionBudgets that keep a node's drain from finishing
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads PodDisruptionBudgets as C(kubernetes.core.k8s_info) returns them and returns C(<namespace>/<name>) of
    each one the eviction API refuses evictions for now, sorted; its C(status.disruptionsAllowed) is 0 (or
    missing), or the disruption controller has not yet observed its last change.
  - Given the pods of the drained node (O(pods)), only the budgets that select one of them are returned, as the
    eviction API matches them; in policy/v1 an empty selector selects every pod of the budget's namespace and a
    missing one none. Pods an eviction lets go without asking a budget (Pending, Succeeded, Failed, already
    terminating) and those a drain leaves alone (DaemonSet and mirror pods) do not count.
options:
  _input:
    description: A registered C(kubernetes.core.k8s_info) result of PodDisruptionBudgets, a loop of them, or a list
      of budgets.
    type: raw
    required: true
  pods:
    description: A registered C(kubernetes.core.k8s_info) result of the node's pods (or a list of pods); omitted,
      every budget that allows no disruption is returned.
    type: raw
"""

EXAMPLES = r"""
- name: Read the PodDisruptionBudgets
  kubernetes.core.k8s_info:
    api_version: policy/v1
    kind: PodDisruptionBudget
  register: budgets

- name: Read the pods of the node
  kubernetes.core.k8s_info:
    kind: Pod
    field_selectors: [spec.nodeName=worker-1]
  register: pods

- name: Name the budgets that keep the drain of worker-1 from finishing
  ansible.builtin.debug:
    msg: "{{ budgets | dra.gpu.blocking_budgets(pods) | join(', ') or 'none' }}"
"""

RETURN = r"""
_value:
  description: C(<namespace>/<name>) of each blocking budget, sorted.
  type: list
  elements: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.k8s import registered
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import drain_budgets


def blocking_budgets(budgets, pods=None):
    return drain_budgets.blocking(registered.objects(budgets), None if pods is None else registered.objects(pods))


class FilterModule(object):
    def filters(self):
        return {"blocking_budgets": blocking_budgets}
