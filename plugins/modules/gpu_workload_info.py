#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_workload_info
short_description: Every workload that asks for GPUs, through the device plugin (nvidia.com/gpu) or DRA claims
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Read-only. Lists Deployments, StatefulSets, DaemonSets, CronJobs, Jobs and ReplicaSets without an owner, and
    Pods without an owner, whose pod template asks for GPUs, the old way (C(nvidia.com/gpu) in a container's
    limits or requests) or through DRA (C(resourceClaims)), the start of a migration one workload at a time.
  - For each, the GPUs one pod holds (counted as the scheduler does - the larger of the containers' sum and the
    largest init container, sidecars added), the replicas, its claims, and each of its pods with the node it runs
    on and how that node is served - V(device-plugin) (the node offers C(nvidia.com/gpu)), V(dra) (the driver
    publishes the node's devices in ResourceSlices), V(both) or V(none).
  - A node served V(both) ways is reported in C(summary.nodes_served_by_both), because two GPU managers on one
    node hand out the same GPUs twice.
  - For pods on claims, each claim's state - whether it exists, is allocated and to which devices.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  namespaces:
    description:
      - Only workloads in these namespaces. Unset or empty, every namespace.
    type: list
    elements: str
  driver:
    description:
      - The DRA driver whose ResourceSlices mean a node is served by DRA.
    type: str
    default: gpu.nvidia.com
"""

EXAMPLES = r"""
- name: Find what still asks for nvidia.com/gpu
  dra.gpu.gpu_workload_info:
  register: gpu_workloads

- name: Show the workloads left to migrate
  ansible.builtin.debug:
    msg: "{{ gpu_workloads.workloads | selectattr('asks', 'equalto', 'device-plugin')
             | map(attribute='name') | list }}"

- name: Only the inference namespace
  dra.gpu.gpu_workload_info:
    namespaces: [inference]
"""

RETURN = r"""
workloads:
  description: Each workload that asks for GPUs, sorted by kind, namespace and name.
  returned: success
  type: list
  elements: dict
  contains:
    namespace:
      description: Its namespace.
      type: str
    kind:
      description: V(Deployment), V(StatefulSet), V(DaemonSet), V(CronJob), V(Job), V(ReplicaSet) or V(Pod).
      type: str
    name:
      description: Its name.
      type: str
    asks:
      description: V(device-plugin) (nvidia.com/gpu), V(dra) (resourceClaims) or V(both).
      type: str
    replicas:
      description: Replicas (Deployment, StatefulSet, ReplicaSet), parallelism (Job, CronJob), pods the DaemonSet
        wants, or 1 for a Pod.
      type: int
    gpus_per_pod:
      description: C(nvidia.com/gpu) one pod holds; 0 for a workload only on claims.
      type: int
    claims:
      description: The pod template's claims, each C(name) with C(claim) (a shared ResourceClaim) or C(template).
      type: list
      elements: dict
    pods:
      description: Its pods, each C(name), C(phase), C(node), C(node_served_by) and C(claims) (each C(name), C(claim),
        C(exists), C(allocated), C(devices) as C(driver/pool/device)).
      type: list
      elements: dict
  sample:
    - namespace: inference
      kind: Deployment
      name: llm
      asks: device-plugin
      replicas: 2
      gpus_per_pod: 1
      claims: []
      pods: [{name: llm-7d9c-abcde, phase: Running, node: gpu-1, node_served_by: device-plugin, claims: []}]
nodes:
  description: How each node is served, V(device-plugin), V(dra), V(both) or V(none), by name.
  returned: success
  type: dict
  sample: {gpu-1: device-plugin, gpu-2: dra, cpu-1: none}
summary:
  description: C(device_plugin_workloads), C(dra_workloads), C(mixed_workloads), C(device_plugin_gpus_held) (by pods
    placed on a node) and C(nodes_served_by_both).
  returned: success
  type: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.dns_subdomain, "driver", params["driver"], "DRA driver")
    problems.check(inputs.strings, "namespaces", params["namespaces"])
    return problems.found


def main():
    module = client.kube_module(
        dict(namespaces=dict(type="list", elements="str"),
             driver=dict(type="str", default=gpu_workloads.DEFAULT_DRIVER)),
        checks=_input_problems)
    params = module.params

    def read(kube):
        listed = kube.workloads()
        nodes, _version = kube.list_all(kube.core.list_node)
        slice_list, _version = kube.slices(params["driver"])
        return gpu_workloads.report(listed, nodes, slice_list, kube.claims(), params["driver"], params["namespaces"])

    client.exit_with_reading(module, read)


if __name__ == "__main__":
    main()
