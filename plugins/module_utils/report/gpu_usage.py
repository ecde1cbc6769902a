# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who holds which GPU, which allocations sit idle, and what is still free. Pure functions.

Input: lists as the API returns them (ResourceSlices, ResourceClaims, Pods, Nodes,
DeviceClasses), so the answer needs only get/list on those. Output: the usage dict that
``usage_report`` (HTML) and ``usage_text`` (Markdown, console) render (its shape is documented in
the module ``gpu_usage_info``).

A device is *in use* when its claim is reserved for at least one running pod that is not
being deleted, *idle* when it is allocated but no such pod uses it (a pod stuck Pending or
Terminating, a finished pod the claim controller has not yet released, a claim reserved for
nobody), and *free* when no claim holds it and the counters it draws on are not used up.
One shared claim is one device held by several pods: devices are counted once.

Memory shares (DRAConsumableCapacity; NVIDIA's driver 0.5.0 with ConsumableShares): a device
that publishes ``allowMultipleAllocations`` is held by several claims at once, each with its
``consumedCapacity`` and ``shareID``; per device the memory consumed and left is their sum as
the scheduler counts it (:mod:`capacity_shares`), and per DeviceClass "what still fits" is the
largest memory request one more claim can get on each device it selects.

This file puts the answer together and totals it (per node, namespace, node and model,
DeviceClass); each claim is usage_claims.py's, each device usage_devices.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, device_taints, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes as node_facts
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.report import usage_claims, usage_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import human_bytes

DEFAULT_DRIVER = nvidia.DRA_DRIVER


def _compile(device_class):
    expressions = [((s or {}).get("cel") or {}).get("expression") for s in
                   (device_class.get("spec") or {}).get("selectors") or []]
    return cel.Selectors([e for e in expressions if e])


def free_by_class(device_classes, free_entries, driver):
    """For each DeviceClass: how many of the driver's devices it selects, how many of those are
    free, per node, and the memory one more claim can still get (summed over the devices, and
    the largest on one device); ``previewable`` False (with the reason) when the selectors cannot
    be evaluated here, rather than a guess."""
    answers = []
    for device_class in sorted(device_classes, key=lambda c: c["metadata"]["name"]):
        name = device_class["metadata"]["name"]
        try:
            selectors = _compile(device_class)
            total, free, by_node, memory, largest = 0, 0, {}, 0, None
            for _item, device, node, is_free, room in free_entries:
                matched, _error = selectors.match_cached(driver, device)
                if not matched:
                    continue
                total += 1
                if is_free:
                    free += 1
                    by_node[node] = by_node.get(node, 0) + 1
                if room is not None:
                    memory += room
                    largest = room if largest is None else max(largest, room)
            answers.append({"class": name, "previewable": True, "reason": None, "total": total, "free": free,
                            "by_node": by_node, "memory_free_bytes": memory, "memory_free": human_bytes(memory),
                            "largest_claim_bytes": largest,
                            "largest_claim": human_bytes(largest) if largest is not None else None})
        except cel.Unsupported as exc:
            answers.append({"class": name, "previewable": False, "reason": str(exc), "total": None, "free": None,
                            "by_node": None, "memory_free_bytes": None, "memory_free": None,
                            "largest_claim_bytes": None, "largest_claim": None})
    return answers


# --- totals ----------------------------------------------------------------------------------

def _by_namespace(claims):
    totals = {}
    for claim in claims:
        entry = totals.setdefault(claim["namespace"], {"namespace": claim["namespace"], "claims": 0, "devices": 0,
                                                       "pods": 0, "idle_claims": 0, "idle_devices": 0})
        entry["claims"] += 1
        entry["devices"] += len(claim["devices"])
        entry["pods"] += len(claim["pods"])
        if claim["state"] == "idle":
            entry["idle_claims"] += 1
            entry["idle_devices"] += len(claim["devices"])
    return [totals[name] for name in sorted(totals)]


def _by_node_model(nodes):
    rows = {}
    for node in nodes:
        for device in node["devices"]:
            key = (node["name"], device["model"])
            row = rows.setdefault(key, {"node": key[0], "model": key[1], "devices": 0, "allocated": 0, "free": 0,
                                        "tainted": 0})
            row["devices"] += 1
            row[device["state"] if device["state"] in ("free", "tainted") else "allocated"] += 1
    return [rows[key] for key in sorted(rows)]


def _summary(nodes, claims):
    devices = [d for n in nodes for d in n["devices"]]
    count = dict((state, sum(1 for d in devices if d["state"] == state))
                 for state in ("in_use", "idle", "free", "tainted"))
    with_devices = sum(1 for n in nodes if n["devices"])
    line = "%d devices on %d node%s: %d in use, %d idle (allocated, no running pod), %d free" % (
        len(devices), with_devices, "" if with_devices == 1 else "s", count["in_use"], count["idle"], count["free"])
    if count["tainted"]:
        line += ", %d tainted (out of service, no claim)" % count["tainted"]
    on_tainted = sum(1 for d in devices if d["pods"] and device_taints.blocks(d["taints"]))
    if on_tainted:
        line += "; %d tainted device%s still in use" % (on_tainted, "" if on_tainted == 1 else "s")
    return {"devices": len(devices), "allocated": count["in_use"] + count["idle"], "in_use": count["in_use"],
            "idle": count["idle"], "free": count["free"], "tainted": count["tainted"], "claims": len(claims),
            "idle_claims": sum(1 for c in claims if c["state"] == "idle"),
            "pods": len(set((p["namespace"], p["name"]) for c in claims for p in c["pods"])), "line": line}


def _node_list(node_rows, nodes):
    """Every node with devices and every GPU-labelled node (NFD's or GFD's label) without any,
    by name, with its totals; and the names of the latter."""
    facts = dict((summary["name"], summary) for summary in (node_facts.summary(n) for n in nodes))
    gpu_nodes = set(name for name, summary in facts.items() if summary["gpu"])
    listed = []
    for name in sorted(set(node_rows) | gpu_nodes):
        devices = node_rows.get(name, [])
        totals = {"devices": len(devices)}
        for state in ("in_use", "idle", "free", "tainted"):
            totals[state] = sum(1 for d in devices if d["state"] == state)
        listed.append({"name": name, "ready": (facts.get(name) or {}).get("ready"), "totals": totals,
                       "devices": devices})
    return listed, [n["name"] for n in listed if not n["devices"]]


def usage(slices, claims, pods, nodes, device_classes, driver=DEFAULT_DRIVER, now=None, rules=()):
    """The usage dict: nodes with their devices, allocated claims, idle ones, totals per
    namespace and per node and model, free devices per DeviceClass, and notes. ``rules``: the
    DeviceTaintRules, whose taints join the devices' own (no tainted device counts as free)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    entries, problems = slice_devices.selected_devices(slices, driver)
    pods_by_key = dict(((p["metadata"].get("namespace"), p["metadata"].get("name")), p) for p in pods)
    claims_of_device, allocated_claims, notes = {}, [], []
    for claim in sorted(claims, key=lambda c: (c["metadata"].get("namespace"), c["metadata"].get("name"))):
        results = usage_claims.allocation_results(claim, driver)
        if not results:
            continue
        entry = usage_claims.claim_entry(claim, pods_by_key, now)
        allocated_claims.append(entry)
        for result in results:
            claims_of_device.setdefault((result.get("pool"), result.get("device")), []).append((entry, result))

    counters = usage_devices.Counters(entries)
    for item, device, _node in entries:
        if (item["spec"]["pool"]["name"], device.get("name")) in claims_of_device:
            counters.take(item, device)

    allocated = capacity_shares.Allocated(claims)
    node_rows, classified, capacities = {}, [], {}
    for item, device, node in entries:
        key = (item["spec"]["pool"]["name"], device.get("name"))
        holders = claims_of_device.get(key) or []
        for claim, _result in holders:
            name = "%s/%s" % (node or key[0], device.get("name"))
            if name not in claim["devices"]:
                claim["devices"].append(name)
        node_name = node or "(%s)" % key[0]
        held = allocated.usage((driver, key[0], key[1]))
        taints = device_taints.effective(driver, key[0], device, rules)
        is_free = not holders and counters.fits(item, device) and not device_taints.blocks(taints)
        room = usage_devices.room_for_one_more(device, held, is_free, capacities)
        node_rows.setdefault(node_name, []).append(usage_devices.device_row(item, device, holders, held, is_free, taints))
        classified.append((item, device, node_name, is_free, room))
    for claim in allocated_claims:
        if not claim["devices"]:
            notes.append("claim %s/%s holds devices of %s that no published ResourceSlice lists (a driver that "
                         "stopped publishing, or a pool being replaced)" % (claim["namespace"], claim["name"], driver))

    node_list, empty_gpu_nodes = _node_list(node_rows, nodes)
    notes.extend("node %s is labelled as a GPU node but publishes no %s devices" % (name, driver)
                 for name in empty_gpu_nodes)
    if counters.left:
        notes.append("these slices publish shared counters (partitions of one GPU): a device counts as free only "
                     "while what it consumes is left, as the scheduler decides")
    for problem in problems:
        notes.append("pool %s of %s is left out, as the scheduler leaves it: %s"
                     % (problem["pool"], problem["driver"], problem["reason"]))
    idle = [c for c in allocated_claims if c["state"] == "idle"]
    return {"generated_at": usage_claims.format_time(now), "driver": driver, "summary": _summary(node_list, allocated_claims),
            "nodes": node_list, "claims": allocated_claims, "idle": idle,
            "by_namespace": _by_namespace(allocated_claims), "by_node_model": _by_node_model(node_list),
            "free_by_class": free_by_class(device_classes, classified, driver), "notes": notes}
