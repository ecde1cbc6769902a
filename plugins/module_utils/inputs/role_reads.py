# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role's inputs mean in the cluster, checked before the role's first change.

``role_inputs`` checks the variables on their own; these checks need the API server: a node
selector that matches no node, a class the server or the published devices refuse. Each
returns the message to fail with, or None. All of a role's classes are checked in one module
run, so a list of ten costs one start of the Kubernetes client, not ten.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_class
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException, api_error_message


def _selector_text(selector):
    return ",".join("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in sorted(selector.items()))


def smoke_test(kube, values):
    """A node selector that matches no node could never schedule the probe (smoke_test_node_selector)
    or publish a slice (smoke_test_wait_node_selector): say so now, not at the timeout."""
    wanted = []
    if values.get("smoke_test_node_selector"):
        wanted.append(("smoke_test_node_selector", _selector_text(values["smoke_test_node_selector"]),
                       "the probe could never be scheduled"))
    if values.get("smoke_test_wait_node_selector"):
        wanted.append(("smoke_test_wait_node_selector", values["smoke_test_wait_node_selector"],
                       "the wait for their ResourceSlices could only time out"))
    for variable, text, consequence in wanted:
        try:
            matched = kube.node_names(text)
            every = kube.node_names(None) if not matched else None
        except ApiException as exc:
            return "could not read the nodes for %s: %s" % (variable, api_error_message(exc))
        if not matched:
            return ("smoke_test: %s %s matches no node (nodes: %s), so %s; nothing was changed. Correct %s "
                    "(`kubectl get nodes -l '%s'`)" % (variable, text, ", ".join(every) or "none", consequence,
                                                       variable, text))
    return None


def device_classes(kube, values):
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


CHECKS = {"smoke_test": smoke_test, "device_classes": device_classes}


def problem(role, kube, values):
    check = CHECKS.get(role)
    return check(kube, values) if check else None
