# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.gpu_maintenance's variables must be before the role changes anything.

A wait of at least a second, a GPU chosen when one is to go out of service, and a reason
that can be a taint's value (pure logic).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs


def problems(values, inventory):
    state = values.get("gpu_maintenance_state", "out_of_service")
    chosen = [values.get("gpu_maintenance_" + k) for k in ("devices", "uuids", "selector")]
    report = inputs.Problems()
    report.check(inputs.seconds, "gpu_maintenance_timeout", values.get("gpu_maintenance_timeout"))
    if state == "out_of_service" and not any(chosen):
        report.add("gpu_maintenance_state is out_of_service but no GPU is chosen: set gpu_maintenance_devices "
                   "(e.g. [{node: node-b, device: gpu-2}]), gpu_maintenance_uuids or gpu_maintenance_selector")
    if values.get("gpu_maintenance_reason"):
        report.check(inputs.label_value, "gpu_maintenance_reason", "the taint's value", values["gpu_maintenance_reason"])
    return report.found
