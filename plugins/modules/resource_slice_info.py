#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: resource_slice_info
short_description: Inventory of the devices DRA drivers publish, and which are allocated
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads every ResourceSlice (C(resource.k8s.io/v1)) and ResourceClaim and returns one entry per device
    (node, driver, pool, name, attributes and capacity as plain values, allocated or free and to which claim
    and pods, its taints) with a summary per node, per driver and per model.
  - A device's taints are its driver's (NVIDIA's health taints C(gpu.nvidia.com/xid), C(gpu-lost), C(unmonitored))
    and those of the DeviceTaintRules that select it (Kubernetes 1.37+), each with the rule's name and
    C(time_added). A device tainted C(NoSchedule) or C(NoExecute) that no claim holds counts as C(tainted), not
    C(free), as no claim without tolerations gets it.
  - Lists are read page by page and parsed as plain JSON, so clusters with thousands of devices stay cheap.
  - Every value returned costs Ansible time (checking the result for secrets, encoding, the controller's
    handling and printing). Over 8,000 devices the whole list took about twice as long as O(output=summary)
    when registered, and four times as long when printed by an ad hoc command. When a playbook needs counts,
    use O(output=summary); when it needs a few keys of each device, list them in O(fields); O(nodes),
    O(node_selector) or O(pool) leave the other nodes' devices out before anything is built.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
  - dra.gpu.slice_filters
options:
  include_allocations:
    description:
      - Read ResourceClaims to tell which devices are allocated. Without it every device counts as free.
    type: bool
    default: true
  output:
    description:
      - V(full) returns RV(devices), RV(summary) and RV(ignored_pools).
      - V(summary) returns RV(summary) and RV(ignored_pools) only, counted straight from the slices without
        building the device list; the same counts as V(full) gives, for a fraction of the time.
    type: str
    choices: [full, summary]
    default: full
    version_added: 0.2.0
  fields:
    description:
      - Keep only these keys in each entry of RV(devices), for example V([node, name, allocated]).
      - Every key when left out. RV(summary) is counted from whole devices either way.
      - Not with O(output=summary), which returns no devices.
    type: list
    elements: str
    choices: [node, node_scope, driver, pool, name, slice, generation, attributes, capacity, allocated, claim, pods,
              taints, tainted]
    version_added: 0.2.0
"""

EXAMPLES = r"""
- name: List every GPU NVIDIA's driver publishes
  dra.gpu.resource_slice_info:
    driver: gpu.nvidia.com
  register: gpus

- name: Show free GPUs per model
  ansible.builtin.debug:
    msg: "{{ item.key }}: {{ item.value.free }} of {{ item.value.count }} free"
  loop: "{{ gpus.summary.by_model | dict2items }}"

- name: Devices on the training nodes only
  dra.gpu.resource_slice_info:
    node_selector: node.example.com/pool=training

- name: Counts only (no device list), the cheap way to check a large fleet
  dra.gpu.resource_slice_info:
    driver: gpu.nvidia.com
    output: summary
  register: counts

- name: Fail when fewer than 8 GPUs are free
  ansible.builtin.assert:
    that: counts.summary.total.free >= 8

- name: Which GPU is held by which claim, without attributes and capacity
  dra.gpu.resource_slice_info:
    driver: gpu.nvidia.com
    fields: [node, name, allocated, claim, pods]
"""

RETURN = r"""
devices:
  description:
    - Every device that passed the filters, with attributes and capacity flattened to plain values.
    - Attributes of the driver's own domain keep their bare names (C(productName)); others keep their
      qualified names (C(resource.kubernetes.io/pciBusID)).
    - With O(fields), each entry has only those keys.
  returned: when O(output=full)
  type: list
  elements: dict
  sample:
    - node: node-a
      node_scope: node
      driver: gpu.nvidia.com
      pool: node-a
      name: gpu-0
      slice: node-a-gpu.nvidia.com-x7k2p
      generation: 1
      attributes: {type: gpu, productName: NVIDIA A10, uuid: GPU-3197cc9c-c36f-5dfc-9b67-e82ea590c427}
      capacity: {memory: 24Gi}
      allocated: true
      claim: default/job-gpu-abc12
      pods: [default/job]
      taints:
        - {key: gpu.nvidia.com/xid, value: "79", effect: NoSchedule, time_added: "2026-12-06T20:16:19Z", rule: null}
      tainted: true
summary:
  description:
    - Counts of RV(devices) in C(total), C(by_node), C(by_driver) and C(by_model) (the C(productName)),
      each with C(count), C(allocated), C(free), C(tainted) (not allocated, but tainted NoSchedule or NoExecute),
      C(memory_bytes) and C(memory).
    - The same with O(output=summary) as with O(output=full).
  returned: always
  type: dict
  sample:
    total: {count: 6, allocated: 1, free: 4, tainted: 1, memory_bytes: 154618822656, memory: 144Gi}
    by_node:
      node-a: {count: 2, allocated: 1, free: 1, tainted: 0, memory_bytes: 51539607552, memory: 48Gi}
ignored_pools:
  description: Pools the scheduler would not use, with the reason (incomplete, or duplicate device names).
  returned: always
  type: list
  elements: dict
  sample:
    - {driver: gpu.nvidia.com, pool: node-c, generation: 2, reason: "incomplete: 1 of 2 slices published"}
"""

from ansible_collections.dra.gpu.plugins.module_utils.dra import slices
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.label_selector, "node_selector", params["node_selector"])
    problems.check(slices.check_output, params["output"], params["fields"])
    return problems.found


def main():
    module = client.kube_module(
        dict(slices.FILTER_ARGUMENT_SPEC, **slices.OUTPUT_ARGUMENT_SPEC),
        checks=_input_problems)
    params = module.params
    try:
        reader = client.RawReader(client.api_client(module))
        result = slices.gather(reader, slices.Filters.from_params(params), params["include_allocations"],
                               output=params["output"], fields=params["fields"])
    except client.ApiException as exc:
        module.fail_json(msg="could not read ResourceSlices: %s" % client.api_error_message(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
