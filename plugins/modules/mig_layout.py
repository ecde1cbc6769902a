#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: mig_layout
short_description: Put a MIG layout on nodes through the GPU Operator's MIG manager and wait for the MIG devices
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Labels O(nodes) with C(nvidia.com/mig.config=<layout>), the label NVIDIA's MIG manager follows, and removes a stale
    C(nvidia.com/mig.config.state) so that only the new layout's result counts.
  - Waits (watching nodes) until the MIG manager reports C(nvidia.com/mig.config.state=success) on each node, failing at
    once when it reports C(failed); then waits (watching ResourceSlices) until the DRA driver publishes MIG devices of
    O(profile) on each node.
  - Remembers in node annotations that it set the label and what the node had before; nodes it labelled that are no
    longer in O(nodes) (or all of them with O(state=absent)) get their previous value back.
  - Refuses at once a node that is not in the cluster or not MIG-capable (C(nvidia.com/mig.capable) not V(true)).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: full
    description: Reports the label changes it would make and waits for nothing.
  diff_mode:
    support: full
    description: Shows each node's C(nvidia.com/mig.config) before and after.
requirements:
  - kubernetes >= 34.1.0
options:
  nodes:
    description: The nodes that get O(layout). Ignored with O(state=absent).
    type: list
    elements: str
    default: []
  layout:
    description:
      - A MIG configuration name of the MIG manager's config, for example V(all-1g.10gb) (NVIDIA's default config has
        C(all-<profile>) for each profile of each MIG GPU, C(all-balanced) and C(all-disabled)).
    type: str
  profile:
    description:
      - The MIG profile whose devices to wait for. Defaults to the profile of an C(all-<profile>) O(layout).
    type: str
  state:
    description: V(present) applies O(layout) to O(nodes); V(absent) restores every node this module labelled.
    type: str
    choices: [present, absent]
    default: present
  timeout:
    description: Seconds to wait for the MIG manager and then for the MIG devices, together.
    type: int
    default: 600
"""

EXAMPLES = r"""
- name: Split the H100s of gpu-node-1 into seven 1g.10gb partitions
  dra.gpu.mig_layout:
    nodes: [gpu-node-1]
    layout: all-1g.10gb
    timeout: 900
"""

RETURN = r"""
patched:
  description: The nodes whose labels changed (or would change, in check mode), each with C(node) and C(layout).
  returned: always
  type: list
  elements: dict
mig_devices:
  description: Per node, the number of published MIG devices of O(profile) once they appeared.
  returned: success
  type: dict
elapsed:
  description: Seconds spent, including the waits.
  returned: always
  type: float
"""

import time

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, watch
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.sharing import mig_layout
from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes as kube_nodes
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION

DRIVER = nvidia.DRA_DRIVER


def _nodes(kube):
    items, _rv = kube.list_all(kube.core.list_node)
    return kube_nodes.labelled(items)


def _wait_for_state(kube, expected, timeout):
    watcher = watch.kube_watcher(kube.core.list_node, kube.api)
    watch.wait_until(lambda: kube.list_all(kube.core.list_node), watcher,
                     lambda items: mig_layout.state_verdict(items, expected), timeout,
                     "the MIG manager to report %s=success on %s" % (mig_layout.STATE_LABEL, ", ".join(sorted(expected))))


def _wait_for_devices(kube, names, profile, timeout):
    def list_fn(**kw):
        return kube.custom.list_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "resourceslices", **kw)

    def condition(items):
        devices, _problems = slice_devices.devices_from_slices(items)
        counts = mig_layout.mig_device_counts(devices, names, profile)
        return counts if len(counts) == len(names) else None

    selector = {"field_selector": "spec.driver=%s" % DRIVER}
    result, _stats = watch.wait_until(lambda: kube.list_all(list_fn, **selector),
                                      watch.kube_watcher(list_fn, kube.api, **selector), condition, timeout,
                                      "%s MIG devices of profile %s on %s" % (DRIVER, profile, ", ".join(names)))
    return result


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.seconds, "timeout", params["timeout"])
    if params["state"] == "present":
        problems.check(inputs.strings, "nodes", params["nodes"], allow_empty_list=False)
        problems.check(inputs.unique, "nodes", params["nodes"], "node")
    return problems.found


def main():
    module = client.kube_module(
        dict(nodes=dict(type="list", elements="str", default=[]), layout=dict(type="str"),
             profile=dict(type="str"), state=dict(type="str", choices=["present", "absent"], default="present"),
             timeout=dict(type="int", default=600)),
        checks=_input_problems,
        required_if=[("state", "present", ("layout",))])
    params = module.params
    present = params["state"] == "present"
    profile = params["profile"] or (mig_layout.layout_profile(params["layout"]) if present else None)
    started = time.monotonic()
    wanted = set(params["nodes"]) if present else set()
    try:
        kube = client.Kube(client.api_client(module, rides_out_restarts=True))
        nodes = _nodes(kube)
        problems = mig_layout.node_problems(nodes, sorted(wanted))
        if problems:
            module.fail_json(msg="nodes: %s; nothing was changed" % "; ".join(problems), patched=[], elapsed=0.0)
        patches = mig_layout.patches(nodes, wanted, params["layout"])
        before = dict((n["name"], n["labels"].get(mig_layout.CONFIG_LABEL)) for n in nodes)
        diff = {"before": dict((p["node"], before[p["node"]]) for p in patches),
                "after": dict((p["node"], p["layout"]) for p in patches)}
        patched = [{"node": p["node"], "layout": p["layout"]} for p in patches]
        if module.check_mode:
            module.exit_json(changed=bool(patches), patched=patched, diff=diff, mig_devices={}, elapsed=0.0)
        for item in patches:
            kube.core.patch_node(item["node"], item["patch"])
        deadline = started + params["timeout"]
        expected = dict((name, params["layout"]) for name in wanted)
        if expected:
            _wait_for_state(kube, expected, max(1, deadline - time.monotonic()))
        counts = {}
        if present and profile:
            counts = _wait_for_devices(kube, sorted(wanted), profile, max(1, deadline - time.monotonic()))
    except mig_layout.MigLayoutError as exc:
        module.fail_json(msg="the MIG layout was not applied: %s. The nodes keep the label; check the layout's name "
                         "and the MIG manager's log (kubectl logs -n gpu-operator -l app=nvidia-mig-manager), then run "
                         "again with a layout the GPUs support, or with state=absent to restore what they had" % exc,
                         patched=patched, elapsed=round(time.monotonic() - started, 3))
    except watch.WaitTimeout as exc:
        module.fail_json(msg=str(exc), patched=patched, elapsed=round(time.monotonic() - started, 3))
    except client.ApiException as exc:
        module.fail_json(msg="could not label or watch nodes: %s" % client.api_error_message(exc),
                         elapsed=round(time.monotonic() - started, 3))
    module.exit_json(changed=bool(patches), patched=patched, diff=diff, mig_devices=counts,
                     elapsed=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
