# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: unlisted
short_description: Names of registered Kubernetes objects that a list does not name
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads a registered C(kubernetes.core.k8s_info) result (or a loop of them, or a list of objects) and returns the
    sorted C(metadata.name) of every object whose name is not in O(listed) - what a role that labels the objects it
    creates removes when they are no longer in its list (C(dra.gpu.device_classes) with C(device_classes_prune)).
options:
  _input:
    description: A registered C(kubernetes.core.k8s_info) result, a loop of them, or a list of objects.
    type: raw
    required: true
  listed:
    description: The names to keep.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Remove the classes this role created that are no longer listed
  dra.gpu.device_class:
    name: "{{ item }}"
    state: absent
  loop: "{{ managed_classes | dra.gpu.unlisted(device_classes_list | map(attribute='name')) }}"
"""

RETURN = r"""
_value:
  description: The names not in O(listed), sorted.
  type: list
  elements: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.k8s import registered


def unlisted(data, listed):
    return registered.unlisted(data, listed)


class FilterModule(object):
    def filters(self):
        return {"unlisted": unlisted}
