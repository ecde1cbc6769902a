# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many replicas of some workloads fit on the free GPUs, three ways. Pure functions.

Input: the flat devices of :func:`inventory.devices_from_slices` (so only the newest
complete generation of each pool counts) and a list of workloads. Output: for each strategy,
independently of the others, how many replicas fit per node and in total, where, and what is
left over and why:

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

from ansible_collections.dra.gpu.plugins.module_utils import inputs, inventory, nvidia, slices
from ansible_collections.dra.gpu.plugins.module_utils.quantity import QuantityError, human_bytes, parse_quantity

DEFAULT_DRIVER = nvidia.DRA_DRIVER
WORKLOAD_KEYS = ("name", "replicas", "memory", "model")
# Below this a memory figure is a slip (``memory: 4`` is four bytes), not a workload's need.
MIN_MEMORY = 2 ** 20

# The three strategies: which devices they use and whether one device holds several replicas.
STRATEGIES = (
    ("whole_gpu", {"type": "gpu", "noun": ("GPU", "GPUs"), "shares": False, "words": "with whole GPUs"}),
    ("shared", {"type": "gpu", "noun": ("GPU", "GPUs"), "shares": True, "words": "with sharing"}),
    ("mig", {"type": "mig", "noun": ("MIG device", "MIG devices"), "shares": False, "words": "with MIG"}),
)

# Units people write for memory that Kubernetes does not take, and what to write instead.
# Kubernetes reads "4GB" as nothing at all; "4G" is 10^9 bytes and "4Gi" is 2^30.
UNIT_FIXES = {
    "kb": ("Ki", "k"), "kib": ("Ki",), "ki": ("Ki",), "k": ("Ki", "k"),
    "mb": ("Mi", "M"), "mib": ("Mi",), "mi": ("Mi",), "m": ("Mi", "M"),
    "gb": ("Gi", "G"), "gib": ("Gi",), "gi": ("Gi",), "g": ("Gi", "G"),
    "tb": ("Ti", "T"), "tib": ("Ti",), "ti": ("Ti",), "t": ("Ti", "T"),
}
_NUMBER_AND_UNIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$")


def _raise(message):
    raise inputs.InputError(message)


# --- the workloads as typed ------------------------------------------------------------------

def _quantity_fix(value):
    """What to write instead of a memory figure Kubernetes refuses ("4Gi or 4G")."""
    match = _NUMBER_AND_UNIT.match(str(value))
    if match and match.group(2).lower() in UNIT_FIXES:
        number = match.group(1)
        return " or ".join(number + unit for unit in UNIT_FIXES[match.group(2).lower()])
    return "a number with a unit, e.g. 4Gi, 4096Mi or 4G"


def memory(label, value):
    """A workload's memory as bytes; the message names the field and what to write."""
    if value is None or isinstance(value, (bool, dict, list)) or str(value).strip() == "":
        _raise("%s is missing; set the GPU memory one replica needs, e.g. 4Gi" % label)
    try:
        number = parse_quantity(value if isinstance(value, int) else str(value))
    except QuantityError:
        _raise("%s is %r, which is not a Kubernetes quantity; write %s" % (label, value, _quantity_fix(value)))
    if number <= 0:
        _raise("%s is %s; a replica needs more than 0 bytes of GPU memory, e.g. 4Gi" % (label, value))
    if number < MIN_MEMORY:
        # A bare number is bytes to Kubernetes; "memory: 4" almost surely meant 4Gi.
        bare = re.match(r"^\s*\d+\s*$", str(value))
        _raise("%s is %r, which Kubernetes reads as less than 1Mi; write it with a unit, e.g. %sGi"
               % (label, value, str(value).strip() if bare else "4"))
    return int(number)


