# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Handing GPUs from one manager to the other without handing one out twice.

Three refusals of the gpu_operator plan, as data over listed Pods and ResourceClaims:
- moving a node to DRA while pods there still hold ``nvidia.com/gpu`` from the device plugin:
  DRA would publish, and allocate, GPUs those pods already use;
- removing the DRA driver while ResourceClaims hold its devices: the kubelet cannot
  unprepare them without the driver, and their pods stay Terminating;
- taking a node back to the device plugin while ResourceClaims hold its devices: the device
  plugin would hand out the same GPUs again, and the claims' pods lose their driver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads

FINISHED = ("Succeeded", "Failed")
NAMED = 10  # holders named in a message; the result lists them all


def device_plugin_holders(pods, nodes):
    """Pods bound to one of ``nodes``, not finished, that hold ``nvidia.com/gpu``."""
    wanted = set(nodes)
    holders = []
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in wanted or (pod.get("status") or {}).get("phase") in FINISHED:
            continue
        gpus = gpu_workloads.gpus_per_pod(pod.get("spec") or {})
        if gpus:
            holders.append({"namespace": pod["metadata"]["namespace"], "name": pod["metadata"]["name"],
                            "node": node, "gpus": gpus})
    return sorted(holders, key=lambda h: (h["node"], h["namespace"], h["name"]))


def move_refusal(holders):
    """The message that stops a node's move to DRA, or None."""
    if not holders:
        return None
    named = ", ".join("%s/%s on %s (%d GPU%s)" % (h["namespace"], h["name"], h["node"], h["gpus"],
                                                  "" if h["gpus"] == 1 else "s") for h in holders[:NAMED])
    more = " and %d more" % (len(holders) - NAMED) if len(holders) > NAMED else ""
    return ("refused before changing anything: %d pod(s) hold nvidia.com/gpu from the device plugin on nodes this "
            "run would move to DRA: %s%s. DRA would hand out the same GPUs again. Nothing was changed. Either move "
            "those workloads first (to claims with playbooks/migrate_workloads.yml once another node is on DRA, or "
            "off these nodes; dra.gpu.gpu_workload_info lists them), or set gpu_operator_evict_device_plugin_pods: "
            "true to have them evicted, their PodDisruptionBudgets honoured; or leave the nodes out of "
            "gpu_operator_dra_nodes. Then run again." % (len(holders), named, more))


def allocated_claims(claims, driver):
    """ResourceClaims with devices of ``driver`` allocated, each with the pods it is reserved for."""
    held = []
    for claim in claims:
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        devices = ["%s/%s" % (r.get("pool"), r.get("device")) for r in results if r.get("driver") == driver]
        if devices:
            pods = sorted(r.get("name") for r in (claim.get("status") or {}).get("reservedFor") or []
                          if r.get("resource") == "pods")
            held.append({"namespace": claim["metadata"]["namespace"], "name": claim["metadata"]["name"],
                         "devices": devices, "pods": pods})
    return sorted(held, key=lambda c: (c["namespace"], c["name"]))


def _named_claims(held):
    """The first NAMED claims as the refusals name them (devices and pods), and how many more."""
    named = "; ".join("%s/%s (%s; pods: %s)" % (c["namespace"], c["name"], ", ".join(c["devices"]),
                                                ", ".join(c["pods"]) or "none") for c in held[:NAMED])
    return named, "; and %d more" % (len(held) - NAMED) if len(held) > NAMED else ""


def removal_refusal(held, driver):
    """The message that stops removing the driver while its devices are allocated, or None."""
    if not held:
        return None
    named, more = _named_claims(held)
    return ("refused before removing anything: %d ResourceClaim(s) hold devices of %s: %s%s. Without the driver "
            "the kubelet cannot release them and their pods stay Terminating. Delete those pods or workloads "
            "first, or set gpu_operator_force_removal: true to remove the driver anyway (no pod is deleted)."
            % (len(held), driver, named, more))


