#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: upgrade_plan
short_description: Plan a kubeadm cluster's upgrade to a DRA-ready Kubernetes version
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Reads the live cluster (server version; each node's kubelet and container runtime; kube-proxy's mode and
    the kubeadm configuration's API version from kube-system) and returns the path to O(target).
  - The path goes one minor at a time, each hop at its newest patch in O(available_versions); nodes are ordered
    control planes first.
  - Returns C(blockers) (each with a C(fix)) and C(cautions) (warnings, under a name Ansible does not reserve) for
    kubelets more than three minors behind or newer than the API server, cgroup v1 nodes for a target of 1.35 or
    later, containerd 1.x for 1.36 or later, kubeadm v1beta3 configuration (in C(kube-system/kubeadm-config) or in
    O(kubeadm_config_files)) on a path through 1.37, a target past the newest minor tested (a pre-release such as
    1.38), a cluster that kubeadm does not run (k3s, RKE2, a managed
    control plane on EKS, GKE or AKS, or no C(kube-system/kubeadm-config)), a downgrade, a target below the DRA
    minimum, a hop version the package repository does not offer, and an inventory host that is not a node; ipvs
    kube-proxy is a warning.
  - The non-kubeadm refusal names the tool that upgrades that distribution.
  - Read-only.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  target:
    description:
      - V(tested) (the newest minor this collection has tested, C(NEWEST_TESTED) in plugins/module_utils/upgrade/versions.py),
        V(latest) of O(available_versions), a minor such as V(1.36), or an exact version such as V(1.36.3).
      - A pre-release (V(1.38.0-beta.0)) is refused as input; a minor newer than the tested one (V(1.38)) is a blocker
        (C(untested_target)). O(available_versions) never holds pre-releases, so V(latest) never picks one.
    type: str
    required: true
  available_versions:
    description: Versions the package repository offers (the cluster_upgrade role reads them on the first control plane).
    type: list
    elements: str
    default: []
  dra_min_version:
    description: The lowest version accepted as a target.
    type: str
    default: "1.35"
  node_facts:
    description:
      - Facts per node name that the API does not show, such as C(cgroup_fs) (the output of
        C(stat -fc %T /sys/fs/cgroup/), V(cgroup2fs) for cgroup v2).
    type: dict
    default: {}
  require_offered:
    description:
      - Block every hop whose version is not in O(available_versions), also when that list is empty (the
        cluster_upgrade role read the package repository and found nothing for that minor).
      - Without it, hops are checked against O(available_versions) only when it lists versions.
    type: bool
    default: false
  inventory_nodes:
    description:
      - Inventory hosts to upgrade and their node names; each must be a node of the cluster (blocker C(unknown_node)).
    type: dict
    default: {}
  kubeadm_config_files:
    description:
      - "The kubeadm configuration files of each inventory host, as C({host: {path: [api versions]}}) (from
        dra.gpu.kubeadm_config). On a path through 1.37 each v1beta3 one is a blocker (C(kubeadm_v1beta3)) naming when
        and how to migrate it, unless O(migrate_kubeadm_config)."
    type: dict
    default: {}
  migrate_kubeadm_config:
    description:
      - The caller migrates v1beta3 files before the first hop (dra.gpu.kubeadm_config); they are returned in
        RV(kubeadm_config_migrations) instead of blocking.
    type: bool
    default: false
  passes_left:
    description:
      - How many passes of the cluster_upgrade role the run has left, this one included (one minor each). A path
        that needs more is a blocker (C(too_many_passes)) naming the minor to stop at first. Unset, no limit.
    type: int
"""

EXAMPLES = r"""
- name: Plan the way to the newest 1.35
  dra.gpu.upgrade_plan:
    target: "1.35"
    available_versions: [1.33.7, 1.34.4, 1.35.4]
    node_facts:
      gpu-node-1: {cgroup_fs: cgroup2fs}
  register: plan

- name: Stop on blockers
  ansible.builtin.assert:
    that: plan.blockers | length == 0
    fail_msg: "{{ plan.blockers | map(attribute='message') | join('; ') }}"
"""

RETURN = r"""
current:
  description: The API server's version.
  returned: always
  type: str
  sample: 1.34.4
target:
  description: The resolved target.
  returned: always
  type: str
  sample: 1.35.4
