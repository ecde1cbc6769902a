#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_workload_migrate
short_description: Move one workload from nvidia.com/gpu to a DRA claim, follow its rollout, roll back if it fails
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Rewrites the pod template of one Deployment, StatefulSet or DaemonSet from the device plugin's
    C(nvidia.com/gpu) to a DRA claim and changes nothing else in it. Each container's C(nvidia.com/gpu) limit
    becomes a request of as many devices of O(device_class), named after the container, in one claim per pod
    (a ResourceClaimTemplate, O(claim_mode=template)) or in one claim all pods share (a ResourceClaim,
    O(claim_mode=shared), for a sharing class such as time-slicing or MPS).
  - The template before the change is kept in the workload's annotation C(dra.gpu/gpu-migration), written in
    the same update, so O(state=reverted) can put it back later, and a migrated workload is left alone.
  - Both writes are validated by the API server (dry run) before anything is written. Then it follows the
    rollout (a watch, bounded by O(timeout)) and checks that every new pod is Ready with its claim allocated
    and reserved for it. When the rollout fails, stalls (the scheduler cannot allocate the new pods' claims,
    a container cannot start) or times out, the old template is put back, its rollout followed, the claim
    object removed, and the task fails saying why.
  - >-
    With O(memory), each container's C(nvidia.com/gpu: 1) becomes a share of one card instead - a request of
    C(exactly: {deviceClassName: <device_class>, capacity: {requests: {memory: <memory>}}}) in the pod's own claim -
    and the scheduler may put several pods' claims on one GPU (Kubernetes' consumable capacity with NVIDIA's DRA
    driver 0.5.0 and its ConsumableShares gate). It is the scheduler's accounting; nothing caps a pod's memory use on
    the GPU. Refused before anything changes, saying what to do - where the API server would drop the request (a
    server-side dry run; Kubernetes 1.35 without DRAConsumableCapacity, where every pod would silently get a whole
    card), where no device the class selects takes several allocations or allows a share that large, for a
    container asking C(nvidia.com/gpu) above 1, and with O(claim_mode=shared).
  - Jobs, bare Pods, CronJobs and ownerless ReplicaSets are refused with the reason; a pod template that
    GitOps writes will be written back by it, so commit RV(template) there instead.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: full
    description: Shows the new template and the claim object, and writes nothing.
  diff_mode:
    support: full
    description: The pod template before and after, and the claim object made.
requirements:
  - kubernetes >= 34.1.0
