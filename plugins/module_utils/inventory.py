# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ResourceSlices (and claims) -> a flat device inventory and summaries.

Pure functions over plain dicts as the API returns them, so the scheduler's rules can be
unit-tested without a cluster: only the newest generation of each pool counts, and only
when all of its slices (``resourceSliceCount``) are present; a pool with duplicate device
names is invalid and ignored.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.quantity import QuantityError, human_bytes, to_bytes

STANDARD_DOMAIN = "resource.kubernetes.io"


def plain_attribute(value):
    """``{"string": "x"}`` -> ``"x"``; versions stay strings."""
    for kind in ("string", "int", "bool", "version"):
        if kind in value:
            return value[kind]
    return None


def usable_pools(slices):
    """Split slices into those of complete, newest pool generations and a list of problems.

    Returns ``(usable_slices, problems)`` where problems are dicts naming the pool and why
    it was left out, as the allocator would ignore it.
    """
    pools = {}
    for item in slices:
        spec = item.get("spec") or {}
        key = (spec.get("driver"), (spec.get("pool") or {}).get("name"))
        pools.setdefault(key, []).append(item)
    usable, problems = [], []
    for (driver, pool), members in sorted(pools.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        newest = max(int(m["spec"]["pool"].get("generation", 0)) for m in members)
        current = [m for m in members if int(m["spec"]["pool"].get("generation", 0)) == newest]
        expected = int(current[0]["spec"]["pool"].get("resourceSliceCount", 1))
        if len(current) != expected:
            problems.append({"driver": driver, "pool": pool, "generation": newest,
                             "reason": "incomplete: %d of %d slices published" % (len(current), expected)})
            continue
        names = [d.get("name") for m in current for d in (m["spec"].get("devices") or [])]
        if len(names) != len(set(names)):
            problems.append({"driver": driver, "pool": pool, "generation": newest,
                             "reason": "invalid: duplicate device names"})
            continue
        usable.extend(current)
    return usable, problems


def allocations(claims):
    """Map (driver, pool, device) -> {"claim": "ns/name", "pods": [...]} from claim statuses."""
    taken = {}
    for claim in claims or []:
        meta = claim.get("metadata") or {}
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        pods = ["%s/%s" % (meta.get("namespace"), r.get("name")) for r in status.get("reservedFor") or []
                if r.get("resource", "pods") == "pods"]
        for result in results:
            key = (result.get("driver"), result.get("pool"), result.get("device"))
            taken[key] = {"claim": "%s/%s" % (meta.get("namespace"), meta.get("name")), "pods": pods,
                          "request": result.get("request")}
    return taken


def flatten_device(slice_obj, device, taken):
    spec = slice_obj["spec"]
    driver, pool = spec.get("driver"), spec["pool"]["name"]
    node = spec.get("nodeName") or device.get("nodeName")
    attributes = {name: plain_attribute(value) for name, value in (device.get("attributes") or {}).items()}
    capacity = {name: (value or {}).get("value") for name, value in (device.get("capacity") or {}).items()}
    allocation = taken.get((driver, pool, device.get("name")))
    return {
        "node": node,
        "node_scope": "node" if node else ("all_nodes" if spec.get("allNodes") else "node_selector"),
        "driver": driver,
        "pool": pool,
        "name": device.get("name"),
        "slice": slice_obj["metadata"]["name"],
        "generation": spec["pool"].get("generation"),
        "attributes": attributes,
        "capacity": capacity,
        "allocated": allocation is not None,
        "claim": allocation["claim"] if allocation else None,
        "pods": allocation["pods"] if allocation else [],
    }


def devices_from_slices(slices, claims=None):
    """Flatten usable slices into devices; returns ``(devices, pool_problems)``."""
    usable, problems = usable_pools(slices)
    taken = allocations(claims)
    devices = []
    for item in usable:
        for device in item["spec"].get("devices") or []:
            devices.append(flatten_device(item, device, taken))
    devices.sort(key=lambda d: (d["node"] or "", d["driver"] or "", d["pool"] or "", _natural(d["name"])))
    return devices, problems


def _natural(name):
    parts, digits, text = [], "", ""
    for char in name or "":
        if char.isdigit():
            if text:
                parts.append((1, 0, text))
                text = ""
            digits += char
        else:
            if digits:
                parts.append((0, int(digits), ""))
                digits = ""
            text += char
    if digits:
        parts.append((0, int(digits), ""))
    if text:
        parts.append((1, 0, text))
    return parts


def device_model(device):
    attrs = device["attributes"]
    return attrs.get("productName") or attrs.get("model") or attrs.get("type") or "unknown"


def _memory_bytes(device):
    value = device["capacity"].get("memory")
    if value is None:
        return 0
    try:
        return to_bytes(value)
    except QuantityError:
        return 0


def _bucket():
    return {"count": 0, "allocated": 0, "free": 0, "memory_bytes": 0}


def summarize(devices):
    """Counts per node, driver and model: count, allocated, free and total memory."""
    summary = {"total": _bucket(), "by_node": {}, "by_driver": {}, "by_model": {}}
    for device in devices:
        buckets = [summary["total"],
                   summary["by_node"].setdefault(device["node"] or "(%s)" % device["node_scope"], _bucket()),
                   summary["by_driver"].setdefault(device["driver"], _bucket()),
                   summary["by_model"].setdefault(device_model(device), _bucket())]
        for bucket in buckets:
            bucket["count"] += 1
            bucket["allocated" if device["allocated"] else "free"] += 1
            bucket["memory_bytes"] += _memory_bytes(device)
    for bucket in [summary["total"]] + [b for key in ("by_node", "by_driver", "by_model")
                                        for b in summary[key].values()]:
        bucket["memory"] = human_bytes(bucket["memory_bytes"])
    return summary


def filter_devices(devices, driver=None, nodes=None, pool=None):
    selected = devices
    if driver:
        selected = [d for d in selected if d["driver"] == driver]
    if nodes is not None:
        wanted = set(nodes)
        selected = [d for d in selected if d["node"] in wanted]
    if pool:
        selected = [d for d in selected if d["pool"] == pool]
    return selected
