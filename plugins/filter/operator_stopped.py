# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: operator_stopped
short_description: What the gpu_operator role changed and did not before it stopped
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - For the rescue of the gpu_operator role's install block - one message that says where the role stopped and why,
    which GPU nodes it had labelled and which not, which Helm releases it had installed and which not (against
    the plan of M(dra.gpu.gpu_operator_plan)), and how to go on.
options:
  _input:
    description: C(ansible_failed_result), the failed task's result (a loop's, whose failed item's message is used).
    type: dict
    required: true
  task:
    description: The failed task's name (C(ansible_failed_task.name)).
    type: str
    required: true
  plan:
    description: The registered result of M(dra.gpu.gpu_operator_plan) (its C(node_patches) and C(releases)).
    type: dict
    required: true
  label_steps:
    description: The registered loops that label nodes, in order; one that did not run may be omitted or empty.
    type: list
    elements: dict
    default: []
  installs:
    description: The registered loop of C(kubernetes.core.helm) installs.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Fail saying what was and was not changed
  ansible.builtin.fail:
    msg: >-
      {{ ansible_failed_result | dra.gpu.operator_stopped(ansible_failed_task.name, gpu_operator_plan,
         [gpu_operator_device_plugin_off | default({}), gpu_operator_labelled | default({})],
         gpu_operator_installed | default({})) }}
"""

RETURN = r"""
_value:
  description: The message - where and why the role stopped, the node labels changed and not, the releases installed
    and not, and how to go on.
  type: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import stop_reports


def operator_stopped(failed_result, task, plan, label_steps=(), installs=None):
    return stop_reports.operator_stopped(task, failed_result, plan, list(label_steps or []), installs)


class FilterModule(object):
    def filters(self):
        return {"operator_stopped": operator_stopped}
