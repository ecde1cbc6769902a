# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: classes_stopped
short_description: What the device_classes role applied and did not before it stopped
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - For the rescue of the device_classes role - one message that says where the role stopped and why (with each
    failed class's own message), which classes it had applied (and which of them changed), which not, which it had
    pruned, and how to go on.
options:
  _input:
    description: C(ansible_failed_result), the failed task's result.
    type: dict
    required: true
  task:
    description: The failed task's name (C(ansible_failed_task.name)).
    type: str
    required: true
  listed:
    description: The role's list of classes (C(device_classes_list)).
    type: list
    elements: dict
    required: true
  applied:
    description: The registered loop of M(dra.gpu.device_class) that applies the classes.
    type: dict
    default: {}
  pruned:
    description: The registered loop of M(dra.gpu.device_class) that removes classes no longer listed.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Fail saying what was and was not changed
  ansible.builtin.fail:
    msg: >-
      {{ ansible_failed_result | dra.gpu.classes_stopped(ansible_failed_task.name, device_classes_list,
         device_classes_applied | default({}), device_classes_pruned | default({})) }}
"""

RETURN = r"""
_value:
  description: The message - where and why the role stopped (each failed class with its own message), the classes
    applied (which changed) and not, those removed, and how to go on.
  type: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import stop_reports


def classes_stopped(failed_result, task, listed, applied=None, pruned=None):
    return stop_reports.classes_stopped(task, failed_result, listed, applied, pruned)


class FilterModule(object):
    def filters(self):
        return {"classes_stopped": classes_stopped}
