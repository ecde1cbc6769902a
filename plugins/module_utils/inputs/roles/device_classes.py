# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.device_classes's variables must be, on their own and in the cluster, before the role changes anything.

``problems``: each class named once, with a DeviceClass name, selectors, labels and config the
API server would take, and a managed label that is a label (pure logic). ``cluster_problem``:
every listed class through the API server's dry run and the published devices, all classes in
one module run, so a list of ten costs one start of the Kubernetes client, not ten.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_class
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException, api_error_message


def problems(values, inventory):
    report = inputs.Problems()
    listed = values.get("device_classes_list")
    if values.get("device_classes_state", "present") == "present":
        if not isinstance(listed, list):
            return ["device_classes_list is %r; it must be a list of classes, each with name and selectors" % (listed,)]
        names = [c.get("name") for c in listed if isinstance(c, dict)]
        report.check(inputs.unique, "device_classes_list", names, "class")
        for label, item in inputs.mappings(listed, "device_classes_list", "class is a mapping with name and selectors",
                                           report):
            label = "%s (%s)" % (label, item.get("name")) if item.get("name") else label
            report.check(inputs.dns_subdomain, label + ".name", item.get("name"), "DeviceClass")
            report.check(inputs.strings, label + ".selectors", item.get("selectors"))
            report.check(inputs.labels, label + ".labels", item.get("labels"))
            report.check(_class_config, label, item.get("config"))
    report.check(inputs.label_key, "device_classes_managed_label_key", values.get("device_classes_managed_label_key"))
    report.check(inputs.label_value, "device_classes_managed_label_value",
                 values.get("device_classes_managed_label_key"), values.get("device_classes_managed_label_value"))
    return report.found


def _class_config(label, config):
    try:
        device_class.validate_input([], config)
    except device_class.DeviceClassError as exc:
        raise inputs.InputError("%s.%s" % (label, exc))


def cluster_problem(kube, values):
    """Every listed class through the API server's dry run and the live devices, so the role applies all or none."""
    if values.get("device_classes_state", "present") != "present":
        return None
    entries = values.get("device_classes_list") or []
    managed = {values.get("device_classes_managed_label_key"): values.get("device_classes_managed_label_value")}
    try:
        refused = device_class.list_problems(kube, entries, bool(values.get("device_classes_require_match")),
                                             managed)
    except ApiException as exc:
        return "could not read the ResourceSlices the classes are checked against: %s" % api_error_message(exc)
    if not refused:
        return None
    return ("device_classes: %d of %d class(es) in device_classes_list cannot be applied, so none was applied and "
            "nothing was changed: %s. Fix those entries of device_classes_list and run again."
            % (len(refused), len(entries), "; ".join(refused)))
