# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: upgrade_not_asked
short_description: Why a run that was not asked to upgrade stops, with the upgrade plan and how to ask for it
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads dra.gpu.upgrade_plan's result for the version the run needs (dra.gpu.version_needed) and returns the
    message playbooks/site.yml stops with when that plan has hops - the cluster's version and why the run needs
    more, the hops and the nodes in their upgrade order, the plan's blockers and warnings, and the command line
    that asks for the upgrade (C(-e cluster_upgrade_target=<version>)).
  - Returns an empty string when the plan has no hops (the cluster already runs the needed version).
options:
  _input:
    description: The registered result of dra.gpu.upgrade_plan to the needed version.
    type: dict
    required: true
  needed:
    description: dra.gpu.version_needed's result.
    type: dict
    required: true
  inventories:
    description: The run's inventory sources (C(ansible_inventory_sources)), repeated in the command line.
    type: list
    elements: str
    default: []
  playbook:
    description: The playbook to run again, as the command line names it.
    type: str
    default: playbooks/site.yml
"""

EXAMPLES = r"""
- name: Stop before any change when the cluster is older than the run needs
  ansible.builtin.fail:
    msg: "{{ stop }}"
  when: stop | length > 0
  vars:
    stop: "{{ needed_plan | dra.gpu.upgrade_not_asked(needed, ansible_inventory_sources, playbook_dir ~ '/site.yml') }}"
"""

RETURN = r"""
_value:
  description: The message, or an empty string when nothing needs upgrading.
  type: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import upgrade_request


def upgrade_not_asked(plan, needed, inventories=None, playbook="playbooks/site.yml"):
    return upgrade_request.stop_message(plan, needed, inventories, playbook) or ""


class FilterModule(object):
    def filters(self):
        return {"upgrade_not_asked": upgrade_not_asked}
