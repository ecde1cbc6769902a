#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_fit
short_description: How many replicas of some workloads fit on the free GPUs, whole, shared, MIG or memory shares
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Read-only packing plan. Reads the ResourceSlices of O(driver) and every ResourceClaim, and answers for
    O(workloads) how many replicas fit, per node and in total, in four alternative ways, each computed on
    its own (they are not added up).
  - V(whole_gpu) gives each replica one free GPU (a device with attribute C(type=gpu)) with at least the
    workload's memory, as the device plugin does.
  - V(shared) puts one shared ResourceClaim (time-slicing or MPS) on each free GPU, holding as many replicas of
    one workload as the workload's memory fits into the GPU's memory whole times. One GPU serves one workload,
    because MPS sets one pinned-memory limit and one active-thread percentage for every client of a claim.
  - For MPS each V(shared) placement carries the claim's C(mpsConfig), with C(defaultPinnedDeviceMemoryLimit) set
    to the workload's memory and C(defaultActiveThreadPercentage) to 100 divided by the replicas on that GPU,
    rounded down. Time-slicing enforces no memory limit, so there the memory figure is bookkeeping.
  - V(mig) gives each replica one free published MIG device (attribute C(type=mig)) whose C(memory) capacity is
    at least the workload's, the smallest fitting profile first.
  - Workloads are placed greedily in the order given, each taking the smallest free device that fits (so large
    devices stay free for large workloads); list the workloads that matter most first.
  - A device allocated to any claim is not free, shared or not, because how much of it is used cannot be seen
    from the API. Only the newest complete generation of each pool counts, as the scheduler does.
  - V(memory_shares) gives each replica its own ResourceClaim asking C(capacity.requests.memory) (the
    workload's memory), placed as the scheduler's allocator places it (Kubernetes' consumable capacity, read in
    k8s.io/dynamic-resource-allocation v0.37.2). A device that publishes C(allowMultipleAllocations) (NVIDIA's DRA
    driver 0.5.0 with ConsumableShares) takes claims while the sum of what they consume fits every capacity it
    publishes; the request is rounded up by the device's C(requestPolicy) (to C(validRange.min), then up to its
    C(step)), a capacity not requested consumes its policy's C(default) (the whole value without a policy), and a
    request above C(validRange.max) skips the device. So in NVIDIA's mode V(N) the C(shares) capacity caps the
    claims per GPU. What claims already consumed (the C(consumedCapacity) of their allocation results with a
    C(shareID)) is subtracted; a result without a C(shareID) takes its device whole. A device without
    C(allowMultipleAllocations) goes whole to one claim whose request it can hold, as the scheduler does. A
    device with a C(NoSchedule) or C(NoExecute) taint in its slice is skipped, as for a claim without
    tolerations (DeviceTaintRule objects are not read).
  - V(memory_shares) is the scheduler's accounting, which the scheduler enforces; nothing caps a pod's memory use
    on the GPU.
  - V(memory_shares) places workloads in the order given (create each workload's pods after the previous one's
    are scheduled to get the same), nodes in name order, on each node the first device in the slice's order with
    room, as the allocator tries them. The scheduler chooses nodes by score, so a workload whose count changes when
    the plan is made again with nodes in reverse order or spread one replica at a time is listed in
    C(depends_on_node_choice); that check is not a proof, the scheduler's scores may choose yet other nodes.
  - Replicas that do not fit are listed per strategy with the reason in words.
  - Fails, before anything is read, on a malformed workload, naming the field and what to write instead.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  workloads:
    description:
      - The workloads to place, each a mapping with C(name) (required, unique), C(memory) (required, the GPU
        memory one replica needs as a Kubernetes quantity such as V(4Gi) or V(4G); V(4GB) is refused),
        C(replicas) (a whole number, default V(1)), C(model) (optional) and C(device_class) (optional).
      - C(memory) V(default) is a claim with no memory request. V(memory_shares) then gives it what the device's
        C(requestPolicy) gives by default (with NVIDIA's ConsumableShares the whole card in mode V(memory), nothing
        of the memory in V(unlimited) and V(N), where one of the N C(shares) is still taken); the other answers
        give each such replica a device of its own, of any size.
      - C(model) keeps only devices whose C(productName) attribute contains it, ignoring case, for example V(L4)
        or V(A100). A match that runs on into more digits does not count, so V(A10) does not match an A100 and
        V(L4) does not match an L40S.
      - C(device_class) keeps only the devices the CEL selectors of that DeviceClass match, for every strategy,
        evaluated locally as the API server would; a class whose selectors cannot be evaluated here leaves the
        workload unplaced with the reason. A class the cluster does not have is refused, naming those it has.
        Without it, V(memory_shares) uses the devices with attribute C(type=gpu), as NVIDIA's class
        C(gpu.nvidia.com) selects them.
    type: list
    elements: dict
    required: true
  nodes:
    description:
      - Only devices local to these nodes. Unset or empty, every node.
    type: list
    elements: str
  driver:
    description:
      - The DRA driver whose devices are counted.
    type: str
    default: gpu.nvidia.com