hops:
  description: The versions to go through, one minor each.
  returned: always
  type: list
  elements: dict
  sample: [{version: 1.35.4, minor: "1.35"}]
node_order:
  description: Nodes in upgrade order, control planes first, with their role and kubelet version.
  returned: always
  type: list
  elements: dict
blockers:
  description: What must be fixed before upgrading, each with C(code), C(message) and C(fix).
  returned: always
  type: list
  elements: dict
cautions:
  description: What deserves attention, in the same shape as RV(blockers).
  returned: always
  type: list
  elements: dict
passes_needed:
  description: How many passes the whole path takes, one per hop plus one first when kubelets lag behind.
  returned: always
  type: int
  sample: 1
next_pass:
  description:
    - What one pass of the cluster_upgrade role does next, or null when nothing is left. Lagging kubelets come
      first (C(control_plane_upgrade) false, the API server's version), so a failed run resumes where it stopped;
      otherwise the first hop for every node. C(minor) is the version's minor, which names its package repository.
  returned: always
  type: dict
  sample: {version: 1.35.4, minor: "1.35", control_plane_upgrade: true, nodes: [cp-1, gpu-1]}
cluster:
  description:
    - Which distribution runs the cluster (C(distribution) V(kubeadm), V(k3s), V(rke2), V(eks), V(gke), V(aks) or
      V(unknown)), with C(title), C(managed), C(cloud) (from the nodes' provider IDs), C(evidence) and C(also_seen).
  returned: always
  type: dict
  sample: {distribution: k3s, title: k3s, managed: false, cloud: null, evidence: ["node w1: kubelet v1.35.4+k3s1"]}
cluster_refusal:
  description:
    - The blocker among RV(blockers) that says kubeadm does not run this cluster (C(code) V(not_kubeadm) or
      V(managed_control_plane)), naming the tool that upgrades it; null on kubeadm, and on any cluster already at
      the target (there is nothing to upgrade, so playbooks/site.yml goes on).
  returned: always
  type: dict
up_to_date:
  description: True when the API server and every kubelet are already at the target.
  returned: always
  type: bool
kubeadm_config_migrations:
  description:
    - The v1beta3 files to migrate before the first hop (with O(migrate_kubeadm_config) on a path through 1.37),
      each C({host, path}); empty when there are blockers.
  returned: always
  type: list
  elements: dict
  sample: [{host: cp-1, path: /etc/kubernetes/kubeadm-config.yaml}]
kubeadm_v1beta3_removal_ahead:
  description: Whether the path goes through 1.37, whose kubeadm reads no v1beta3 configuration (the hosts' files
    must then be checked, and migrated before that hop).
  returned: always
  type: bool
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity, versions
from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes as kube_nodes


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.version, "target", params["target"], latest=True)
    problems.check(inputs.versions_list, "available_versions", params["available_versions"])
    problems.check(inputs.version, "dra_min_version", params["dra_min_version"])
    return problems.found


def main():
    module = client.kube_module(
        dict(target=dict(type="str", required=True),
             available_versions=dict(type="list", elements="str", default=[]),
             dra_min_version=dict(type="str", default="1.35"),
             node_facts=dict(type="dict", default={}),
             require_offered=dict(type="bool", default=False),
             inventory_nodes=dict(type="dict", default={}),
             passes_left=dict(type="int", no_log=False),
             kubeadm_config_files=dict(type="dict", default={}),
             migrate_kubeadm_config=dict(type="bool", default=False)),
        checks=_input_problems)
    params = module.params

    def read(kube):
        proxy = kube.kube_system_config("kube-proxy", "config.conf")
        server, nodes = kube.server_version(), kube_nodes.list_summaries(kube)
        identity, kubeadm = cluster_identity.read(kube, server, nodes)
        api = str(kubeadm.get("apiVersion") or "").rsplit("/", 1)[-1] or None
        result = versions.plan(server, nodes, params["target"], params["available_versions"],
                               params["dra_min_version"], params["node_facts"], proxy.get("mode"), api,
                               params["require_offered"], params["inventory_nodes"], identity,
                               params["passes_left"], params["kubeadm_config_files"],
                               params["migrate_kubeadm_config"])
        result["cluster"] = identity
        return result

    client.exit_with_reading(module, read, versions.VersionError)


if __name__ == "__main__":
    main()
