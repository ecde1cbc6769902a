#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: resource_slice_wait
short_description: Wait until a DRA driver publishes the devices the next step needs
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Waits until O(driver) has published at least O(min_devices) devices in total, or until every node
    named in O(nodes) or matching O(node_selector) publishes at least O(min_devices_per_node).
  - Optionally counts only devices matching a CEL O(selector), evaluated locally like a DeviceClass selector.
  - Watches ResourceSlices instead of polling, so it returns as soon as the slices appear. It relists after
    an expired watch (410) and reconnects when the API server restarts.
  - On timeout it fails with a diagnosis, naming the nodes without slices, the drivers that did publish and,
    with O(driver_namespace), the state of the driver's kubelet-plugin pods.
  - What waiting cannot fix fails at once, without waiting for O(timeout) - a node in O(nodes) that is not in the
    cluster, no node matching O(node_selector), and a O(selector) that does not give a bool on a published device.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
  - dra.gpu.slice_filters
options:
  driver:
    description:
      - The DRA driver whose ResourceSlices to wait for, for example V(gpu.nvidia.com).
    type: str
    required: true
  min_devices:
    description:
      - Wait for at least this many devices in total (after the filters and O(selector)).
      - Defaults to V(1) when neither O(nodes) nor O(node_selector) is given.
    type: int
  min_devices_per_node:
    description:
      - With O(nodes) or O(node_selector), wait until each of those nodes publishes at least this many devices.
    type: int
    default: 1
  selector:
    description:
      - A CEL expression over C(device), as in a DeviceClass; only matching devices count.
    type: str
  timeout:
    description:
      - Seconds to wait before failing with a diagnosis.
    type: int
    default: 300
  driver_namespace:
    description:
      - Namespace of the driver's kubelet-plugin pods, to report their state when the wait times out.
    type: str
  plugin_pod_selectors:
    description:
      - Label selectors that find the driver's kubelet-plugin pods in O(driver_namespace).
      - The default covers NVIDIA's DRA driver charts (v0.4+ and v25.x) and the dra-example-driver.
    type: list
    elements: str
    default:
      - dra-driver-nvidia-gpu-component=kubelet-plugin
      - nvidia-dra-driver-gpu-component=kubelet-plugin
      - dra-example-driver-component=kubelet-plugin
requirements:
  - cel-python >= 0.5.0 (only with O(selector))
"""

EXAMPLES = r"""
- name: Wait until every GPU node publishes its GPUs through DRA
  dra.gpu.resource_slice_wait:
    driver: gpu.nvidia.com
    node_selector: nvidia.com/gpu.present=true
    min_devices_per_node: 1
    timeout: 600
    driver_namespace: nvidia-dra-driver-gpu

- name: Wait for at least four GPUs with 16Gi or more anywhere in the cluster
  dra.gpu.resource_slice_wait:
    driver: gpu.nvidia.com
    min_devices: 4
    selector: device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16Gi')) >= 0
"""

RETURN = r"""
devices:
  description: The devices counted when the wait ended, in the shape of M(dra.gpu.resource_slice_info)'s RV(devices).
  returned: success
  type: list
  elements: dict
summary:
  description: Counts per node, driver and model, as M(dra.gpu.resource_slice_info) returns them.
  returned: success
  type: dict
ignored_pools:
  description: Pools the scheduler would not use (incomplete or invalid).
  returned: success
  type: list
  elements: dict
elapsed:
  description: Seconds the wait took.
  returned: always
  type: float
  sample: 0.84
watch:
  description: How often the wait listed and how often it had to reconnect (for example across an API server restart).
  returned: success
  type: dict
  sample: {relists: 1, reconnects: 0, events: 3}
diagnosis:
  description: On timeout, sentences that say what is missing and what the driver's pods are doing.
  returned: failure
  type: list
  elements: str
plugin_pods:
  description: On timeout with O(driver_namespace), each kubelet-plugin pod with its node, phase and problem.
  returned: failure
  type: list
  elements: dict
"""

import time

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_wait, slices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, watch


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.seconds, "timeout", params["timeout"])
    if params["min_devices"] is not None:
        problems.check(inputs.integer, "min_devices", params["min_devices"])
    problems.check(inputs.integer, "min_devices_per_node", params["min_devices_per_node"])
    problems.check(inputs.label_selector, "node_selector", params["node_selector"])
    problems.check(inputs.strings, "nodes", params["nodes"])
    problems.check(inputs.unique, "nodes", params["nodes"] or [], "node")
    return problems.found


def main():
    module = client.kube_module(
        dict(slices.FILTER_ARGUMENT_SPEC,
             driver=dict(type="str", required=True),
             min_devices=dict(type="int"),
             min_devices_per_node=dict(type="int", default=1),
             selector=dict(type="str"),
             timeout=dict(type="int", default=300),
             driver_namespace=dict(type="str"),
             plugin_pod_selectors=dict(type="list", elements="str",
                                       default=list(slice_wait.DEFAULT_PLUGIN_POD_SELECTORS))),
        checks=_input_problems)
    params = module.params
    selectors = None
    if params["selector"]:
        try:
            selectors = cel.Selectors([params["selector"]])
        except cel.Unsupported as exc:
            module.fail_json(msg="selector cannot be evaluated here: %s" % exc)
    started = time.monotonic()
    try:
        kube = client.Kube(client.api_client(module))
        filters = slices.Filters.from_params(params)
        try:
            slice_wait.check_inputs(kube, filters, selectors, "selector")
        except slice_wait.InputError as exc:
            module.fail_json(msg=str(exc), elapsed=round(time.monotonic() - started, 3))
        node_names = filters.node_names(kube)
        if node_names == [] and params["node_selector"]:
            module.fail_json(msg="no node matches node_selector %r%s; check the label with "
                                 "`kubectl get nodes -l '%s'`" % (params["node_selector"], (
                                     " among nodes %s" % params["nodes"]) if params["nodes"] else "",
                                     params["node_selector"]), elapsed=0.0)
        min_devices = params["min_devices"]
        if min_devices is None and node_names is None:
            min_devices = 1
        goal = slice_wait.Goal(min_devices, params["min_devices_per_node"], node_names)
        try:
            result = slice_wait.wait_for_devices(kube, filters, goal, params["timeout"], selectors)
        except watch.WaitTimeout as exc:
            lines, details = slice_wait.diagnose(kube, filters, goal, exc.state, selectors,
                                                 params["driver_namespace"], params["plugin_pod_selectors"])
            module.fail_json(msg="%s: %s" % (exc, "; ".join(lines)), diagnosis=lines,
                             elapsed=round(time.monotonic() - started, 3), **details)
    except client.ApiException as exc:
        module.fail_json(msg="could not watch ResourceSlices: %s" % client.api_error_message(exc),
                         elapsed=round(time.monotonic() - started, 3))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
