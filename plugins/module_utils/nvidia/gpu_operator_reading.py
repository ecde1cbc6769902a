# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpu_operator_plan reads from the cluster before it plans.

The plan itself (gpu_operator_values) is pure; these are its inputs from the live cluster: the
nodes, the distribution they show, the DRA driver release running now, the pods still holding
device-plugin GPUs on nodes going to DRA, and the claims holding the driver's devices. ``kube``
is a client.Kube; a failed read raises client.ApiException, which the module reports as "could
not read the cluster".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_handover, nvidia
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes as kube_nodes


def cluster_nodes(kube, gpu_node_selector):
    """The nodes as the plan needs them: ``gpu_nodes`` (sorted names matching the selector),
    ``gpu_node_labels`` ({name: labels} of those, for the driver image's OS suffix), ``nodes``
    (every node's name, labels and annotations, for the label patches) and ``summaries`` (every
    node, for cluster_identity)."""
    gpu_items, _rv = kube.list_all(kube.core.list_node, label_selector=gpu_node_selector)
    all_items, _rv = kube.list_all(kube.core.list_node)
    return {"gpu_nodes": sorted(n["metadata"]["name"] for n in gpu_items),
            "gpu_node_labels": {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in gpu_items},
            "nodes": kube_nodes.labelled(all_items),
            "summaries": [kube_nodes.summary(n) for n in all_items]}


def distribution(kube, server_version, summaries, params):
    """(identity, operator values): the distribution the cluster shows, and the user's values option over
    its toolkit settings, because k3s and RKE2 run containerd elsewhere than the operator's
    defaults look. Raises catalog.PlanError on a version or mode the plan cannot lay out."""
    identity, _kubeadm = cluster_identity.read(kube, server_version, summaries)
    layout = catalog.resolve_layout(params["version"], params["dra_enabled"], params["dra_mode"])
    return identity, cluster_identity.operator_values(identity, layout, params["toolkit_enabled"], params["values"])


def installed_dra_driver(kube, namespace, release):
    """The live DRA release's kubelet plugin DaemonSet ({name, version}), or None: its name tells
    whether the chart runs under its old name, its version label which chart version it runs
    (gpu_operator_catalog.dra_chart_upgrade decides what moving it needs)."""
    for chart in (nvidia.OLD_DRA_CHART, nvidia.DRA_CHART):
        name = nvidia.kubelet_plugin_daemonset(chart)
        try:
            daemonset = kube.apps.read_namespaced_daemon_set(name, namespace).to_dict()
        except client.ApiException as exc:
            if exc.status == 404:
                continue
            raise
        meta = daemonset["metadata"]
        # Another release's DaemonSet of the same name is not ours to upgrade.
        if (meta.get("annotations") or {}).get("meta.helm.sh/release-name") == release:
            return {"name": name, "version": (meta.get("labels") or {}).get("app.kubernetes.io/version")}
    return None


def device_plugin_holders(kube, dra_nodes):
    """Pods holding nvidia.com/gpu from the device plugin on the nodes going to DRA: DRA would
    hand out the same GPUs again. Listed node by node, so a large cluster's pods are not all read."""
    holders = []
    for node in dra_nodes:
        pods, _rv = kube.list_all(kube.core.list_pod_for_all_namespaces, field_selector="spec.nodeName=" + node)
        holders += gpu_handover.device_plugin_holders(pods, [node])
    return holders


def driver_claims(kube):
    """(claims, refusal): the ResourceClaims holding devices of NVIDIA's DRA driver, and why the
    driver must not be removed under them (None when none does): without the driver the kubelet
    cannot release them, and their pods stay Terminating."""
    held = gpu_handover.allocated_claims(kube.claims(), nvidia.DRA_DRIVER)
    return held, gpu_handover.removal_refusal(held, nvidia.DRA_DRIVER)


def claims_on_returning_nodes(kube, nodes):
    """(claims, refusal): the ResourceClaims holding the DRA driver's devices on ``nodes``, the
    nodes this run takes back to the device plugin, and why that must wait (None when none does)."""
    if not nodes:
        return [], None
    slices, _rv = kube.slices(nvidia.DRA_DRIVER)
    held = gpu_handover.claims_on_nodes(kube.claims(), slices, nodes, nvidia.DRA_DRIVER)
    return held, gpu_handover.return_refusal(held, nodes)
