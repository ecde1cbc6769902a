#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_usage_info
short_description: Who holds which GPU, which allocations sit idle, and what is still free per DeviceClass
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads ResourceSlices, ResourceClaims, DeviceClasses, Pods and Nodes and answers, for one DRA driver, who holds
    each device (the claim, the pods it is reserved for with their phase and owner workload, and since when),
    which allocations are idle, and how many devices each DeviceClass could still get, per node.
  - A device is C(in_use) when its claim is reserved for a running pod that is not being deleted, C(idle) when
    it is allocated but no such pod uses it (the pods are Pending, Terminating or finished, or the claim is
    reserved for nobody), C(tainted) when no claim holds it but a taint with effect C(NoSchedule) or C(NoExecute)
    keeps new claims off it, and C(free) otherwise. A shared claim is one device held by several pods.
  - Each device lists its taints, the driver's (NVIDIA's health taints C(gpu.nvidia.com/xid), C(gpu-lost),
    C(unmonitored)) and those of the DeviceTaintRules that select it (Kubernetes 1.37+, with the rule's name), with
    since when; the pages show them beside the device's state. A tainted device is free for no DeviceClass.
  - With memory shares (Kubernetes' consumable capacity, NVIDIA's DRA driver 0.5.0 with ConsumableShares) a device
    that publishes C(allowMultipleAllocations) is held by several claims at once. Per device the report gives the
    memory consumed (the sum of the claims' C(consumedCapacity), or all of it for a claim that took the device
    whole) and what is left, and each claim on it with its C(consumedCapacity) and C(shareID). This is the
    scheduler's accounting; nothing caps a pod's memory on the GPU.
  - Per DeviceClass it also answers what still fits in memory, the largest memory request one more claim can
    get on each device the class selects (on the request policy's grid; a device without
    C(allowMultipleAllocations) only when it is free, whole), summed, and the largest of them.
  - Free devices per DeviceClass are found by evaluating the class's CEL selectors on each free device with the
    collection's local evaluator. A class whose selectors it cannot evaluate is reported as not previewable,
    with the reason; it is never guessed.
  - Needs only get and list on resourceslices, resourceclaims, deviceclasses and devicetaintrules
    (C(resource.k8s.io); without the last, the rules' taints are not shown), pods and nodes. docs/report.md gives a ClusterRole with exactly that.
  - O(render) also returns the report as a self-contained HTML page and as Markdown; C(playbooks/report.yml)
    writes both to files.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  driver:
    description: The DRA driver whose devices are reported.
    type: str
    default: gpu.nvidia.com
  render:
    description:
      - Also return the report as V(html) (RV(html), one page with an inline SVG chart, no external assets)
        and/or V(markdown) (RV(markdown)).
    type: list
    elements: str
    choices: [html, markdown]
    default: []
  cluster_name:
    description: A name for the cluster in the rendered report's title.
    type: str
"""

EXAMPLES = r"""
- name: Who holds which GPU
  dra.gpu.gpu_usage_info:
  register: usage

- name: Say which allocations sit idle
  ansible.builtin.debug:
    msg: "{{ item.namespace }}/{{ item.name }}: {{ item.idle_reason }} (for {{ item.age_seconds }} s)"
  loop: "{{ usage.idle }}"

- name: Write the report as HTML
  dra.gpu.gpu_usage_info:
    render: [html]
    cluster_name: production
  register: usage

- name: Save it
  ansible.builtin.copy:
    content: "{{ usage.html }}"
    dest: /tmp/gpu-usage.html
    mode: "0644"
"""

RETURN = r"""
summary:
  description: Device counts (devices, allocated, in_use, idle, free), claims, idle_claims, pods, and a line saying it.
  returned: always
  type: dict
  sample:
    devices: 16
    allocated: 5
    in_use: 3
    idle: 2
    free: 11
    claims: 4
    idle_claims: 2
    pods: 5
    line: "16 devices on 2 nodes: 3 in use, 2 idle (allocated, no running pod), 11 free"
nodes:
  description:
    - Every node with devices of O(driver), and every node labelled as a GPU node (C(nvidia.com/gpu.present=true)
      or NFD's C(feature.node.kubernetes.io/pci-10de.present=true)) without any (a note says so), by name.
      Each has C(name), C(ready), C(totals) and C(devices).
    - Each device has C(name), C(driver), C(pool), C(type) (gpu, mig or other), C(model), C(memory),
      C(memory_bytes), C(state) (free, in_use or idle), C(claim) (namespace, name, shared), C(pods), C(since),
      C(age_seconds) and C(idle_reason).
    - And C(shareable) (it publishes C(allowMultipleAllocations)), C(memory_consumed) and C(memory_free) (with
      C(_bytes) twins; null without a memory capacity), and C(shares), one per claim holding a share of it, with
      C(namespace), C(name), C(state), C(share_id) and C(consumed) (its C(consumedCapacity)). A device held by
      several claims is C(in_use) when one of them is; C(claim), C(since) and C(age_seconds) are those of the
      oldest, C(pods) those of all.
  returned: always
  type: list
  elements: dict
claims:
  description:
    - Every claim holding devices of O(driver), with C(namespace), C(name), C(shared) (not made from a template for
      one pod), C(state), C(devices) (node/device), C(pods), C(since), C(age_seconds), C(since_source) and
      C(idle_reason).
    - Each pod has C(namespace), C(name), C(phase), C(terminating), C(owner) (kind and name of the workload;
      a ReplicaSet's pods are given to their Deployment), C(node) and C(waiting) (a container's waiting reason).
    - C(since) is the allocation's C(allocationTimestamp) when the API sets it, else when the first of its pods was
      scheduled, else the scheduler's status write, else the claim's creation; C(since_source) says which.
  returned: always
  type: list
  elements: dict
idle:
  description: The claims of RV(claims) whose state is idle, with the reason and the age.
  returned: always
  type: list
  elements: dict
by_namespace:
  description: Per namespace, claims, devices, pods, idle_claims and idle_devices.
  returned: always
  type: list
  elements: dict
by_node_model:
  description: Per node and model, devices, allocated and free.
  returned: always
  type: list
  elements: dict
free_by_class:
  description:
    - Per DeviceClass, C(total) devices of O(driver) it selects, how many are C(free), and C(by_node).
    - C(memory_free) (and C(memory_free_bytes)) the memory one more claim could get, summed over those devices;
      C(largest_claim) (and C(largest_claim_bytes)) the largest request one claim can still get, null when none.
    - C(previewable) false with a C(reason) (and null counts) when its selectors cannot be evaluated locally.
  returned: always
  type: list
  elements: dict
  sample:
    - {class: gpu.nvidia.com, previewable: true, reason: null, total: 16, free: 11, by_node: {node-a: 5, node-b: 6},
       memory_free: 257294Mi, memory_free_bytes: 269792313344, largest_claim: 23034Mi,
       largest_claim_bytes: 24152899584}
notes:
  description: What a reader should know (pools left out, GPU nodes without devices, claims of devices no slice lists).
  returned: always
  type: list
  elements: str
console:
  description: A few lines for a terminal.
  returned: always
  type: list
  elements: str
html:
  description: The report as one self-contained HTML page.
  returned: when O(render) has html
  type: str
markdown:
  description: The report as Markdown.
  returned: when O(render) has markdown
  type: str
generated_at:
  description: When the report was made (UTC).
  returned: always
  type: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.dra import slices
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.report import gpu_usage, usage_report, usage_text


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.dns_subdomain, "driver", params["driver"], "DRA driver")
    return problems.found


def main():
    module = client.kube_module(
        dict(driver=dict(type="str", default=gpu_usage.DEFAULT_DRIVER),
             render=dict(type="list", elements="str", choices=["html", "markdown"], default=[]),
             cluster_name=dict(type="str")),
        checks=_input_problems)
    params = module.params
    try:
        reader = client.RawReader(client.api_client(module))
        result = gpu_usage.usage(reader.slices(params["driver"])[0], reader.claims(), reader.pods(), reader.nodes(),
                                 reader.device_classes(), params["driver"], rules=slices.taint_rules(reader))
    except client.ApiException as exc:
        fix = ""
        if exc.status == 403:
            # The report needs a handful of list rights; say which, not only what was refused.
            fix = ("; the report needs get and list on resourceslices, resourceclaims and deviceclasses "
                   "(resource.k8s.io), pods and nodes: bind the ClusterRole dra-gpu-usage-reader "
                   "(playbooks/files/usage-reader-clusterrole.yml) to this identity")
        module.fail_json(msg="could not read the cluster: %s%s" % (client.api_error_message(exc), fix))
    result["console"] = usage_text.console_lines(result)
    if "html" in params["render"]:
        result["html"] = usage_report.html_page(result, params["cluster_name"])
    if "markdown" in params["render"]:
        result["markdown"] = usage_text.markdown(result, params["cluster_name"])
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
