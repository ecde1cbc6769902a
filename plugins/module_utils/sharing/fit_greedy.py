# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_fit's answers whole_gpu, shared and mig: which free devices each may use, how many
replicas one device holds, greedy placement, and why replicas are left over. Pure functions.

- ``whole_gpu``: one free GPU (attribute ``type: gpu``) per replica, as the device plugin does;
- ``shared``: one shared ResourceClaim per free GPU (time-slicing or MPS), holding
  ``floor(GPU memory / workload memory)`` replicas of one workload. MPS limits are set per
  claim (one pinned-memory limit and one active-thread percentage for every client), so a GPU
  serves one workload; time-slicing enforces nothing, so there the memory is bookkeeping;
- ``mig``: one free published MIG device (``type: mig``) with at least the workload's memory
  per replica.

Placement is greedy and deterministic: workloads in the order given (list the ones that
matter most first), each taking the smallest free device that fits (ties in node and device
order), so large devices stay free for large workloads. A device allocated to any claim is
not free: how much of a shared one is used cannot be seen from the API.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, parse_quantity
from ansible_collections.dra.gpu.plugins.module_utils.sharing.fit_workloads import of_class, of_model

# The three strategies: which devices they use and whether one device holds several replicas.
STRATEGIES = (
    ("whole_gpu", {"type": "gpu", "noun": ("GPU", "GPUs"), "shares": False, "words": "with whole GPUs"}),
    ("shared", {"type": "gpu", "noun": ("GPU", "GPUs"), "shares": True, "words": "with sharing"}),
    ("mig", {"type": "mig", "noun": ("MIG device", "MIG devices"), "shares": False, "words": "with MIG"}),
)


# --- the devices -----------------------------------------------------------------------------

def _memory_of(device):
    """Bytes of the device's ``memory`` capacity, or None when it publishes none (or garbage)."""
    value = device["capacity"].get("memory")
    if value is None:
        return None
    try:
        return int(parse_quantity(value))
    except QuantityError:
        return None


def _compute_slices(profile):
    """'3g.40gb' -> 3, so of two MIG profiles with equal memory the one with less compute goes first."""
    match = re.match(r"^(\d+)g\.", str(profile or ""))
    return int(match.group(1)) if match else 0


def candidates(devices, kind):
    """The devices a strategy may use, smallest first, each with what placement needs."""
    found = []
    for device in devices:
        if device["attributes"].get("type") != kind:
            continue
        found.append({
            "node": device["node"] or "(%s)" % device["node_scope"],
            "pool": device["pool"],
            "device": device["name"],
            "model": device["attributes"].get("productName") or slice_devices.device_model(device),
            "profile": device["attributes"].get("profile"),
            "memory_bytes": _memory_of(device),
            # A device tainted NoSchedule/NoExecute (its driver's health taint, a DeviceTaintRule) is not
            # free: the scheduler gives it to no claim that does not tolerate the taint.
            "free": not device["allocated"] and not device.get("tainted"),
            "key": (device["pool"], device["name"]),
        })
    # sorted() is stable, so equal devices keep inventory's node / pool / name order.
    return sorted(found, key=lambda c: (c["memory_bytes"] is None, c["memory_bytes"] or 0,
                                        _compute_slices(c["profile"])))


def _holds(rule, device, workload):
    """Replicas of ``workload`` one device can take under ``rule`` (0: it does not fit)."""
    if workload["memory_bytes"] is None:
        return 1
    if device["memory_bytes"] is None or device["memory_bytes"] < workload["memory_bytes"]:
        return 0
    return device["memory_bytes"] // workload["memory_bytes"] if rule["shares"] else 1


# --- why replicas are left over --------------------------------------------------------------

def _count(number, noun):
    return "%d %s" % (number, noun[0] if number == 1 else noun[1])


