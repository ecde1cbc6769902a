#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: device_plugin_drain
short_description: Evict the pods holding nvidia.com/gpu from nodes going to DRA, and uncordon them once the device plugin has left
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Used by the gpu_operator role when C(gpu_operator_evict_device_plugin_pods) is true, so that DRA never hands out a
    GPU the device plugin already gave. Unlike a drain of the whole node, only the pods holding C(nvidia.com/gpu)
    are evicted.
  - O(state=drained) cordons each of O(nodes) where a pod holds C(nvidia.com/gpu) (marking the cordon as its own with
    the annotation C(dra.gpu/cordoned-by); a node cordoned already is left as it is), evicts those pods through the
    Eviction API, which honours PodDisruptionBudgets, asks again every few seconds for the evictions a budget
    refused, and waits with a watch until every one of them is gone. When they are not gone within O(timeout), it
    lifts the cordons it made and fails naming the pods left and the budgets that allow no disruption.
  - O(state=released) waits with a watch until none of O(nodes) offers C(nvidia.com/gpu) any more (the device plugin
    has left them) and then uncordons those of them it cordoned. A node stays cordoned until then, so that the
    evicted pods' replacements, which still ask for C(nvidia.com/gpu), cannot come back to it.
  - No pod is ever deleted without eviction.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: full
    description: Reports the pods it would evict and the nodes it would cordon or uncordon; changes nothing.
  diff_mode:
    support: full
    description: The pods holding C(nvidia.com/gpu) and the cordons before and after.
requirements:
  - kubernetes >= 34.1.0
options:
  state:
    description:
      - V(drained) cordons and evicts; V(released) uncordons the nodes it cordoned once they offer no C(nvidia.com/gpu).
    type: str
    choices: [drained, released]
    default: drained
  nodes:
    description:
      - The nodes to drain. With O(state=released), the nodes to wait for; empty means every node it cordoned.
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds to wait for the evicted pods to be gone, or for the device plugin to leave the nodes.
    type: int
    default: 300
"""

EXAMPLES = r"""
- name: Move the pods holding nvidia.com/gpu off gpu-node-7, honouring their PodDisruptionBudgets
  dra.gpu.device_plugin_drain:
    nodes: [gpu-node-7]
    timeout: 600

- name: Uncordon it once the device plugin has left it
  dra.gpu.device_plugin_drain:
    state: released
    nodes: [gpu-node-7]
"""

RETURN = r"""
holders:
  description: With O(state=drained), the pods that held C(nvidia.com/gpu) on O(nodes) (left ones, on failure).
  returned: always with state drained
  type: list
  elements: dict
  sample: [{namespace: ml, name: llm-7d9c-abcde, node: gpu-node-7, gpus: 1}]
evicted:
  description: The pods evicted and gone (in check mode, that would be).
  returned: always with state drained
  type: list
  elements: dict
cordoned:
  description: The nodes this run cordoned.
  returned: success with state drained
  type: list
  elements: str
budgets:
  description: The PodDisruptionBudgets (namespace/name) that allowed no disruption when the wait timed out.
  returned: failure with state drained
  type: list
  elements: str
released:
  description: The nodes uncordoned (in check mode, that would be; on a failed drain, the cordons lifted again).
  returned: with state released, and on a failed drain
  type: list
  elements: str
waited_for:
  description: With O(state=released), the nodes it waited for to offer no C(nvidia.com/gpu).
  returned: with state released
  type: list
  elements: str
still_offering:
  description: With O(state=released), the nodes that still offered C(nvidia.com/gpu) when the wait timed out.
  returned: failure with state released
  type: list
  elements: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, watch
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.device_plugin_drain import DevicePluginDrain, DrainFailed


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.seconds, "timeout", params["timeout"])
    problems.check(inputs.strings, "nodes", params["nodes"])
    problems.check(inputs.unique, "nodes", params["nodes"], "node")
    return problems.found


def main():
    module = client.kube_module(
        dict(state=dict(type="str", choices=["drained", "released"], default="drained"),
             nodes=dict(type="list", elements="str", default=[]),
             timeout=dict(type="int", default=300)),
        checks=_input_problems)
    params = module.params
    try:
        drain = DevicePluginDrain(client.Kube(client.api_client(module)))
        if params["state"] == "drained":
            result = drain.drain(params["nodes"], params["timeout"], module.check_mode)
            result["diff"] = {"before": {"holders": result["holders"], "cordoned": []},
                              "after": {"holders": [], "cordoned": result["cordoned"]}}
        else:
            result = drain.release(params["nodes"], params["timeout"], module.check_mode)
            result["diff"] = {"before": {"cordoned": result["released"]}, "after": {"cordoned": []}}
    except DrainFailed as exc:
        module.fail_json(msg=str(exc), **exc.details)
    except watch.WaitTimeout as exc:
        module.fail_json(msg=str(exc))
    except client.ApiException as exc:
        module.fail_json(msg="could not drain or release the nodes: %s" % client.api_error_message(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
