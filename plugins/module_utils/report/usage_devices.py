# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The devices of the GPU usage report: one row per published device with the claims that
hold it, in use, idle, free or tainted, its memory consumed and left (shares counted as the
scheduler counts them, :mod:`capacity_shares`), the room one more claim gets on it, and the
shared counters that decide whether a partition is free. Pure functions.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, device_taints, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes


def _device_type(device):
    value = slice_devices.plain_attribute((device.get("attributes") or {}).get("type") or {})
    return value if value in ("gpu", "mig") else "other"


def _memory(device):
    value = ((device.get("capacity") or {}).get("memory") or {}).get("value")
    size = slice_devices.memory_bytes(value)
    return (human_bytes(size) if size else value), (size or None)


class Counters:
    """Shared counters of partitionable devices: a free device only counts as free when what it
    consumes is still left in its pool's counter sets (a MIG partition of a GPU in use is not)."""

    def __init__(self, entries):
        self.left = {}
        for item, _device, _node in entries:
            spec = item["spec"]
            for counter_set in spec.get("sharedCounters") or []:
                for name, counter in (counter_set.get("counters") or {}).items():
                    key = (spec.get("driver"), spec["pool"]["name"], counter_set.get("name"), name)
                    self.left.setdefault(key, _number(counter.get("value")))

    def _uses(self, item, device):
        spec = item["spec"]
        for consumption in device.get("consumesCounters") or []:
            for name, counter in (consumption.get("counters") or {}).items():
                yield ((spec.get("driver"), spec["pool"]["name"], consumption.get("counterSet"), name),
                       _number(counter.get("value")))

    def take(self, item, device):
        for key, amount in self._uses(item, device):
            if key in self.left:
                self.left[key] -= amount

    def fits(self, item, device):
        return all(self.left.get(key, amount) >= amount for key, amount in self._uses(item, device))


def _number(value):
    try:
        return to_bytes(value) if value is not None else 0
    except QuantityError:
        return 0


def _share_entry(claim, result):
    return {"namespace": claim["namespace"], "name": claim["name"], "state": claim["state"],
            "share_id": result.get("shareID"), "consumed": dict(result.get("consumedCapacity") or {})}


def _memory_use(device, held, is_free):
    """consumed, free (bytes) of the device's memory as the scheduler counts it; Nones without a
    size. Taken whole by a claim: all consumed; shared: what the shares consumed; otherwise free
    only while the device is (a partition whose counters are used up has nothing to give)."""
    size = slice_devices.memory_bytes(((device.get("capacity") or {}).get("memory") or {}).get("value"))
    if not size:
        return None, None
    if held[0] or device.get("allowMultipleAllocations"):
        consumed = capacity_shares.memory_consumed(held, size)
        return consumed, size - consumed
    return 0, size if is_free else 0


def device_row(item, device, holders, held, is_free, taints=()):
    """One device: its claims (several when it allows multiple allocations), state, memory use,
    taints. A device no claim holds that is tainted NoSchedule/NoExecute is ``tainted``, not free."""
    memory, memory_bytes = _memory(device)
    consumed, left = _memory_use(device, held, is_free)
    row = {"name": device.get("name"), "driver": item["spec"].get("driver"), "pool": item["spec"]["pool"]["name"],
           "type": _device_type(device), "model": slice_devices.raw_model(device), "memory": memory, "memory_bytes": memory_bytes,
           "shareable": bool(device.get("allowMultipleAllocations")),
           "memory_consumed_bytes": consumed, "memory_consumed": human_bytes(consumed) if consumed is not None else None,
           "memory_free_bytes": left, "memory_free": human_bytes(left) if left is not None else None,
           "state": "tainted" if device_taints.blocks(taints) else "free", "claim": None, "shares": [], "pods": [],
           "since": None, "age_seconds": None, "idle_reason": None, "taints": list(taints)}
    if holders:
        claims = [claim for claim, _result in holders]
        first = min(claims, key=lambda c: c["since"] or "")
        in_use = [c for c in claims if c["state"] == "in_use"]
        pods, seen = [], set()
        for claim in claims:
            for pod in claim["pods"]:
                if (pod["namespace"], pod["name"]) not in seen:
                    seen.add((pod["namespace"], pod["name"]))
                    pods.append(pod)
        row.update(state="in_use" if in_use else "idle", pods=pods, since=first["since"],
                   age_seconds=first["age_seconds"],
                   idle_reason=None if in_use else "; ".join(c["idle_reason"] for c in claims),
                   claim={"namespace": first["namespace"], "name": first["name"], "shared": first["shared"]},
                   shares=[_share_entry(claim, result) for claim, result in holders if result.get("shareID")])
    return row


def room_for_one_more(device, held, is_free, cache):
    """The largest memory request one more claim can get on the device (bytes), None for none:
    a device that allows multiple allocations keeps what its shares left; another device only
    when it is free, whole."""
    dedicated, used = held
    if dedicated:
        return None
    if not device.get("allowMultipleAllocations"):
        size = slice_devices.memory_bytes(((device.get("capacity") or {}).get("memory") or {}).get("value"))
        return size if is_free and size else None
    signature = repr(sorted((device.get("capacity") or {}).items()))
    if signature not in cache:
        cache[signature] = capacity_shares.capacities(device)
    found = capacity_shares.largest_request(cache[signature], used, "memory")
    return None if found is None else int(found)