def _workload_checks(label, item):
    """The checks of one workload entry."""
    if not isinstance(item, dict):
        return [lambda: _raise("%s is %r; each workload is a mapping with name, memory, and optionally replicas and "
                               "model, e.g. {name: web, memory: 4Gi, replicas: 2}" % (label, item))]
    checks = []
    unknown = sorted(str(k) for k in set(item) - set(WORKLOAD_KEYS))
    if unknown:
        checks.append(lambda: _raise("%s has %s, which it does not know; use %s"
                                     % (label, ", ".join(unknown), ", ".join(WORKLOAD_KEYS))))
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        shown = "missing" if name is None else "%r" % (name,)
        checks.append(lambda: _raise("%s.name is %s; give each workload a name, e.g. web" % (label, shown)))
    checks.append(lambda: inputs.integer(label + ".replicas", item.get("replicas", 1), 1, "pods of this workload"))
    checks.append(lambda: memory(label + ".memory", item.get("memory")))
    model = item.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        checks.append(lambda: _raise("%s.model is %r; write part of the GPU's product name, e.g. L4 or A100, or "
                                     "leave it out for any model" % (label, model)))
    return checks


def input_checks(workloads, name="workloads"):
    """Every check of the workloads option, for :func:`inputs.refuse` (one message lists all problems)."""
    if not isinstance(workloads, list) or not workloads:
        return [lambda: _raise("%s is %r; list at least one workload, e.g. [{name: web, memory: 4Gi, replicas: 2}]"
                               % (name, workloads))]
    checks = []
    for index, item in enumerate(workloads):
        checks.extend(_workload_checks("%s[%d]" % (name, index), item))
    names = [w.get("name") for w in workloads if isinstance(w, dict) and isinstance(w.get("name"), str)]
    checks.append(lambda: inputs.unique(name, names, "workload name"))
    return checks


def parse_workloads(workloads, name="workloads"):
    """The workloads, checked, with defaults filled in and memory in bytes."""
    problems = inputs.collect(input_checks(workloads, name))
    if problems:
        raise inputs.InputError("; ".join(problems))
    parsed = []
    for index, item in enumerate(workloads):
        label = "%s[%d]" % (name, index)
        parsed.append({"name": item["name"], "replicas": inputs.integer(label + ".replicas", item.get("replicas", 1)),
                       "memory": str(item["memory"]).strip(),
                       "memory_bytes": memory(label + ".memory", item["memory"]),
                       "model": item["model"].strip() if item.get("model") is not None else None})
    return parsed


# --- the devices -----------------------------------------------------------------------------

def model_matcher(model):
    """Does a productName match the workload's ``model``? Case-insensitive substring, except that
    a match running on into more digits does not count: "A10" is not an A100, "L4" not an L40S."""
    if not model:
        return lambda product: True
    pattern = re.compile(re.escape(model.strip()) + r"(?!\d)", re.IGNORECASE)
    return lambda product: bool(product) and bool(pattern.search(product))


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
            "model": device["attributes"].get("productName") or inventory.device_model(device),
            "profile": device["attributes"].get("profile"),
            "memory_bytes": _memory_of(device),
            "free": not device["allocated"],
        })
    # sorted() is stable, so equal devices keep inventory's node / pool / name order.
    return sorted(found, key=lambda c: (c["memory_bytes"] is None, c["memory_bytes"] or 0,
                                        _compute_slices(c["profile"])))


def _holds(rule, device, workload):
    """Replicas of ``workload`` one device can take under ``rule`` (0: it does not fit)."""
    if device["memory_bytes"] is None or device["memory_bytes"] < workload["memory_bytes"]:
        return 0
    return device["memory_bytes"] // workload["memory_bytes"] if rule["shares"] else 1


# --- why replicas are left over --------------------------------------------------------------

def _count(number, noun):
    return "%d %s" % (number, noun[0] if number == 1 else noun[1])


def _of_model(workload):
    return " of model %s" % workload["model"] if workload["model"] else ""


