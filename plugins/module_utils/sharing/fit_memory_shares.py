# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_fit's answer memory_shares: one ResourceClaim per replica asking ``capacity.requests.memory``,
placed as the scheduler's allocator places it (:mod:`capacity_shares`). Pure functions.

Devices that publish ``allowMultipleAllocations`` (NVIDIA's ConsumableShares) take claims while
the sum of their consumed capacity fits, the request rounded by the device's request policy,
what claims' allocations already consumed counted; other devices go whole to one claim. Nodes
in name order, on a node the first device in slice order with room. The scheduler enforces this
accounting (nothing caps a pod's memory on the GPU). :class:`Shares` also evaluates a
workload's ``device_class`` selectors (:mod:`cel`), which every answer uses.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, device_taints, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import human_bytes
from ansible_collections.dra.gpu.plugins.module_utils.sharing.fit_workloads import of_class, of_model

# The node orders memory_shares is planned in: the answer's, and two others as a check.
NODE_ORDERS = ("name", "reverse", "spread")


def _text(name, value):
    """A consumed amount as the API prints it: memory in binary units, other capacities as numbers."""
    return human_bytes(value) if name == "memory" else str(value)


class Shares:
    """What ``memory_shares`` and ``device_class`` need beyond the flat devices: the devices as
    published, in the allocator's order, what the claims' allocations hold, the DeviceClasses."""

    def __init__(self, entries, claims, device_classes, rules=()):
        self.allocated = capacity_shares.Allocated(claims)
        self.classes = dict((c["metadata"]["name"], c) for c in device_classes or [])
        self._capacities, self._consumption, self._class_keys, self._nodes = {}, {}, {}, None
        self.devices = []
        for item, device, node in capacity_shares.allocator_order(entries):
            spec = item["spec"]
            signature = repr(sorted((device.get("capacity") or {}).items()))
            if signature not in self._capacities:
                self._capacities[signature] = capacity_shares.capacities(device)
            self.devices.append({
                "raw": device, "node": node or "(%s)" % spec["pool"]["name"], "pool": spec["pool"]["name"],
                "device": device.get("name"), "driver": spec.get("driver"), "key": (spec["pool"]["name"], device.get("name")),
                "model": slice_devices.raw_model(device), "signature": signature,
                "type": slice_devices.plain_attribute((device.get("attributes") or {}).get("type") or {}),
                "multi": bool(device.get("allowMultipleAllocations")),
                # The allocator skips a device whose taint the claim does not tolerate (these claims tolerate none):
                # the slice's own taints and those of the DeviceTaintRules that select it.
                "tainted": device_taints.blocks(device_taints.effective(spec.get("driver"), spec["pool"]["name"],
                                                                        device, rules)),
                "memory_bytes": slice_devices.memory_bytes(
                    ((device.get("capacity") or {}).get("memory") or {}).get("value")) or None})

    @property
    def nodes(self):
        """[(node, its devices in allocator order)] by node name."""
        if self._nodes is None:
            grouped = {}
            for device in self.devices:
                grouped.setdefault(device["node"], []).append(device)
            self._nodes = sorted(grouped.items(), key=lambda kv: kv[0])
        return self._nodes

    @property
    def any_shared(self):
        return any(d["multi"] for d in self.devices)

    def capacities(self, device):
        return self._capacities[device["signature"]]

    def consumption(self, device, workload):
        """What one claim of the workload consumes on the device (None: the allocator skips it)."""
        key = (device["signature"], workload["memory_bytes"])
        if key not in self._consumption:
            requests = {} if workload["memory_bytes"] is None else {"memory": workload["memory_bytes"]}
            self._consumption[key] = capacity_shares.consumption(self.capacities(device), requests)
        return self._consumption[key]

    def class_keys(self, name):
        """(the (pool, device) keys DeviceClass ``name`` selects, None) or (None, why it cannot be told)."""
        if name not in self._class_keys:
            self._class_keys[name] = self._select(name)
        return self._class_keys[name]

    def _select(self, name):
        spec = self.classes[name].get("spec") or {}
        expressions = [((s or {}).get("cel") or {}).get("expression") for s in spec.get("selectors") or []]
        try:
            selectors = cel.Selectors([e for e in expressions if e])
            return set(d["key"] for d in self.devices
                       if selectors.match_cached(d["driver"], d["raw"])[0]), None
        except cel.Unsupported as exc:
            return None, "the selectors of DeviceClass %s cannot be evaluated here, so nothing is guessed: %s" % (
                name, exc)


def _need(workload):
    """What a replica asks for, in words."""
    return workload["memory"] if workload["memory_bytes"] is not None else "no memory request (a device's default)"


def _shares_reason(workload, left, seen, sized):
    what = "device%s%s" % (of_class(workload), of_model(workload))
    if workload["class_problem"]:
        return workload["class_problem"]
    if not seen:
        return "no %s is published%s" % (what, "" if workload["device_class"] else " (type gpu)")
    if not sized:
        return ("needs %s, which no %s takes: a request above a device's memory or its requestPolicy's "
                "validRange.max is refused" % (_need(workload), what))
    return ("%d of %d replicas left over: no %s has room left for one more claim of %s (claims' consumedCapacity "
            "and earlier workloads)" % (left, workload["replicas"], what, _need(workload)))


def _usable(shares, workload, devices, state, tally):
    """The node's devices a claim of ``workload`` may get, in allocator order, each with what one
    claim consumes there and its state; ``tally`` counts devices seen and devices it fits by policy."""
    usable = []
    for device in devices:
        if not workload["accepts"](device) or (not workload["device_class"] and device["type"] != "gpu"):
            continue
        tally[0] += 1
        if device["tainted"]:
            continue
        consumed = shares.consumption(device, workload)
        if consumed is None:
            continue
        tally[1] += 1
        key = (device["driver"], device["pool"], device["device"])
        held = state.get(key)
        if held is None:
            dedicated, used = shares.allocated.usage(key)
            held = state[key] = {"dedicated": dedicated, "used": dict(used)}
        if not held["dedicated"]:
            usable.append((device, consumed, held))
    return usable


def _room(shares, device, consumed, held):
    if held["dedicated"]:
        return 0
    room = capacity_shares.room(shares.capacities(device), held["used"], consumed)
    if not device["multi"] and room != 0:
        # Without allowMultipleAllocations the claim gets the device whole.
        room = 0 if held["used"] else 1
    return room


def _take(device, consumed, held, count):
    capacity_shares.add(held["used"], consumed, count)
    held["dedicated"] = not device["multi"]


def _walk(shares, workloads, order):
    """One memory_shares plan with nodes taken in ``order``: per workload (placed, [(device, consumed,
    replicas)], tally), and the replicas per node. On each node the first device with room, as the
    allocator; ``spread`` gives each replica the node with the fewest replicas so far."""
    nodes = list(shares.nodes)
    if order == "reverse":
        nodes.reverse()
    state, per_node, answers = {}, dict((node, 0) for node, _devices in nodes), []
    for workload in workloads:
        tally, left, taken = [0, 0], workload["replicas"], []
        candidates_by_node = [(node, _usable(shares, workload, devices, state, tally)) for node, devices in nodes]
        if order != "spread":
            for node, usable in candidates_by_node:
                for device, consumed, held in usable:
                    room = _room(shares, device, consumed, held) if left else 0
                    if room == 0:
                        continue
                    count = left if room is None else min(room, left)
                    _take(device, consumed, held, count)
                    taken.append((node, device, consumed, count))
                    per_node[node] += count
                    left -= count
        else:
            heap = [(per_node[node], index, node, usable) for index, (node, usable) in enumerate(candidates_by_node)
                    if usable]
            heapq.heapify(heap)
            while left and heap:
                _count, index, node, usable = heapq.heappop(heap)
                while usable and _room(shares, *usable[0]) == 0:
                    usable = usable[1:]
                if not usable:
                    continue
                device, consumed, held = usable[0]
                _take(device, consumed, held, 1)
                taken.append((node, device, consumed, 1))
                per_node[node] += 1
                left -= 1
                heapq.heappush(heap, (per_node[node], index, node, usable))
        answers.append((workload["replicas"] - left, taken, tally))
    return answers, per_node


def place_shares(shares, workloads):
    """``memory_shares`` over all workloads: one claim per replica, allocated as the allocator does.

    The answer takes nodes in name order (the scheduler picks them by score); the plan is made
    again with nodes in reverse order and spread one replica at a time, and workloads whose count
    differs there are listed in ``depends_on_node_choice`` (a check, not a proof: the scheduler's
    scores may choose yet other nodes).
    """
    answers, by_node = _walk(shares, workloads, NODE_ORDERS[0])
    others = [_walk(shares, workloads, order)[0] for order in NODE_ORDERS[1:]]
    placements, placed, unplaced, depends = [], {}, [], []
    for index, workload in enumerate(workloads):
        done, taken, tally = answers[index]
        placed[workload["name"]] = done
        if any(other[index][0] != done for other in others):
            depends.append(workload["name"])
        merged = {}
        for node, device, consumed, count in taken:
            key = (node, device["pool"], device["device"])
            if key in merged:
                merged[key]["replicas"] += count
                continue
            merged[key] = {"workload": workload["name"], "node": node, "pool": device["pool"],
                           "device": device["device"], "model": device["model"],
                           "memory": human_bytes(device["memory_bytes"]) if device["memory_bytes"] else None,
                           "shared": device["multi"], "replicas": count,
                           "consumes": dict((n, _text(n, v)) for n, v in sorted(consumed.items()))}
            placements.append(merged[key])
        left = workload["replicas"] - done
        if left:
            unplaced.append({"workload": workload["name"], "replicas": left, "requested": workload["replicas"],
                             "reason": _shares_reason(workload, left, tally[0], tally[1])})
    return {"total": sum(placed.values()), "by_node": by_node,
            "devices_used": len(set((p["node"], p["pool"], p["device"]) for p in placements)),
            "placements": placements, "depends_on_node_choice": depends}, placed, unplaced
