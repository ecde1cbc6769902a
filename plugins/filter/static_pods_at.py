# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: static_pods_at
short_description: Whether a control plane's static pod manifests already run a version
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads the output of C(grep -H image:) over C(/etc/kubernetes/manifests/kube-apiserver.yaml),
    C(kube-controller-manager.yaml) and C(kube-scheduler.yaml) and tells whether all three images carry the tag of
    the given version, that is whether C(kubeadm upgrade node) (or C(apply)) already finished on that node.
  - A missing manifest or one with another tag gives false.
options:
  _input:
    description: The grep output (stdout).
    type: str
    required: true
  version:
    description: The version, with or without a leading C(v) (C(1.35.4)).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Run kubeadm upgrade node unless a previous run already did
  ansible.builtin.command: kubeadm upgrade node
  when: not (manifests.stdout | dra.gpu.static_pods_at('1.35.4'))
"""

RETURN = r"""
_value:
  description: True when all three manifests name the version.
  type: bool
"""

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import static_pods


class FilterModule(object):
    def filters(self):
        return {"static_pods_at": static_pods.at_version}
