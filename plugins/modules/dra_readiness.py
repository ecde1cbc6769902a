#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: dra_readiness
short_description: Check whether a cluster is ready for Dynamic Resource Allocation of NVIDIA GPUs
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads the API server's version and API groups, the nodes and the DaemonSets, and returns one check per
    requirement with V(pass), V(warn) or V(fail), a message and what to do.
  - "Checks: the API server is at O(min_version) or later (else the upgrade path, one minor at a time);
    C(resource.k8s.io/v1) is served; GPU nodes exist (Node Feature Discovery's C(pci-10de) or GPU Feature
    Discovery's C(nvidia.com/gpu.present) label); their kubelets are at O(min_version) or later; their container
    runtime injects CDI devices (containerd 2.0+, containerd 1.7 with CDI enabled, CRI-O 1.27+); cgroup v2 on GPU
    nodes (from O(node_facts)); whether NVIDIA's device plugin still hands out GPUs."
  - "Also tells which distribution runs the cluster (check C(distribution)): kubeadm (C(kube-system/kubeadm-config)),
    k3s or RKE2 (their version suffixes, node annotations, instance-type label and provider IDs), or a managed control
    plane on EKS, GKE or AKS (version suffixes, node-pool labels). Anything but kubeadm is a warning saying which parts
    of this collection do not apply there and what to use instead."
  - "RV(dra_features): which DRA features the running API server serves and which the target version turns on by
    default - prioritized list (firstAvailable), admin access, partitionable devices (sharedCounters), consumable
    capacity (memory shares), device taints in slices, DeviceTaintRules in C(resource.k8s.io/v1), extended resource
    (a DeviceClass's extendedResourceName) and device status (a claim's status.devices). The running server is
    probed with server-side dry runs (nothing is written; a gate that is off makes the server drop the field), so a
    gate turned on or off by hand shows; device status, which a dry run cannot write, and the target come from the
    gate defaults per version (plugins/module_utils/dra/dra_features.py). Check C(dra_features) sums it up (never a
    blocker)."
  - "Check C(device_taints) (a caution, never a blocker): whether the cluster honours device taints - taints in
    ResourceSlices (NVIDIA's health check publishes them; DRADeviceTaints, on from Kubernetes 1.36) and
    C(resource.k8s.io/v1) DeviceTaintRules (from 1.37; dra.gpu.gpu_maintenance uses them), from the same dry runs.
    Left out where this identity may not create those objects."
  - Read-only. Never fails on a failing check; the caller decides (the preflight role stops on blockers).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  min_version:
    description: The lowest Kubernetes minor accepted for DRA.
    type: str
    default: "1.35"
  node_facts:
    description:
      - Facts per node name that only the host shows, such as C(cgroup_fs) (the output of
        C(stat -fc %T /sys/fs/cgroup/), V(cgroup2fs) for cgroup v2). Nodes without facts get a warning.
    type: dict
    default: {}
  available_versions:
    description: Versions the package repository offers, so the upgrade path names each hop's newest patch.
    type: list
    elements: str
    default: []
  target_version:
    description:
      - The version whose default DRA features RV(dra_features) reports beside the running server's - V(tested) (the
        newest minor this collection has tested, dra.gpu.cluster_upgrade's default target), V(latest) of
        O(available_versions), a minor or an exact version.
    type: str
    default: tested
"""

EXAMPLES = r"""
- name: Check the cluster
  dra.gpu.dra_readiness:
    node_facts:
      gpu-node-1: {cgroup_fs: cgroup2fs}
  register: readiness

- name: Stop on blockers
  ansible.builtin.assert:
    that: readiness.ready
    fail_msg: "{{ readiness.blockers | map(attribute='fix') | join('; ') }}"
"""

RETURN = r"""
ready:
  description: True when no check failed.
  returned: always
  type: bool
server_version:
  description: The API server's version.
  returned: always
  type: str
  sample: 1.35.4
checks:
  description: Every check with C(name), C(status) (V(pass), V(warn), V(fail)), C(message), and C(fix) and C(nodes) where they apply.
  returned: always
  type: list
  elements: dict
  sample: [{name: resource_api, status: pass, message: resource.k8s.io/v1 is served}]
blockers:
  description: The failing checks.
  returned: always
  type: list
  elements: dict
cautions:
  description: The checks that deserve attention.
  returned: always
  type: list
  elements: dict
gpu_nodes:
  description: Names of the nodes recognised as GPU nodes.
  returned: always
  type: list
  elements: str
cluster:
  description:
    - Which distribution runs the cluster (C(distribution) V(kubeadm), V(k3s), V(rke2), V(eks), V(gke), V(aks) or
      V(unknown)), with C(title), C(managed), C(cloud) (from the nodes' provider IDs), C(evidence) and C(also_seen).
  returned: always
  type: dict
  sample: {distribution: kubeadm, title: kubeadm, managed: false, cloud: null, evidence: [kube-system/kubeadm-config exists]}
dra_features:
  description:
    - C(server_version), C(target_version), C(lines) (one sentence per feature) and C(features), one per DRA feature -
      C(name), C(title), C(gate), C(on) (the running server, probed; null where unknown), C(how) (the dry run and its
      answer), C(probed), C(default) and C(stage) (the running version's defaults), C(flipped) (a gate set against
      them), C(target_on) and C(target_stage) (the target's defaults; null for a version the table does not know).
    - Empty C(features) where C(resource.k8s.io/v1) is not served.
  returned: always
  type: dict
  sample: {server_version: 1.35.4, target_version: "1.37", lines: [], features: [{name: consumable_capacity,
           gate: DRAConsumableCapacity, "on": false, probed: true, default: false, stage: alpha, flipped: false,
           target_on: true, target_stage: beta}]}
upgrade_path:
  description: When the API server is too old, the hops to O(min_version), one minor each.
  returned: always
  type: list
  elements: dict
  sample: [{version: 1.35.4, minor: "1.35"}]
"""

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_probes
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity, readiness
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions
from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes as kube_nodes


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.version, "min_version", params["min_version"])
    problems.check(inputs.version, "target_version", params["target_version"], latest=True)
    problems.check(inputs.versions_list, "available_versions", params["available_versions"])
    return problems.found


def main():
    module = client.kube_module(
        dict(min_version=dict(type="str", default="1.35"),
             node_facts=dict(type="dict", default={}),
             available_versions=dict(type="list", elements="str", default=[]),
             target_version=dict(type="str", default=versions.TESTED)),
        checks=_input_problems)
    params = module.params

    def read(kube):
        sets, _version = kube.list_all(kube.apps.list_daemon_set_for_all_namespaces)
        daemonsets = [{"namespace": d["metadata"]["namespace"], "name": d["metadata"]["name"]} for d in sets]
        server, nodes = kube.server_version(), kube_nodes.list_summaries(kube)
        identity, _kubeadm = cluster_identity.read(kube, server, nodes)
        serves_v1 = kube.serves_resource_v1()
        # One server-side dry run per feature (nothing is written): what the running server serves.
        probed = dra_probes.probe(kube) if serves_v1 else None
        return readiness.assess(server, serves_v1, nodes, daemonsets, params["min_version"],
                                params["node_facts"], params["available_versions"], identity, probed,
                                params["target_version"])

    client.exit_with_reading(module, read, versions.VersionError)


if __name__ == "__main__":
    main()
