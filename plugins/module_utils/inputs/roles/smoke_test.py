# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.smoke_test's variables must be, on their own and in the cluster, before the role changes anything.

``problems``: the smoke module's own checks under the role's variable names, a slice wait of at
least a second and a label selector kubectl takes (pure logic). ``cluster_problem``: a node
selector that matches no node, said now rather than at the timeout.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException, api_error_message
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke


def problems(values, inventory):
    params = inputs.stripped(values, "smoke_test_")
    report = inputs.Problems()
    report.extend(smoke.input_problems(params, "smoke_test_"))
    report.check(inputs.seconds, "smoke_test_slice_timeout", params.get("slice_timeout"))
    report.check(inputs.label_selector, "smoke_test_wait_node_selector", params.get("wait_node_selector"))
    return report.found


def _selector_text(selector):
    return ",".join("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in sorted(selector.items()))


def cluster_problem(kube, values):
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
