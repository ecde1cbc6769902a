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

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes

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


def flatten_device(slice_obj, device, taken, rules=()):
    """One device as the modules report it; ``rules``: the cluster's DeviceTaintRules, whose
    taints join the device's own (device_taints.effective)."""
    spec = slice_obj["spec"]
    driver, pool = spec.get("driver"), spec["pool"]["name"]
    taints = device_taints.effective(driver, pool, device, rules)
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
        "taints": taints,
        "tainted": device_taints.blocks(taints),
    }


def selected_devices(slices, driver=None, nodes=None, pool=None):
    """The devices of usable pools that pass the filters, in the inventory's order.

    Returns ``(entries, pool_problems)``; each entry is ``(slice, device, node)`` as published,
    nothing flattened yet, so a caller that wants only counts (:func:`summarize_raw`) or a few
    nodes does not pay for flattening the rest. Pool problems are those of every pool, as in
    :func:`devices_from_slices`. The filters mean what :func:`filter_devices`' do.
    """
    usable, problems = usable_pools(slices)
    wanted = None if nodes is None else set(nodes)
    entries = []
    for item in usable:
        spec = item["spec"]
        if (driver and spec.get("driver") != driver) or (pool and spec["pool"]["name"] != pool):
            continue
        for device in spec.get("devices") or []:
            node = spec.get("nodeName") or device.get("nodeName")
            if wanted is None or node in wanted:
                entries.append((item, device, node))
    entries.sort(key=lambda e: (e[2] or "", e[0]["spec"].get("driver") or "", e[0]["spec"]["pool"]["name"] or "",
                                _natural(e[1].get("name"))))
    return entries, problems


def devices_from_slices(slices, claims=None, rules=()):
    """Flatten usable slices into devices; returns ``(devices, pool_problems)``."""
    entries, problems = selected_devices(slices)
    taken = allocations(claims)
    return [flatten_device(item, device, taken, rules) for item, device, _node in entries], problems


_NATURAL_KEYS = {}


def _natural(name):
    """Sort key that puts gpu-2 before gpu-10; names repeat across nodes, so keys are kept."""
    key = _NATURAL_KEYS.get(name)
    if key is None:
        key = _NATURAL_KEYS[name] = _natural_key(name)
    return key


def _natural_key(name):
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


_MEMORY_BYTES = {}


def memory_bytes(value):
    """Whole bytes of a capacity value ("23034Mi"); 0 when absent or not a quantity.
    Kept per value: a fleet has few distinct ones."""
    if value is None:
        return 0
    found = _MEMORY_BYTES.get(value)
    if found is None:
        try:
            found = to_bytes(value)
        except QuantityError:
            found = 0
        _MEMORY_BYTES[value] = found
    return found


def _bucket():
    return {"count": 0, "allocated": 0, "free": 0, "tainted": 0, "memory_bytes": 0}


def _summary(rows):
    """Counts from ``(node key, driver, model, allocated, memory value, tainted)`` rows, one per
    device. A device not allocated but tainted NoSchedule/NoExecute counts as tainted, not free:
    no claim without tolerations gets it."""
    total, by_node, by_driver, by_model = _bucket(), {}, {}, {}
    for node, driver, model, allocated, memory, tainted in rows:
        state = "allocated" if allocated else ("tainted" if tainted else "free")
        size = memory_bytes(memory)
        for bucket in (total, by_node.get(node) or by_node.setdefault(node, _bucket()),
                       by_driver.get(driver) or by_driver.setdefault(driver, _bucket()),
                       by_model.get(model) or by_model.setdefault(model, _bucket())):
            bucket["count"] += 1
            bucket[state] += 1
            bucket["memory_bytes"] += size
    for bucket in [total] + list(by_node.values()) + list(by_driver.values()) + list(by_model.values()):
        bucket["memory"] = human_bytes(bucket["memory_bytes"])
    return {"total": total, "by_node": by_node, "by_driver": by_driver, "by_model": by_model}


def summarize(devices):
    """Counts per node, driver and model: count, allocated, free, tainted and total memory."""
    return _summary((device["node"] or "(%s)" % device["node_scope"], device["driver"], device_model(device),
                     device["allocated"], device["capacity"].get("memory"), device.get("tainted", False))
                    for device in devices)


def _plain_or_none(value):
    return plain_attribute(value) if value else None


def raw_model(device):
    """:func:`device_model` of a device as published (attributes not yet flattened)."""
    attrs = device.get("attributes") or {}
    return (_plain_or_none(attrs.get("productName")) or _plain_or_none(attrs.get("model"))
            or _plain_or_none(attrs.get("type")) or "unknown")


def summarize_raw(entries, claims=None, rules=()):
    """:func:`summarize` of the devices :func:`selected_devices` returned, without flattening them:
    the same counts, keys and order for a fraction of the work."""
    taken = allocations(claims)

    def rows():
        for item, device, node in entries:
            spec = item["spec"]
            driver = spec.get("driver")
            model = raw_model(device)
            memory = ((device.get("capacity") or {}).get("memory") or {}).get("value")
            node_key = node or ("(all_nodes)" if spec.get("allNodes") else "(node_selector)")
            tainted = device_taints.blocks(device_taints.effective(driver, spec["pool"]["name"], device, rules))
            yield (node_key, driver, model, (driver, spec["pool"]["name"], device.get("name")) in taken, memory,
                   tainted)
    return _summary(rows())


DEVICE_FIELDS = ("node", "node_scope", "driver", "pool", "name", "slice", "generation", "attributes", "capacity",
                 "allocated", "claim", "pods", "taints", "tainted")


def project(devices, fields):
    """Each device with only ``fields`` (names from :data:`DEVICE_FIELDS`), in that order; all when empty."""
    if not fields:
        return devices
    return [{name: device[name] for name in fields} for device in devices]


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
