# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Handing GPUs from one manager to the other without handing one out twice.

Two refusals of the gpu_operator plan, as data over listed Pods and ResourceClaims:
- moving a node to DRA while pods there still hold ``nvidia.com/gpu`` from the device plugin:
  DRA would publish, and allocate, GPUs those pods already use;
- removing the DRA driver while ResourceClaims hold its devices: the kubelet cannot
  unprepare them without the driver, and their pods stay Terminating.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils import gpu_workloads

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
            "run would move to DRA: %s%s. DRA would hand out the same GPUs again. Move those workloads to claims "
            "or off these nodes first (dra.gpu.gpu_workload_info lists them), or leave the nodes out of "
            "gpu_operator_dra_nodes, and run again." % (len(holders), named, more))


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


def removal_refusal(held, driver):
    """The message that stops removing the driver while its devices are allocated, or None."""
    if not held:
        return None
    named = "; ".join("%s/%s (%s; pods: %s)" % (c["namespace"], c["name"], ", ".join(c["devices"]),
                                                ", ".join(c["pods"]) or "none") for c in held[:NAMED])
    more = "; and %d more" % (len(held) - NAMED) if len(held) > NAMED else ""
    return ("refused before removing anything: %d ResourceClaim(s) hold devices of %s: %s%s. Without the driver "
            "the kubelet cannot release them and their pods stay Terminating. Delete those pods or workloads "
            "first, or set gpu_operator_force_removal: true to remove the driver anyway (no pod is deleted)."
            % (len(held), driver, named, more))
