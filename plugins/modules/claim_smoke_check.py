#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: claim_smoke_check
short_description: Prove that a DRA claim really gives a pod the allocated GPU(s)
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Formerly C(claim_smoke_test); that name still works, deprecated, until 2.0.0.
  - In O(namespace) (created if missing, labelled with Pod Security O(pod_security)), creates a
    ResourceClaimTemplate requesting O(count) devices of O(device_class) (or a prioritized list,
    O(first_available)), or one shared ResourceClaim when O(pods) is more than one, and the probe pod(s).
  - Waits by watching, bounded by O(timeout), for allocation, binding and the probe's completion.
  - Verifies at the level of O(verify). V(allocation) checks that every allocated device exists in a
    ResourceSlice of O(driver) on the pod's node and that the claim is reserved for the pod. V(container)
    also checks the probe's output, read from the container's termination message (no pods/log permission
    needed), names exactly the allocated devices and nothing else.
  - >-
    With O(share_memory), a share of a card instead (Kubernetes 1.36+ with consumable capacity, NVIDIA's DRA driver
    0.5.0 with ConsumableShares): two pods, each with a ResourceClaim of its own asking for
    C(capacity.requests.memory) of one device of O(device_class), must land on one device and both see its UUID. The
    first share goes where the scheduler puts it; the second is pinned to that device (a selector on its C(uuid)),
    so the test proves the device takes a second share whatever the scheduler would prefer. Each share is held by a
    pod that runs until the cleanup (C(sleep) in O(image), bounded by C(activeDeadlineSeconds)) while the probe
    runs beside it on the same claim. The consumed capacity and share of each claim, and what is left of every
    device the class selects (from every claim's allocation), are reported; then a claim 1Mi larger than the largest
    free share must be Unschedulable, and the test says why in words and with the scheduler's message. Refused at
    once where the API server drops the request (a server-side dry run; Kubernetes 1.35 without
    DRAConsumableCapacity).
  - On failure it says why (no device can satisfy the claim, with the scheduler's message; image pull error;
    probe failed, with its output; UUID mismatch; extra GPUs visible) and removes everything it created,
    on success, failure and timeout, unless O(keep=true).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
options:
  namespace: {description: Namespace for the test objects; created (and removed afterwards) when missing.,
              type: str, default: dra-gpu-smoke-test}
  device_class: {description: DeviceClass to request., type: str, default: gpu.nvidia.com}
  count: {description: Devices to request in one claim., type: int, default: 1}
  selectors: {description: Extra CEL selectors for the request., type: list, elements: str, default: []}
  first_available:
    description:
      - A prioritized list of alternatives instead of O(count) and O(selectors); the scheduler takes the
        first that can be satisfied. Each entry has C(name), C(device_class) (default O(device_class)),
        C(count) and C(selectors).
    type: list
    elements: dict
  pods:
    description:
      - Number of probe pods. More than one share a single ResourceClaim.
      - With more than one, a holder pod (the probe's image and command, restarted until the cleanup) is made first
        and scheduled before any probe, so that the claim stays reserved while the probes run; otherwise a claim
        whose first probe is done before the next is scheduled is deallocated and may be allocated anew on another
        node.
    type: int
    default: 1
  image: {description: Probe image., type: str, default: nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04}
  command:
    description: Probe command; it must print its findings to C(/dev/termination-log) (or stdout, the fallback).
    type: list
    elements: str
    default: [sh, -c, "{ nvidia-smi -L; env | grep '^CUDA_MPS_' || true; } | tee /dev/termination-log"]
  probe:
    description:
      - How to read the probe's output. V(nvidia) compares C(nvidia-smi -L) UUIDs with the devices' C(uuid)
        attributes; V(example) compares the dra-example-driver's C(GPU_DEVICE_*) variables with device names;
        V(custom) uses O(probe_pattern) and O(probe_attribute).
    type: str
    choices: [nvidia, example, custom]
    default: nvidia
  probe_pattern:
    description: With O(probe=custom), a regular expression whose first group captures one device identifier.
    type: str
  probe_attribute:
    description: With O(probe=custom), the device attribute the captured identifiers must equal (device name if unset).
    type: str
  verify:
    description: V(container) checks the probe's output; V(allocation) only the allocation.
    type: str
    choices: [allocation, container]
    default: container
  driver: {description: DRA driver expected to provide the devices., type: str, default: gpu.nvidia.com}
  expect:
    description: Checks on the allocated devices, C(product_contains) (a substring of C(productName)), C(min_memory)
      (a quantity such as V(16Gi)) and C(attributes) (exact values).
    type: dict
  node_selector:
    description: Node selector for the probe pods. One that matches no node fails at once, before anything is created.
    type: dict
  tolerations: {description: Tolerations for the probe pods., type: list, elements: dict}
  pod_security:
    description:
      - Pod Security level for a namespace the module creates; the probe's securityContext follows it.
      - V(none) leaves the namespace unlabelled and the probe unrestricted.
    type: str
    choices: [restricted, baseline, privileged, none]
    default: restricted
  pod_annotations: {description: Annotations for the probe pods., type: dict}
  timeout: {description: "Seconds to wait for allocation, binding and the probe's completion.", type: int, default: 300}
  keep: {description: Leave the test objects in place (for debugging)., type: bool, default: false}
  share_memory:
    description:
      - A quantity such as V(8Gi) - test a share of a card of this size instead of whole devices (see above).
      - It runs its own two pods with a claim each; O(pods), O(count) and O(first_available) stay unset. O(selectors)
        apply to every claim it makes. The account needs to list ResourceClaims in every namespace (what is left of
        each device).
    type: str
attributes:
  check_mode: {support: full, description: Creates nothing; reports what it would run.}
  diff_mode: {support: none, description: The test leaves nothing behind to compare.}
notes:
  - A passing test leaves the cluster as it found it, so it reports no change unless O(keep=true).
requirements:
  - kubernetes >= 34.1.0
"""

EXAMPLES = r"""
- name: One GPU, checked from inside the container
  dra.gpu.claim_smoke_check:
    expect:
      min_memory: 16Gi

# Drivers publish NVML's byte total, a little under the marketing figure (an H100 80GB has
# 81559Mi, an A10 or L4 about 22.5Gi): compare with a floor below it.
- name: One 80 GB-class GPU, else two 24 GB-class GPUs
  dra.gpu.claim_smoke_check:
    first_available:
      - name: big
        selectors: ["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('79Gi')) >= 0"]
      - name: two-small
        count: 2

- name: Two pods with an 8 GiB share each on one GPU, and a claim larger than any GPU has left refused
  dra.gpu.claim_smoke_check:
    share_memory: 8Gi

- name: Two pods sharing one GPU, allocation only
  dra.gpu.claim_smoke_check:
    pods: 2
    verify: allocation
"""

RETURN = r"""
node:
  description: The node the probe ran on (a list when shared pods landed on several).
  returned: success
  type: raw
  sample: node-a
devices: {description: The allocated devices with their attributes and capacity., returned: success, type: list,
          elements: dict}
first_available_choice:
  description: The O(first_available) alternative the scheduler chose, or V(null).
  returned: success
  type: str
timings:
  description: Seconds from the start until the pod was bound (C(allocated_after)), the probe completed
    (C(completed_after)) and the verification ended (C(verified_after)).
  returned: success
  type: dict
  sample: {allocated_after: 0.41, completed_after: 0.93, verified_after: 1.02}
probe_outputs: {description: What each probe printed., returned: success, type: list, elements: dict}
shared:
  description:
    - With O(pods) above 1 (one shared claim), C(pods), C(same_devices) (every pod saw the same devices, checked at
      O(verify=container)) and C(seen) (the device identifiers they saw); V(null) for one pod.
  returned: success
  type: dict
  sample: {pods: 3, same_devices: true, seen: [GPU-6f0c0e1a-0c1e-5e4b-9d3c-2f1a0b9e8d7c]}
sharing:
  description:
    - The sharing config NVIDIA's driver applied to the claim (from its allocation - the class's config, overridden by
      the claim's) - C(strategy) (V(TimeSlicing), V(MPS) or V(null)), C(source), C(parameters), and C(enforces), what
      that strategy enforces, in words. With MPS and O(probe=nvidia), each container must show
      C(CUDA_MPS_PIPE_DIRECTORY), the MPS control daemon NVIDIA's plugin connects it to.
  returned: success
  type: dict
share:
  description:
    - With O(share_memory) - C(memory); C(device) (C(node), C(pool), C(name), C(uuid)) both shares landed on;
      C(claims), each claim's C(claim), C(device), C(share_id) and C(consumed) (its C(consumedCapacity)); C(free), what
      is left of each device the class selects, largest first (C(node), C(pool), C(device), C(memory), C(free));
      C(too_big), the claim larger than every free share - C(memory), C(pod), C(unschedulable), C(scheduler_message)
      and C(why), in words.
  returned: success with share_memory
  type: dict
  sample:
    memory: 8Gi
    device: {node: node-b, pool: node-b, name: gpu-0, uuid: GPU-0b3c6a1e-2f0d-5c8e-9a7b-1d2e3f4a5b6c}
    claims:
      - {claim: smoke-1a2b3c4d-share-0, device: gpu-0, share_id: 5f0e..., consumed: {memory: 8Gi}}
    too_big:
      memory: 23035Mi
      unschedulable: true
      why: "no GPU has 23035Mi free: the largest free share is 23034Mi (gpu-1 on node-b); the scheduler said: ..."
report:
  description: With O(share_memory), lines a person reads - where both shares landed, each claim's consumption, what is
    left per GPU, and why the claim too large was Unschedulable.
  returned: success with share_memory
  type: list
  elements: str
failure:
  description:
    - On failure, its kind (unschedulable, image_pull, prepare_failed, probe_failed, mismatch, extra_devices,
      not_shared, mps_not_connected, timeout, capacity_dropped, too_big_scheduled, ...).
    - C(prepare_failed) means the driver refused the claim. Errors the kubelet retries (it could not
      read the claim yet, the driver is not registered yet) do not fail the run; a timeout names them.
  returned: failure
  type: str
left_behind: {description: Objects the cleanup could not remove in time., returned: when cleanup failed, type: list,
              elements: str}
"""

from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_run


def main():
    module = client.kube_module(smoke.ARGUMENT_SPEC, checks=smoke.input_problems,
                                required_if=[("probe", "custom", ("probe_pattern",))],
                                mutually_exclusive=[("first_available", "selectors")])
    if module.check_mode:
        module.exit_json(changed=False, msg="check mode: would run a smoke test in namespace %s"
                         % module.params["namespace"])
    passed, result = smoke_run.run_and_clean_up(client.Kube(client.api_client(module)), module.params)
    if not passed:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
