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
    and pods) with a summary per node, per driver and per model.
  - Lists are read page by page, so clusters with thousands of devices stay cheap.
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
"""

RETURN = r"""
devices:
  description:
    - Every device that passed the filters, with attributes and capacity flattened to plain values.
    - Attributes of the driver's own domain keep their bare names (C(productName)); others keep their
      qualified names (C(resource.kubernetes.io/pciBusID)).
  returned: always
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
summary:
  description:
    - Counts of RV(devices) in C(total), C(by_node), C(by_driver) and C(by_model) (the C(productName)),
      each with C(count), C(allocated), C(free), C(memory_bytes) and C(memory).
  returned: always
  type: dict
  sample:
    total: {count: 6, allocated: 1, free: 5, memory_bytes: 154618822656, memory: 144Gi}
    by_node:
      node-a: {count: 2, allocated: 1, free: 1, memory_bytes: 51539607552, memory: 48Gi}
ignored_pools:
  description: Pools the scheduler would not use, with the reason (incomplete, or duplicate device names).
  returned: always
  type: list
  elements: dict
  sample:
    - {driver: gpu.nvidia.com, pool: node-c, generation: 2, reason: "incomplete: 1 of 2 slices published"}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dra.gpu.plugins.module_utils import client, inputs, slices


def main():
    spec = client.auth_argument_spec()
    spec.update(slices.FILTER_ARGUMENT_SPEC)
    spec.update(include_allocations=dict(type="bool", default=True))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    client.check_libraries(module)
    inputs.refuse(module, [lambda: inputs.label_selector("node_selector", module.params["node_selector"])])
    try:
        kube = client.Kube(client.api_client(module))
        result = slices.gather(kube, slices.Filters.from_params(module.params), module.params["include_allocations"])
    except client.ApiException as exc:
        module.fail_json(msg="could not read ResourceSlices: %s" % client.api_error_message(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
