# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG layouts through the GPU Operator's MIG manager: node labels in, MIG devices out.

The MIG manager applies the layout named by the node label ``nvidia.com/mig.config`` (a
name from its mig-parted config, such as ``all-1g.10gb``) and reports progress in
``nvidia.com/mig.config.state`` (pending, rebooting, success, failed); NVIDIA's DRA driver
then publishes the MIG devices. Which label values we set, and what the node had before,
are kept in annotations so that removing the layout restores exactly that.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch

CONFIG_LABEL = "nvidia.com/mig.config"
STATE_LABEL = "nvidia.com/mig.config.state"
CAPABLE_LABEL = "nvidia.com/mig.capable"
OWNER_ANNOTATION = "dra.gpu/mig-config-set-by"
PREVIOUS_ANNOTATION = "dra.gpu/mig-config-before"
OWNER = "dra.gpu.gpu_sharing"
# What the GPU Operator labels a MIG-capable node with when nobody asked for a layout.
DISABLED = "all-disabled"
NO_PREVIOUS = "(none)"


class MigLayoutError(watch.ConditionFailed):
    """The MIG manager failed, or something else changed the layout label meanwhile."""


def layout_profile(layout):
    """``all-1g.10gb`` -> ``1g.10gb``; None for layouts without a single profile."""
    if layout.startswith("all-") and layout not in ("all-disabled", "all-enabled", "all-balanced"):
        return layout[4:]
    return None


def node_problems(nodes, wanted):
    """Nodes (dicts with name, labels) that cannot take a MIG layout, in words."""
    by_name = {n["name"]: n for n in nodes}
    problems = []
    for name in wanted:
        node = by_name.get(name)
        if node is None:
            problems.append("%s is not a node of the cluster (nodes: %s)" % (name, ", ".join(sorted(by_name)) or "none"))
        elif (node.get("labels") or {}).get(CAPABLE_LABEL) != "true":
            problems.append("node %s is not MIG-capable (label %s is not true): MIG needs A100, A30, H100, H200 or "
                            "newer data-center GPUs; leave it out of gpu_sharing_mig_nodes" % (name, CAPABLE_LABEL))
    return problems


def patches(nodes, wanted, layout):
    """Node patches (only where something differs) that put ``layout`` on the ``wanted``
    nodes and give every other node we labelled back what it had."""
    result = []
    for node in sorted(nodes, key=lambda n: n["name"]):
        labels, notes = node.get("labels") or {}, node.get("annotations") or {}
        ours = notes.get(OWNER_ANNOTATION) == OWNER
        metadata = {}
        if node["name"] in wanted:
            if labels.get(CONFIG_LABEL) != layout:
                # Clearing the state makes a stale "success" of the old layout impossible to mistake.
                metadata["labels"] = {CONFIG_LABEL: layout, STATE_LABEL: None}
            if not ours:
                metadata["annotations"] = {OWNER_ANNOTATION: OWNER,
                                           PREVIOUS_ANNOTATION: labels.get(CONFIG_LABEL) or NO_PREVIOUS}
        elif ours:
            before = notes.get(PREVIOUS_ANNOTATION)
            restore = None if before in (None, NO_PREVIOUS) else before
            if labels.get(CONFIG_LABEL) != restore:
                metadata["labels"] = {CONFIG_LABEL: restore, STATE_LABEL: None}
            metadata["annotations"] = {OWNER_ANNOTATION: None, PREVIOUS_ANNOTATION: None}
        if metadata:
            result.append({"node": node["name"], "patch": {"metadata": metadata},
                           "layout": (metadata.get("labels") or {}).get(CONFIG_LABEL, labels.get(CONFIG_LABEL))})
    return result


def state_verdict(nodes, expected):
    """While the MIG manager works: None. Then True, or MigLayoutError naming failed nodes.

    ``expected``: {node name: layout it must report}; a node whose layout is unset (restored
    to nothing) is done at once, as no MIG manager acts on it."""
    by_name = {n["metadata"]["name"]: n for n in nodes}
    failed, waiting = [], False
    for name, layout in sorted(expected.items()):
        labels = (by_name.get(name) or {}).get("metadata", {}).get("labels") or {}
        if layout is None:
            continue
        if labels.get(CONFIG_LABEL) != layout:
            now = labels.get(CONFIG_LABEL)
            failed.append("%s: its %s label is now %r (something else changed it)" % (name, CONFIG_LABEL, now))
        elif labels.get(STATE_LABEL) == "failed":
            failed.append("%s: the MIG manager reports failed for %s" % (name, layout))
        elif labels.get(STATE_LABEL) != "success":
            waiting = True
    if failed:
        raise MigLayoutError("; ".join(failed))
    return None if waiting else True


def mig_device_counts(devices, node_names, profile):
    """{node: published MIG devices of ``profile``} for the nodes in ``node_names`` that have any
    (inventory devices); a node still missing is absent."""
    counts = {}
    for device in devices:
        attrs = device["attributes"]
        if device["node"] in node_names and attrs.get("type") == "mig" and attrs.get("profile") == profile:
            counts[device["node"]] = counts.get(device["node"], 0) + 1
    return counts
