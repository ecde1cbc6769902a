# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node objects -> the few facts upgrades and readiness checks reason about."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia

CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
# Node Feature Discovery's PCI vendor label for NVIDIA, and GPU Feature Discovery's own.
GPU_NODE_LABELS = ("feature.node.kubernetes.io/pci-10de.present", nvidia.GPU_PRESENT_LABEL)
DEVICE_PLUGIN_RESOURCE = nvidia.DEVICE_PLUGIN_RESOURCE


def summary(node):
    """A Node as the API returns it -> name, labels, versions, role and GPU facts."""
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    labels = meta.get("labels") or {}
    info = status.get("nodeInfo") or {}
    conditions = dict((c.get("type"), c.get("status")) for c in status.get("conditions") or [])
    return {
        "name": meta.get("name"),
        "labels": labels,
        "annotations": meta.get("annotations") or {},
        "control_plane": CONTROL_PLANE_LABEL in labels,
        "kubelet": info.get("kubeletVersion"),
        "runtime": info.get("containerRuntimeVersion"),
        "provider_id": spec.get("providerID"),
        "unschedulable": bool(spec.get("unschedulable")),
        "ready": conditions.get("Ready") == "True",
        "gpu": any(labels.get(key) == "true" for key in GPU_NODE_LABELS),
        "device_plugin_gpus": str((status.get("allocatable") or {}).get(DEVICE_PLUGIN_RESOURCE) or "0"),
    }


def labelled(items):
    """Nodes as the API returns them -> [{name, labels, annotations}], what node label patches
    are planned from (the annotations say which labels this collection set)."""
    return [{"name": n["metadata"]["name"], "labels": n["metadata"].get("labels") or {},
             "annotations": n["metadata"].get("annotations") or {}} for n in items]


def list_summaries(kube):
    """Every node of the cluster, summarised (``kube`` is a client.Kube)."""
    items, _version = kube.list_all(kube.core.list_node)
    return [summary(n) for n in items]
