# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: pods_not_ready
short_description: One line per pod that is not ready, with why
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads pods as C(kubernetes.core.k8s_info) returns them (its registered result, a loop of them, or a list of
    pods) and returns C(<namespace>/<name> on <node> is <phase> (<why>)) for every pod that is neither Running and
    Ready nor Succeeded.
  - The reason is the first waiting container's reason and message, a container that exited with an error, or the
    first condition that is not true (the scheduler's message for an unscheduled pod).
options:
  _input:
    description: A registered C(kubernetes.core.k8s_info) result, a loop of them, or a list of pods.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Read the pods of a namespace
  kubernetes.core.k8s_info:
    kind: Pod
    namespace: gpu-operator
  register: pods

- name: Say which are not ready
  ansible.builtin.debug:
    msg: "{{ pods | dra.gpu.pods_not_ready | join(' | ') or 'every pod is ready' }}"
"""

RETURN = r"""
_value:
  description: One line per pod that is not ready.
  type: list
  elements: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.k8s import pod_status, registered


def pods_not_ready(data):
    return pod_status.not_ready(registered.objects(data))


class FilterModule(object):
    def filters(self):
        return {"pods_not_ready": pods_not_ready}
