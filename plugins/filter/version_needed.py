# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: version_needed
short_description: The lowest Kubernetes version the features a run asks for need
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - DRA itself needs O(dra_min) (1.35 by default); C(gpu_operator_dra_consumable_shares) (memory shares and the other
    share modes) needs the first minor where C(DRAConsumableCapacity) is on by default (1.36).
  - playbooks/site.yml plans the way to this version and stops, when the cluster is older and no upgrade was asked
    for, with the plan and the command that asks for it (dra.gpu.upgrade_not_asked).
options:
  _input:
    description: The run's variables that ask for version-bound features (C(gpu_operator_dra_consumable_shares)).
    type: dict
    required: true
  dra_min:
    description: The lowest version DRA is installed on.
    type: str
    default: "1.35"
"""

EXAMPLES = r"""
- name: Work out the version this run needs
  ansible.builtin.set_fact:
    needed: "{{ {'gpu_operator_dra_consumable_shares': 'memory'} | dra.gpu.version_needed }}"
  # needed.version == "1.36"
"""

RETURN = r"""
_value:
  description: C(version), the lowest minor (V(1.36)), and C(reasons), the settings that need it, in words.
  type: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import upgrade_request, versions


def version_needed(settings, dra_min=versions.DRA_MINIMUM):
    return upgrade_request.version_needed(settings, dra_min)


class FilterModule(object):
    def filters(self):
        return {"version_needed": version_needed}
