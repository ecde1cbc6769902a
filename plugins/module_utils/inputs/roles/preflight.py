# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.preflight's variables must be before the role reads the cluster.

Versions written in full and GPU hosts that are named once and are in the inventory (pure logic).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs


def problems(values, inventory):
    hosts = values.get("preflight_gpu_hosts") or []
    report = inputs.Problems()
    report.check(inputs.version, "preflight_min_version", values.get("preflight_min_version"))
    report.check(inputs.versions_list, "preflight_available_versions", values.get("preflight_available_versions"))
    report.check(inputs.version, "preflight_target_version", values.get("preflight_target_version", "tested"),
                 latest=True)
    report.check(inputs.strings, "preflight_gpu_hosts", hosts)
    report.check(inputs.unique, "preflight_gpu_hosts", hosts, "host")
    report.check(inputs.in_inventory, "preflight_gpu_hosts", hosts, inventory)
    return report.found