def claims_on_nodes(claims, slices, nodes, driver):
    """The ResourceClaims with devices of ``driver`` allocated on ``nodes``: a result's pool is
    matched to its node through the driver's ResourceSlices (NVIDIA's driver names a pool after
    its node, which the slice's nodeName says for sure)."""
    wanted = set(nodes)
    pools = set(s["spec"]["pool"]["name"] for s in slices
                if s["spec"].get("driver") == driver and s["spec"].get("nodeName") in wanted)
    pools |= wanted
    held = []
    for claim in allocated_claims(claims, driver):
        on_node = [d for d in claim["devices"] if d.split("/", 1)[0] in pools]
        if on_node:
            held.append(dict(claim, devices=on_node))
    return held


def return_refusal(held, nodes):
    """The message that stops taking ``nodes`` back to the device plugin while claims hold their
    devices, or None."""
    if not held:
        return None
    named, more = _named_claims(held)
    return ("refused before changing anything: %d ResourceClaim(s) hold DRA devices on %s, which this run would "
            "take back to the device plugin: %s%s. The device plugin would hand out the same GPUs again. Delete "
            "those claims' pods (or move the workloads to another DRA node), let the claims be deallocated, and "
            "run again." % (len(held), ", ".join(nodes), named, more))


# ----- moving the holders off a node, as opted in (gpu_operator_evict_device_plugin_pods) -----
#
# A node is cordoned before its holders are evicted, so that their replacements (which still ask
# for nvidia.com/gpu) cannot come back to it while it still offers the device plugin's GPUs, and
# stays cordoned until it offers none: only then can no pod get a GPU there from both managers.
# The annotation marks a cordon as ours, so only a cordon this collection made is lifted, also by
# a later run after a failure.

CORDONED_BY = "dra.gpu/cordoned-by"
CORDONED_BY_VALUE = "dra.gpu.gpu_operator"


def cordoned_by_us(node):
    return ((node.get("metadata") or {}).get("annotations") or {}).get(CORDONED_BY) == CORDONED_BY_VALUE


def cordon_patch(node):
    """The patch that cordons ``node`` and marks the cordon as ours, or None when it is cordoned
    already (by someone else, whose cordon stays theirs, or by us on an earlier run)."""
    if (node.get("spec") or {}).get("unschedulable"):
        return None
    return {"metadata": {"annotations": {CORDONED_BY: CORDONED_BY_VALUE}}, "spec": {"unschedulable": True}}


def release_patch(node):
    """The patch that lifts our cordon from ``node``, or None when the cordon is not ours."""
    if not cordoned_by_us(node):
        return None
    return {"metadata": {"annotations": {CORDONED_BY: None}}, "spec": {"unschedulable": None}}


def selector_matches(selector, labels):
    """A LabelSelector (matchLabels, matchExpressions) against a pod's labels; an empty selector
    matches every pod, as a PodDisruptionBudget's does."""
    selector = selector or {}
    labels = labels or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def eviction_refusal(left, budgets, evicted, released, timeout):
    """Why the holders could not all be evicted in time, and what was undone."""
    named = ", ".join("%s/%s on %s" % (h["namespace"], h["name"], h["node"]) for h in left[:NAMED])
    more = " and %d more" % (len(left) - NAMED) if len(left) > NAMED else ""
    return ("refused before moving any node to DRA: %d pod(s) holding nvidia.com/gpu were not gone within %ds: "
            "%s%s.%s Evicted before that: %s. The nodes this run cordoned were uncordoned (%s); no node label "
            "changed. Scale the workload up, relax the budget or move the workload to a claim "
            "(dra.gpu.workload_migration), then run again."
            % (len(left), timeout, named, more,
               " PodDisruptionBudget(s) allowing no disruption: %s." % ", ".join(budgets) if budgets else "",
               ", ".join("%s/%s" % (h["namespace"], h["name"]) for h in evicted) or "none",
               ", ".join(released) or "none"))
