#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: node_wait
short_description: Wait until nodes are Ready, optionally at a given kubelet version
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Waits until every node in O(names) reports the C(Ready) condition and, with O(kubelet_version), runs that
    kubelet version; used after a node's kubelet was upgraded and restarted.
  - Watches the nodes instead of polling, so it returns as soon as the kubelet reports; it relists after an
    expired watch and reconnects when the API server restarts (as it does during a control-plane upgrade).
  - On timeout it fails naming each node that is not there yet and why (not Ready, or its kubelet version).
  - A name that is not a node of the cluster fails at once, without waiting for O(timeout).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  names:
    description: The nodes to wait for.
    type: list
    elements: str
    required: true
  kubelet_version:
    description: V(1.35.4) waits for exactly that version; V(1.35) for any patch of the minor. Empty waits for Ready only.
    type: str
  timeout:
    description: Seconds to wait.
    type: int
    default: 300
"""

EXAMPLES = r"""
- name: Wait for the upgraded kubelet
  dra.gpu.node_wait:
    names: [gpu-node-1]
    kubelet_version: 1.35.4
    timeout: 300
"""

RETURN = r"""
nodes:
  description: The nodes once they were Ready, with C(name), C(kubelet), C(ready) and C(unschedulable).
  returned: success
  type: list
  elements: dict
  sample: [{name: gpu-node-1, kubelet: v1.35.4, ready: true, unschedulable: true}]
elapsed:
  description: Seconds spent waiting.
  returned: always
  type: float
"""

import time

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, watch
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import node_wait


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.seconds, "timeout", params["timeout"])
    problems.check(inputs.strings, "names", params["names"], allow_empty_list=False)
    problems.check(inputs.unique, "names", params["names"], "node")
    if params["kubelet_version"]:
        problems.check(inputs.version, "kubelet_version", params["kubelet_version"])
    return problems.found


def main():
    module = client.kube_module(
        dict(names=dict(type="list", elements="str", required=True),
             kubelet_version=dict(type="str"),
             timeout=dict(type="int", default=300)),
        checks=_input_problems)
    params = module.params
    started = time.monotonic()
    try:
        kube = client.Kube(client.api_client(module, rides_out_restarts=True))
        found = node_wait.wait(kube, params["names"], params["kubelet_version"], params["timeout"])
    except node_wait.NotANode as exc:
        module.fail_json(msg="names: %s" % exc, elapsed=round(time.monotonic() - started, 3))
    except watch.WaitTimeout as exc:
        module.fail_json(msg=str(exc), elapsed=round(time.monotonic() - started, 3))
    except client.ApiException as exc:
        module.fail_json(msg="could not watch nodes: %s" % client.api_error_message(exc),
                         elapsed=round(time.monotonic() - started, 3))
    keys = ("name", "kubelet", "ready", "unschedulable")
    module.exit_json(changed=False, nodes=[dict((k, n[k]) for k in keys) for n in found],
                     elapsed=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
