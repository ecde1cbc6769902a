# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.gpu_sharing's variables must be before the role changes anything.

The sharing classes and claim templates as sharing_config and claim_templates take them (every
entry, all problems at once), and MIG nodes named once with a layout that follows from the
settings (pure logic).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.sharing import claim_templates, sharing_config


def problems(values, inventory):
    """The sharing classes (every entry, all problems at once) and the MIG layout's nodes."""
    present = values.get("gpu_sharing_state", "present") == "present"
    classes = values.get("gpu_sharing_classes") or []
    mig_nodes = values.get("gpu_sharing_mig_nodes") or []
    report = inputs.Problems()
    report.check(inputs.seconds, "gpu_sharing_mig_timeout", values.get("gpu_sharing_mig_timeout"))
    report.check(inputs.strings, "gpu_sharing_mig_nodes", mig_nodes)
    report.check(inputs.unique, "gpu_sharing_mig_nodes", mig_nodes, "node")
    if present:
        report.check(_sharing_classes, classes)
        report.check(_claim_templates, values.get("gpu_sharing_claim_templates") or [], classes)
        report.check(_mig_layout_needed, classes, mig_nodes, values.get("gpu_sharing_mig_layout"))
    return report.found


def _sharing_classes(classes):
    try:
        sharing_config.device_classes(classes)
    except sharing_config.SharingConfigError as exc:
        raise inputs.InputError(str(exc))


def _claim_templates(templates, classes):
    try:
        claim_templates.claim_templates(templates, classes)
    except sharing_config.SharingConfigError as exc:
        raise inputs.InputError(str(exc))


def _mig_layout_needed(classes, mig_nodes, layout):
    profiles = sorted(set(c.get("profile") for c in classes if isinstance(c, dict) and c.get("strategy") == "mig"))
    if mig_nodes and not layout and len(profiles) != 1:
        raise inputs.InputError("gpu_sharing_mig_nodes is set but gpu_sharing_mig_layout is empty and the mig classes "
                                "name %s profiles (%s), so no all-<profile> layout follows from them; set "
                                "gpu_sharing_mig_layout (for example all-balanced)"
                                % (len(profiles), ", ".join(profiles) or "no"))