options:
  kind: {description: The kind of the workload., type: str, default: Deployment,
         choices: [Deployment, StatefulSet, DaemonSet, CronJob, Job, ReplicaSet, Pod]}
  name:
    description:
      - The workload's name.
      - One of O(name) and O(label_selector) is required.
    type: str
  label_selector:
    description:
      - Every workload of O(kind) in O(namespace) whose labels match, for example V(gpu-migration=wave-1),
        taken one at a time in name order. The first that fails (and is rolled back) stops the rest; those
        before it stay migrated.
    type: str
  namespace: {description: The workload's namespace., type: str, required: true}
  state:
    description:
      - V(migrated) moves the workload to a claim; V(reverted) puts back the template it had before.
    type: str
    choices: [migrated, reverted]
    default: migrated
  device_class:
    description:
      - The DeviceClass the claim's requests name, for example V(gpu.nvidia.com) for whole GPUs, or a sharing
        class made by the gpu_sharing role.
    type: str
    default: gpu.nvidia.com
  claim_mode:
    description:
      - V(template) gives each pod its own devices, as C(nvidia.com/gpu) did.
      - V(shared) gives all pods one claim, so they share its devices; use it with a sharing class.
    type: str
    choices: [template, shared]
    default: template
  claim_name: {description: The name of the ResourceClaimTemplate or ResourceClaim made. Default C(<name>-gpu)., type: str}
  timeout: {description: "Seconds to wait for the rollout, and again for a rollback's rollout.", type: int, default: 300}
  memory:
    description:
      - What each pod gets of one GPU's memory, a quantity such as V(8Gi) - never guessed from the workload, so
        say what it needs. Each container that asked for one C(nvidia.com/gpu) gets a share of this size on one
        device, in a claim of its pod's own (O(claim_mode=template)).
      - Unset (the default), each container gets whole cards, as before.
      - A container asking C(nvidia.com/gpu) above 1 is refused - whether it should get this much of each card or
        in all is a choice about the program; migrate it with whole cards, or change it to 1 first.
    type: str
  method:
    description:
      - V(claim) rewrites the pod template to a claim, as described above.
      - V(extended_resource) rewrites nothing. Where the DRAExtendedResource feature is on (beta and on by default
        from Kubernetes 1.36) and a DeviceClass carries C(extendedResourceName) V(nvidia.com/gpu), as NVIDIA's chart
        creates C(gpu.nvidia.com), the scheduler serves pods that keep C(nvidia.com/gpu) through DRA on nodes
        without the device plugin. The module checks that the server keeps that field (a class that has it, or a
        server-side dry run) and fails saying why when it does not (Kubernetes 1.35, or the gate off); otherwise
        it reports the workload's pods and the claims the scheduler made for them.
    type: str
    choices: [claim, extended_resource]
    default: claim
"""

EXAMPLES = r"""
- name: See what would change
  dra.gpu.gpu_workload_migrate:
    kind: Deployment
    name: llm
    namespace: inference
  check_mode: true
  diff: true

- name: Move it to one GPU claim per pod
  dra.gpu.gpu_workload_migrate:
    kind: Deployment
    name: llm
    namespace: inference
    device_class: gpu.nvidia.com

- name: Move it to an 8 GiB share of a GPU (NVIDIA's DRA driver 0.5.0 with ConsumableShares, Kubernetes 1.36+)
  dra.gpu.gpu_workload_migrate:
    kind: Deployment
    name: llm
    namespace: inference
    memory: 8Gi

- name: Put the device-plugin template back
  dra.gpu.gpu_workload_migrate:
    kind: Deployment
    name: llm
    namespace: inference
    state: reverted
"""

RETURN = r"""
workloads:
  description: With O(label_selector), the result of each workload taken, in order (the keys below, and C(name)).
  returned: with label_selector
  type: list
  elements: dict
status:
  description: V(migrated), V(reverted), or where it stands when nothing was to be done (V(device-plugin), V(none)).
  returned: always
  type: str
message: {description: "What was done, in a sentence.", returned: always, type: str}
claim:
  description: The claim object made, C(kind), C(name) and C(device_class), and C(memory) for a share of a card.
  returned: when migrated or reverted
  type: dict
  sample: {kind: ResourceClaimTemplate, name: llm-gpu, device_class: gpu.nvidia.com, memory: 8Gi}
requests:
  description: One request per container that asked for GPUs, C(container) and C(count), and C(memory) with O(memory).
  returned: when changed to migrated
  type: list
  elements: dict
extended_resource:
  description: Whether this cluster serves pods that keep C(nvidia.com/gpu) through DRA - C(available) (true, false,
    or null when it could not tell), C(device_class) (the class that carries C(extendedResourceName)) and C(reason).
  returned: always
  type: dict
  sample: {available: false, device_class: null, reason: "this API server (v1.35.4) does not keep ..."}
report:
  description:
    - Lines a person reads - each container's GPUs before, the claim after, each new pod's node and devices.
    - With O(label_selector), each workload's message and lines, in order.
  returned: when changed to migrated, and with label_selector
  type: list
  elements: str
  sample:
    - "before: container main asks nvidia.com/gpu: 1"
    - "after: ResourceClaimTemplate llm-gpu, request main: 1 x gpu.nvidia.com"
    - "pod llm-6d5f7-x2x9k on gpu-2: gpu.nvidia.com/gpu-2/gpu-0"
template: {description: "The new pod template, to commit where the workload's manifest lives.",
           returned: when changed to migrated, type: dict}
pods:
  description:
    - >-
      The new pods, each C(pod), C(node), C(ready), C(claim), C(allocated), C(devices) and C(consumed) (each
      allocated share's C(consumedCapacity), for example V({memory: 8Gi}); empty for whole cards).
    - With O(method=extended_resource), the workload's pods, each C(name), C(node), C(phase) and C(claim) (the claim
      the scheduler made for its C(nvidia.com/gpu), null while it is not served by DRA).
  returned: when migrated, not in check mode; with method extended_resource
  type: list
  elements: dict
rolled_back: {description: True when the rollout failed and the old template was put back.,
              returned: on failure after the change was applied, type: bool}
rollback: {description: "The rollback's rollout, C(state) and C(message).", returned: when rolled_back, type: dict}
"""

from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_module_run as run


def main():
    module = client.kube_module(run.ARGUMENT_SPEC, checks=run.input_problems,
                                required_one_of=[("name", "label_selector")],
                                mutually_exclusive=[("name", "label_selector")])
    passed, result = run.run_module(client.Kube(client.api_client(module)), module.params, module.check_mode,
                                    module._diff)
    if not passed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
