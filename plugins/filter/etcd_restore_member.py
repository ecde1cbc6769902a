# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: etcd_restore_member
short_description: A stacked etcd member's name, peer URL and data directory, from its kubeadm manifest
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads the text of C(/etc/kubernetes/manifests/etcd.yaml) (the flags C(--name), C(--initial-advertise-peer-urls)
    and C(--data-dir) kubeadm writes) and returns C(name), C(peer_url) and C(data_dir); fails naming the host and
    what is missing when it is not a kubeadm stacked etcd manifest.
  - With O(members) and O(snapshot), returns instead the C(etcdutl snapshot restore) command (a list) that restores
    this member as one of O(members) (a new cluster, O(token)) into C(<data_dir>-restored). cluster_upgrade's
    C(etcd_restore) entry point (playbooks/etcd_restore.yml) uses both.
options:
  _input:
    description: The manifest's text.
    type: str
    required: true
  host:
    description: The host it was read on, for the messages.
    type: str
    required: true
  members:
    description: Every control plane's member (this filter's first form), for the restore command.
    type: list
    elements: dict
    default: []
  snapshot:
    description: The snapshot file on the host.
    type: str
    default: ""
  token:
    description: The new cluster's token, the same on every member.
    type: str
    default: ""
  etcdutl:
    description: The etcdutl command on the host.
    type: str
    default: etcdutl
"""

EXAMPLES = r"""
- name: Read this control plane's member
  ansible.builtin.set_fact:
    member: "{{ manifest.content | b64decode | dra.gpu.etcd_restore_member(inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: C({name, peer_url, data_dir}), or with O(members) the restore command as a list of arguments.
  type: raw
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import etcd_restore


def etcd_restore_member(manifest_text, host, members=None, snapshot="", token="", etcdutl="etcdutl"):
    try:
        this = etcd_restore.member(manifest_text, host)
        if not members:
            return this
        return etcd_restore.restore_argv(snapshot, this, members, token, etcdutl)
    except etcd_restore.RestoreError as error:
        raise AnsibleFilterError(str(error))


class FilterModule(object):
    def filters(self):
        return {"etcd_restore_member": etcd_restore_member}