def reason(rule, workload, left, devices, used):
    """In words, why ``left`` replicas of ``workload`` found no device. The first cause that
    applies wins, from "nothing published" down to "the rest are taken by this plan"."""
    noun, model = rule["noun"], of_model(workload) + of_class(workload)
    if workload.get("class_problem"):
        return workload["class_problem"]
    published = [d for d in devices if workload["accepts"](d)]
    if not devices:
        if rule["type"] == "mig":
            return "no MIG device is published: no GPU on the selected nodes has MIG enabled with instances created"
        return "no GPU is published on the selected nodes"
    if not published:
        models = sorted(set(d["model"] for d in devices))
        return "no %s%s (published: %s)" % (noun[0], model, ", ".join(str(m) for m in models))
    free = [d for d in published if d["free"]]
    if not free:
        return "all %s%s are allocated to claims" % (_count(len(published), noun), model)
    sized = [d["memory_bytes"] for d in free if d["memory_bytes"] is not None]
    if not sized and workload["memory_bytes"] is not None:
        return "needs %s, and no free %s%s publishes its memory capacity" % (workload["memory"], noun[0], model)
    fitting = [d for d in free if _holds(rule, d, workload)]
    if not fitting:
        largest = max(free, key=lambda d: d["memory_bytes"] or 0)
        profile = " (%s)" % largest["profile"] if largest["profile"] else ""
        return "needs %s, the largest free %s%s has %s%s" % (
            workload["memory"], noun[0], model, human_bytes(largest["memory_bytes"]), profile)
    holders = []
    for device in fitting:
        holder = used.get((device["node"], device["pool"], device["device"]))
        if holder not in holders and holder != workload["name"]:
            holders.append(holder)
    text = "%d of %d replicas left over: " % (left, workload["replicas"])
    enough = " with %s or more" % workload["memory"] if workload["memory_bytes"] is not None else ""
    text += ("the 1 free %s%s%s is full" % (noun[0], model, enough) if len(fitting) == 1
             else "all %d free %s%s%s are full" % (len(fitting), noun[1], model, enough))
    if holders:
        text += " (earlier workloads hold %s)" % ", ".join(holders)
    return text


# --- placement -------------------------------------------------------------------------------

def _placement(rule, device, workload, replicas):
    entry = {"workload": workload["name"], "node": device["node"], "pool": device["pool"], "device": device["device"],
             "model": device["model"], "memory": human_bytes(device["memory_bytes"]) if device["memory_bytes"] else None,
             "replicas": replicas}
    if rule["type"] == "mig":
        entry["profile"] = device["profile"]
    if rule["shares"]:
        # What to put in the claim's GpuConfig sharing.mpsConfig; MPS needs at least 1 percent.
        entry["mps_config"] = {"defaultActiveThreadPercentage": max(1, 100 // replicas)}
        if workload["memory_bytes"] is not None:
            entry["mps_config"]["defaultPinnedDeviceMemoryLimit"] = workload["memory"]
    return entry


def place(rule, devices, workloads):
    """One strategy over all workloads: placements, replicas placed per workload, leftovers."""
    used, placements, placed, unplaced = {}, [], {}, []
    for workload in workloads:
        accepts = workload["accepts"]
        left = workload["replicas"]
        for device in devices:
            if not left:
                break
            key = (device["node"], device["pool"], device["device"])
            holds = _holds(rule, device, workload)
            if key in used or not device["free"] or not holds or not accepts(device):
                continue
            used[key] = workload["name"]
            taken = min(holds, left)
            placements.append(_placement(rule, device, workload, taken))
            left -= taken
        placed[workload["name"]] = workload["replicas"] - left
        if left:
            unplaced.append({"workload": workload["name"], "replicas": left, "requested": workload["replicas"],
                             "reason": reason(rule, workload, left, devices, used)})
    by_node = {}
    for device in devices:
        if device["free"]:
            by_node.setdefault(device["node"], 0)
    for entry in placements:
        by_node[entry["node"]] += entry["replicas"]
    return {"total": sum(placed.values()), "by_node": by_node, "devices_used": len(placements),
            "placements": placements}, placed, unplaced
