# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.gpu_operator's variables must be before the role changes anything.

An install: gpu_operator_checks' own checks under the role's variable names; a removal: only
the namespaces and release names. Either way waits of at least a second and an image list file
that can be written (pure logic).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_checks


def problems(values, inventory):
    params = inputs.stripped(values, "gpu_operator_")
    renamed = {"binary_path": "helm_binary"}

    def name(option):
        return "gpu_operator_" + renamed.get(option, option)

    report = inputs.Problems()
    if params.get("state", "present") == "present":
        report.extend(gpu_operator_checks.input_problems(params, name))
    else:
        report.check(inputs.dns_label, name("namespace"), params.get("namespace"))
        report.check(inputs.dns_label, name("dra_driver_namespace"), params.get("dra_driver_namespace"))
        report.check(inputs.helm_release, name("release_name"), params.get("release_name"))
        report.check(inputs.helm_release, name("dra_driver_release_name"), params.get("dra_driver_release_name"))
    report.check(inputs.seconds, "gpu_operator_timeout", params.get("timeout"))
    report.check(inputs.seconds, "gpu_operator_slice_timeout", params.get("slice_timeout"))
    report.check(inputs.seconds, "gpu_operator_eviction_timeout", params.get("eviction_timeout"))
    report.check(_writable_file, "gpu_operator_image_list_file", params.get("image_list_file"))
    return report.found


def _writable_file(option, path):
    """An output file whose directory exists (checked before anything changes, not after)."""
    if not path:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise inputs.InputError("%s is %r: it must be a file in a directory that exists and can be written (%s); "
                                "create the directory or pick another path" % (option, path, directory))
