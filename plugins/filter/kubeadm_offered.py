# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: kubeadm_offered
short_description: The kubeadm versions a package repository offers, from registered apt and dnf reads
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads the registered loop results of C(ansible.builtin.uri) fetching pkgs.k8s.io-style apt indexes
    (C(.../deb/Packages)) and of C(dnf list --showduplicates kubeadm), and returns the kubeadm versions offered.
  - Only kubeadm's own paragraph of an apt index counts; cri-tools and the other packages in the same index
    have versions of their own.
  - An apt read that got no answer (neither 200 nor 404) is returned in C(unread) with its URL and message; a 404
    (a minor the repository does not have) offers nothing.
options:
  _input:
    description: The registered result of the apt index reads (a loop of C(ansible.builtin.uri)).
    type: dict
    required: true
  dnf_results:
    description: The registered result of the dnf reads (a loop of C(ansible.builtin.command)).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Keep the versions found
  ansible.builtin.set_fact:
    repo: "{{ apt_indexes | dra.gpu.kubeadm_offered(dnf_lists) }}"
"""

RETURN = r"""
_value:
  description: C(versions), the versions offered (oldest first, without the package revision), and C(unread),
    the reads that got no answer (C(url), C(msg), and C(text) joining both for a message).
  type: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import package_versions


def kubeadm_offered(apt_results, dnf_results=None):
    return package_versions.offered(apt_results, dnf_results)


class FilterModule(object):
    def filters(self):
        return {"kubeadm_offered": kubeadm_offered}
