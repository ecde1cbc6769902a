#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_manager_wait
short_description: Wait until DRA has left nodes, or until the device plugin serves them again
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - The two waits of taking a node from DRA back to NVIDIA's device plugin (the gpu_operator role's
    C(gpu_operator_back_to_device_plugin)), so that the two GPU managers never serve one node at once.
  - O(state=dra_gone) waits with watches until the DRA kubelet-plugin pods (O(plugin_pod_selector) in
    O(plugin_namespace)) have left O(nodes) and the ResourceSlices of O(driver) published for them are gone.
  - O(state=device_plugin_serving) waits with a watch until every one of O(nodes) offers C(nvidia.com/gpu) again
    (allocatable), that is, the device plugin is back.
  - On timeout it fails saying what it waited for and what is still there. It changes nothing; in check mode it
    does not wait.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  state:
    description: What to wait for.
    type: str
    choices: [dra_gone, device_plugin_serving]
    required: true
  nodes:
    description: The nodes. Empty returns at once.
    type: list
    elements: str
    default: []
  driver:
    description: The DRA driver whose ResourceSlices must be gone (O(state=dra_gone)).
    type: str
    default: gpu.nvidia.com
  plugin_namespace:
    description: Namespace of the DRA kubelet-plugin pods (O(state=dra_gone)); empty skips waiting for the pods.
    type: str
    default: ""
  plugin_pod_selector:
    description: Label selector of the DRA kubelet-plugin pods (O(state=dra_gone)).
    type: str
    default: ""
  timeout:
    description: Seconds to wait.
    type: int
    default: 300
"""

EXAMPLES = r"""
- name: Wait until DRA has left gpu-node-7 (its kubelet plugin and its slices gone)
  dra.gpu.gpu_manager_wait:
    state: dra_gone
    nodes: [gpu-node-7]
    plugin_namespace: nvidia-dra-driver-gpu
    plugin_pod_selector: dra-driver-nvidia-gpu-component=kubelet-plugin

- name: Wait until the device plugin serves gpu-node-7 again
  dra.gpu.gpu_manager_wait:
    state: device_plugin_serving
    nodes: [gpu-node-7]
"""

RETURN = r"""
waited_for:
  description: The nodes waited for (none in check mode).
  returned: always
  type: list
  elements: str
  sample: [gpu-node-7]
elapsed:
  description: Seconds spent waiting.
  returned: success
  type: float
"""

import time

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, watch
from ansible_collections.dra.gpu.plugins.module_utils.workloads.gpu_manager_wait import GpuManagerWait


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.seconds, "timeout", params["timeout"])
    problems.check(inputs.strings, "nodes", params["nodes"])
    problems.check(inputs.unique, "nodes", params["nodes"], "node")
    if params["plugin_pod_selector"]:
        problems.check(inputs.label_selector, "plugin_pod_selector", params["plugin_pod_selector"])
    return problems.found


def main():
    module = client.kube_module(
        dict(state=dict(type="str", choices=["dra_gone", "device_plugin_serving"], required=True),
             nodes=dict(type="list", elements="str", default=[]),
             driver=dict(type="str", default="gpu.nvidia.com"),
             plugin_namespace=dict(type="str", default=""),
             plugin_pod_selector=dict(type="str", default=""),
             timeout=dict(type="int", default=300)),
        checks=_input_problems)
    params = module.params
    if module.check_mode or not params["nodes"]:
        module.exit_json(changed=False, waited_for=[])
    started = time.monotonic()
    try:
        wait = GpuManagerWait(client.Kube(client.api_client(module)))
        if params["state"] == "dra_gone":
            wait.dra_gone(params["nodes"], params["driver"], params["plugin_namespace"],
                          params["plugin_pod_selector"], params["timeout"])
        else:
            wait.device_plugin_serving(params["nodes"], params["timeout"])
    except watch.WaitTimeout as exc:
        module.fail_json(msg=str(exc), waited_for=params["nodes"])
    except client.ApiException as exc:
        module.fail_json(msg="could not read the cluster: %s" % client.api_error_message(exc))
    module.exit_json(changed=False, waited_for=params["nodes"], elapsed=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
