#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_packing_check
short_description: Run a packing plan's workloads as real pods and compare what the scheduler placed with the plan
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Plans O(workloads) with M(dra.gpu.gpu_fit) over the cluster as it is, then runs them for real, in a namespace
    of its own (O(namespace), which must not exist). Per workload it makes a ResourceClaimTemplate and one pod per
    replica, each pod with a claim of its own. The pods run O(image) (pause) and do nothing but hold their claims.
  - With O(strategy=whole_gpu) a claim asks for one device of the workload's class and nothing more (a whole GPU;
    where NVIDIA's driver shares GPUs by memory in its C(memory) mode, a claim without a memory request takes the
    whole memory). With O(strategy=memory_shares) it asks for C(capacity.requests.memory) of the workload's
    C(memory) (Kubernetes 1.36+ with consumable capacity, NVIDIA's DRA driver 0.5.0 with ConsumableShares).
    Time-slicing and MPS cannot be checked this way, because the scheduler does not count the pods of a shared claim.
  - Each workload's pods are created once the previous workload's are all decided, the order the plan assumes;
    a watch, bounded by O(timeout) for the whole run, waits until the scheduler has bound or marked Unschedulable
    every pod.
  - Compares what the scheduler cannot choose - per workload the pods placed and refused, the claims per device
    (as a multiset), per node where the plan says no workload depends on the node choice, and every claim's
    C(consumedCapacity) - and says in words where plan and scheduler differ.
  - Then deletes the namespace and waits until it is gone, on failure and timeout too. The cluster is left as it
    was, so the module reports C(changed=false). In check mode it plans only and creates nothing.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
options:
  workloads:
    description:
      - As M(dra.gpu.gpu_fit) takes them - C(name) (a DNS label; pods are named C(<name>-<index>)), C(replicas),
        C(memory), and optionally C(model) and C(device_class) (default O(device_class)).
    type: list
    elements: dict
    required: true
  strategy:
    description: Which of gpu_fit's strategies to run for real.
    type: str
    choices: [whole_gpu, memory_shares]
    default: memory_shares
  device_class: {description: The DeviceClass of the workloads that name none., type: str, default: gpu.nvidia.com}
  namespace: {description: A namespace that does not exist yet; made for the run and deleted after it., type: str,
              default: dra-gpu-packing-check}
  image: {description: The pods' image; it must keep running (the pause image does)., type: str,
          default: registry.k8s.io/pause:3.10}
  driver: {description: The DRA driver whose devices the plan counts., type: str, default: gpu.nvidia.com}
  timeout: {description: Seconds the whole run may wait for the scheduler; the removal has its own minute., type: int,
            default: 300}
"""

EXAMPLES = r"""
- name: How many 8Gi shares the scheduler really gives, beside the plan
  dra.gpu.gpu_packing_check:
    device_class: nvidia-gpu-shared
    workloads:
      - {name: inference, memory: 8Gi, replicas: 20}
  register: packing

- name: Show it
  ansible.builtin.debug:
    msg: "{{ packing.summary }}"

- name: Whole cards, for comparison
  dra.gpu.gpu_packing_check:
    strategy: whole_gpu
    device_class: nvidia-gpu
    workloads:
      - {name: inference, memory: 8Gi, replicas: 20}
"""

RETURN = r"""
summary:
  description: The answer in one line.
  returned: success
  type: str
  sample: "20 pods with memory shares: the plan said 12 fit, the scheduler placed 12 and left 8 Unschedulable, as planned"
agrees: {description: Whether the scheduler placed the pods as the plan said., returned: success, type: bool}
differences:
  description: Where plan and scheduler differ, in words; empty when they agree.
  returned: success
  type: list
  elements: str
plan:
  description: M(dra.gpu.gpu_fit)'s whole answer, made just before the pods were created.
  returned: success
  type: dict
scheduler:
  description: Per workload what the scheduler did - C(name), C(requested), C(scheduled), C(unschedulable),
    C(by_node) (pods per node) and C(messages) (the scheduler's reasons for the pods it refused).
  returned: success
  type: list
  elements: dict
  sample:
    - {name: inference, requested: 20, scheduled: 12, unschedulable: 8, by_node: {node-a: 4, node-b: 8},
       messages: ["0/2 nodes are available: 2 cannot allocate all claims. ..."]}
allocations:
  description: Every claim's allocation - C(workload), C(pool), C(device), C(consumed) (its C(consumedCapacity))
    and C(share_id).
  returned: success
  type: list
  elements: dict
left_behind: {description: What the removal could not delete in time., returned: when removal failed, type: list,
              elements: str}
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.sharing import fit_workloads, gpu_fit, packing, packing_run


def _input_problems(params):
    problems = inputs.Problems()
    problems.extend(fit_workloads.input_problems(params["workloads"]))
    problems.extend(packing.input_problems(params))
    return problems.found


def main():
    module = client.kube_module(
        dict(workloads=dict(type="list", elements="dict", required=True),
             strategy=dict(type="str", choices=list(packing.STRATEGIES), default="memory_shares"),
             device_class=dict(type="str", default="gpu.nvidia.com"),
             namespace=dict(type="str", default="dra-gpu-packing-check"),
             image=dict(type="str", default="registry.k8s.io/pause:3.10"),
             driver=dict(type="str", default=gpu_fit.DEFAULT_DRIVER),
             timeout=dict(type="int", default=300)),
        checks=_input_problems)
    params = dict(module.params)
    params["workloads"] = [dict(w, device_class=w.get("device_class") or params["device_class"])
                           for w in params["workloads"]]
    kube = client.Kube(client.api_client(module))
    if module.check_mode:
        try:
            the_plan = packing_run.plan(kube, params)
        except inputs.InputError as exc:
            module.fail_json(msg=str(exc))
        module.exit_json(changed=False, plan=the_plan, msg="check mode: would run %d pods in namespace %s" % (
            the_plan["requested"], params["namespace"]))
    try:
        passed, result = packing_run.run_and_clean_up(kube, params)
    except inputs.InputError as exc:
        module.fail_json(msg=str(exc))
    if not passed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