def reason(rule, workload, left, devices, used):
    """In words, why ``left`` replicas of ``workload`` found no device. The first cause that
    applies wins, from "nothing published" down to "the rest are taken by this plan"."""
    noun, model = rule["noun"], _of_model(workload)
    matches = model_matcher(workload["model"])
    published = [d for d in devices if matches(d["model"])]
    if not devices:
        if rule["type"] == "mig":
            return "no MIG device is published: no GPU on the selected nodes has MIG enabled with instances created"
        return "no GPU is published on the selected nodes"
    if not published:
        models = sorted(set(d["model"] for d in devices))
        return "no %s%s (published: %s)" % (noun[0], model, ", ".join(models))
    free = [d for d in published if d["free"]]
    if not free:
        return "all %s%s are allocated to claims" % (_count(len(published), noun), model)
    sized = [d["memory_bytes"] for d in free if d["memory_bytes"] is not None]
    if not sized:
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
    text += ("the 1 free %s%s with %s or more is full" % (noun[0], model, workload["memory"]) if len(fitting) == 1
             else "all %d free %s%s with %s or more are full" % (len(fitting), noun[1], model, workload["memory"]))
    if holders:
        text += " (earlier workloads hold %s)" % ", ".join(holders)
    return text


# --- placement -------------------------------------------------------------------------------

def _placement(rule, device, workload, replicas):
    entry = {"workload": workload["name"], "node": device["node"], "pool": device["pool"], "device": device["device"],
             "model": device["model"], "memory": human_bytes(device["memory_bytes"]), "replicas": replicas}
    if rule["type"] == "mig":
        entry["profile"] = device["profile"]
    if rule["shares"]:
        # What to put in the claim's GpuConfig sharing.mpsConfig; MPS needs at least 1 percent.
        entry["mps_config"] = {"defaultPinnedDeviceMemoryLimit": workload["memory"],
                               "defaultActiveThreadPercentage": max(1, 100 // replicas)}
    return entry


def place(rule, devices, workloads):
    """One strategy over all workloads: placements, replicas placed per workload, leftovers."""
    used, placements, placed, unplaced = {}, [], {}, []
    for workload in workloads:
        matches = model_matcher(workload["model"])
        left = workload["replicas"]
        for device in devices:
            if not left:
                break
            key = (device["node"], device["pool"], device["device"])
            holds = _holds(rule, device, workload)
            if key in used or not device["free"] or not holds or not matches(device["model"]):
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


def _inventory(devices):
    counts = {}
    for kind in ("gpu", "mig"):
        of_kind = candidates(devices, kind)
        counts[kind] = {"count": len(of_kind), "free": sum(1 for d in of_kind if d["free"])}
    return counts


def summary_line(requested, totals):
    whole, shared, mig = totals["whole_gpu"], totals["shared"], totals["mig"]
    ratio = " (%.1fx)" % (float(shared) / whole) if whole else ""
    return "%d replicas requested: %d fit with whole GPUs, %d with sharing%s, %d with MIG" % (
        requested, whole, shared, ratio, mig)


def plan(devices, workloads):
    """The packing plan for flat ``devices`` (already filtered to one driver and the wanted nodes).

    ``workloads`` are checked first (:class:`inputs.InputError` names the bad field).
    """
    parsed = parse_workloads(workloads)
    strategies, unplaced, per_workload = {}, {}, {}
    for name, rule in STRATEGIES:
        strategies[name], per_workload[name], unplaced[name] = place(rule, candidates(devices, rule["type"]), parsed)
    requested = sum(w["replicas"] for w in parsed)
    rows = []
    for workload in parsed:
        row = {"name": workload["name"], "memory": workload["memory"], "model": workload["model"],
               "requested": workload["replicas"]}
        row.update((name, per_workload[name][workload["name"]]) for name, _rule in STRATEGIES)
        rows.append(row)
    return {
        "strategies": strategies,
        "workloads": rows,
        "unplaced": unplaced,
        "requested": requested,
        "inventory": _inventory(devices),
        "summary": summary_line(requested, dict((name, strategies[name]["total"]) for name, _rule in STRATEGIES)),
    }


def from_slices(slice_list, claims, workloads, driver=DEFAULT_DRIVER, nodes=None):
    """The plan over slices and claims as the API returns them, plus the pools left out.

    ``nodes`` (unset or empty: every node) keeps only devices local to those nodes.
    """
    found = slices.report(slice_list, claims, slices.Filters(driver=driver, nodes=nodes), nodes or None)
    result = plan(found["devices"], workloads)
    result["ignored_pools"] = [p for p in found["ignored_pools"] if p["driver"] == driver]
    return result