notes:
  - A pool left out because it is incomplete or invalid is listed in RV(ignored_pools).
  - When a workload names a C(device_class) the module also lists DeviceClasses (get and list on
    C(deviceclasses.resource.k8s.io)).
  - The greedy placement is a plan, not a promise; the scheduler places pods one by one and other claims may be
    allocated in between.
"""

EXAMPLES = r"""
- name: How many inference replicas fit, three ways
  dra.gpu.gpu_fit:
    workloads:
      - name: inference
        memory: 4Gi
        replicas: 40
  register: fit

- name: Show the answer
  ansible.builtin.debug:
    msg: "{{ fit.summary }}"

- name: Large jobs on A100s first, then small ones anywhere, on two nodes only
  dra.gpu.gpu_fit:
    nodes: [gpu-node-1, gpu-node-2]
    workloads:
      - {name: training, memory: 40Gi, replicas: 4, model: A100}
      - {name: notebooks, memory: 8Gi, replicas: 20}
  register: fit

- name: 8Gi shares of L4s only (NVIDIA's driver 0.5.0 with ConsumableShares), what the scheduler will place
  dra.gpu.gpu_fit:
    workloads:
      - {name: notebooks, memory: 8Gi, replicas: 12, device_class: l4-shared}
  register: fit

- name: Stop when sharing cannot hold every replica
  ansible.builtin.assert:
    that: fit.unplaced.shared | length == 0
    fail_msg: "{{ fit.unplaced.shared | map(attribute='reason') | join('; ') }}"
"""

RETURN = r"""
summary:
  description: The answer in one line.
  returned: always
  type: str
  sample: "40 replicas requested: 6 fit with whole GPUs, 30 with sharing (5.0x), 0 with MIG, 30 with memory shares
    (the scheduler's accounting)"
requested:
  description: Replicas requested, all workloads together.
  returned: always
  type: int
  sample: 40
strategies:
  description:
    - One entry per strategy, V(whole_gpu), V(shared), V(mig) and V(memory_shares), each computed on its own.
    - Each has C(total) (replicas placed), C(by_node) (replicas placed per node, every node with a free device
      of the strategy's kind listed, V(0) included), C(devices_used) and C(placements).
    - Each placement is one device given to one workload, with C(workload), C(node), C(pool), C(device),
      C(model) (the C(productName)), C(memory) (the device's) and C(replicas).
      V(mig) placements add C(profile); V(shared) placements add C(mps_config), the claim's
      C(sharing.mpsConfig) for MPS (C(defaultPinnedDeviceMemoryLimit), C(defaultActiveThreadPercentage)).
    - V(memory_shares) placements add C(shared) (the device takes several claims) and C(consumes) (what one claim
      consumes there, as its allocation result's C(consumedCapacity) will say, e.g. C(memory=8Gi)), and the
      strategy adds C(depends_on_node_choice) (workload names).
    - Devices without a node of their own are counted under V((all_nodes)) or V((node_selector)).
  returned: always
  type: dict
  sample:
    whole_gpu:
      total: 6
      by_node: {node-a: 2, node-b: 4}
      devices_used: 6
      placements:
        - {workload: inference, node: node-a, pool: node-a, device: gpu-0, model: NVIDIA A10, memory: 23028Mi,
           replicas: 1}
    shared:
      total: 30
      by_node: {node-a: 10, node-b: 20}
      devices_used: 6
      placements:
        - {workload: inference, node: node-a, pool: node-a, device: gpu-0, model: NVIDIA A10, memory: 23028Mi,
           replicas: 5, mps_config: {defaultPinnedDeviceMemoryLimit: 4Gi, defaultActiveThreadPercentage: 20}}
    mig: {total: 0, by_node: {}, devices_used: 0, placements: []}
    memory_shares:
      total: 30
      by_node: {node-a: 10, node-b: 20}
      devices_used: 6
      depends_on_node_choice: []
      placements:
        - {workload: inference, node: node-a, pool: node-a, device: gpu-0, model: NVIDIA A10, memory: 23028Mi,
           shared: true, replicas: 5, consumes: {memory: 4Gi}}
workloads:
  description:
    - Each workload as understood (C(name), C(memory), C(model), C(device_class), C(requested)) with the replicas
      placed by each strategy (C(whole_gpu), C(shared), C(mig), C(memory_shares)).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: inference, memory: 4Gi, model: null, device_class: null, requested: 40, whole_gpu: 6, shared: 36, mig: 0,
       memory_shares: 30}
unplaced:
  description:
    - Per strategy, the workloads with replicas left over, each with C(workload), C(replicas) (left over),
      C(requested) and C(reason) in words.
  returned: always
  type: dict
  sample:
    whole_gpu:
      - {workload: inference, replicas: 34, requested: 40,
         reason: "34 of 40 replicas left over: all 6 free GPUs with 4Gi or more are full"}
    shared:
      - {workload: inference, replicas: 4, requested: 40,
         reason: "4 of 40 replicas left over: all 6 free GPUs with 4Gi or more are full"}
    mig:
      - {workload: inference, replicas: 40, requested: 40,
         reason: "no MIG device is published: no GPU on the selected nodes has MIG enabled with instances created"}
inventory:
  description: The devices the plan could use, C(gpu) and C(mig), each with C(count) and C(free).
  returned: always
  type: dict
  sample: {gpu: {count: 6, free: 6}, mig: {count: 0, free: 0}}
ignored_pools:
  description: Pools of O(driver) the scheduler would not use, with the reason (incomplete, or duplicate device names).
  returned: always
  type: list
  elements: dict
  sample:
    - {driver: gpu.nvidia.com, pool: node-c, generation: 2, reason: "incomplete: 1 of 2 slices published"}
"""

from ansible_collections.dra.gpu.plugins.module_utils.dra import slices
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.sharing import fit_workloads, gpu_fit


def _input_problems(params):
    problems = inputs.Problems()
    problems.extend(fit_workloads.input_problems(params["workloads"]))
    problems.check(inputs.dns_subdomain, "driver", params["driver"], "DRA driver")
    problems.check(inputs.strings, "nodes", params["nodes"])
    return problems.found


def main():
    module = client.kube_module(
        dict(workloads=dict(type="list", elements="dict", required=True),
             nodes=dict(type="list", elements="str"),
             driver=dict(type="str", default=gpu_fit.DEFAULT_DRIVER)),
        checks=_input_problems)
    params = module.params

    def read(kube):
        slice_list, _version = kube.slices(params["driver"])
        # DeviceClasses only when a workload names one: the plan needs no more rights otherwise.
        classes = kube.list_resource("deviceclasses")[0] if any(
            w.get("device_class") for w in params["workloads"]) else []
        # DeviceTaintRules (Kubernetes 1.37+) take devices out as the slices' own taints do.
        return gpu_fit.from_slices(slice_list, kube.claims(), params["workloads"], params["driver"], params["nodes"],
                                   classes, slices.taint_rules(kube))

    client.exit_with_reading(module, read, inputs.InputError)


if __name__ == "__main__":
    main()
