# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many replicas of some workloads fit on the free GPUs, three ways. Pure functions.

Input: the flat devices of :func:`slice_devices.devices_from_slices` (so only the newest
complete generation of each pool counts) and a list of workloads. Output: for each strategy,
independently of the others, how many replicas fit per node and in total, where, and what is
left over and why:

- ``whole_gpu``: one free GPU (attribute ``type: gpu``) per replica, as the device plugin does;
- ``shared``: one shared ResourceClaim per free GPU (time-slicing or MPS), holding
  ``floor(GPU memory / workload memory)`` replicas of one workload. MPS limits are set per
  claim (one pinned-memory limit and one active-thread percentage for every client), so a GPU
  serves one workload; time-slicing enforces nothing, so there the memory is bookkeeping;
- ``mig``: one free published MIG device (``type: mig``) with at least the workload's memory
  per replica;
- ``memory_shares``: one ResourceClaim per replica asking ``capacity.requests.memory``, placed
  as the scheduler's allocator places it (:mod:`capacity_shares`): devices that publish
  ``allowMultipleAllocations`` (NVIDIA's ConsumableShares) take claims while the sum of their
  consumed capacity fits, the request rounded by the device's request policy, what claims'
  allocations already consumed counted; other devices go whole to one claim. The scheduler
  enforces this accounting (nothing caps a pod's memory on the GPU).

Placement is greedy and deterministic: workloads in the order given (list the ones that
matter most first), each taking the smallest free device that fits (ties in node and device
order), so large devices stay free for large workloads. A device allocated to any claim is
not free: how much of a shared one is used cannot be seen from the API. ``memory_shares`` is
the exception in both: it places as the allocator does (nodes in name order, on a node the
first device in slice order with room) and reads what shares consumed from the claims.

A workload may name a ``device_class``: then only devices its CEL selectors match count, for
every strategy, as the allocator evaluates them (:mod:`cel`; a class the local preview cannot
evaluate leaves the workload unplaced with the reason, never guessed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq
import re

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, device_taints, slice_devices, slices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, parse_quantity

DEFAULT_DRIVER = nvidia.DRA_DRIVER
WORKLOAD_KEYS = ("name", "replicas", "memory", "model", "device_class")
# Below this a memory figure is a slip (``memory: 4`` is four bytes), not a workload's need.
MIN_MEMORY = 2 ** 20
# ``memory: default``: a claim with no memory request, which gets what the device's request
# policy gives by default (NVIDIA's ConsumableShares: the whole card in mode memory, nothing in
# unlimited and N); the other answers then give each replica a device of its own.
NO_REQUEST = "default"

# The three strategies: which devices they use and whether one device holds several replicas.
STRATEGIES = (
    ("whole_gpu", {"type": "gpu", "noun": ("GPU", "GPUs"), "shares": False, "words": "with whole GPUs"}),
    ("shared", {"type": "gpu", "noun": ("GPU", "GPUs"), "shares": True, "words": "with sharing"}),
    ("mig", {"type": "mig", "noun": ("MIG device", "MIG devices"), "shares": False, "words": "with MIG"}),
)
MEMORY_SHARES = "memory_shares"
STRATEGY_NAMES = tuple(name for name, _rule in STRATEGIES) + (MEMORY_SHARES,)

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
    """A workload's memory as bytes (None for ``default``, no request); the message names the
    field and what to write."""
    if isinstance(value, str) and value.strip().lower() == NO_REQUEST:
        return None
    if value is None or isinstance(value, (bool, dict, list)) or str(value).strip() == "":
        _raise("%s is missing; set the GPU memory one replica needs, e.g. 4Gi (or default: a claim with no memory "
               "request)" % label)
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
    device_class = item.get("device_class")
    if device_class is not None:
        checks.append(lambda: inputs.dns_subdomain(label + ".device_class", device_class, "DeviceClass"))
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
                       "model": item["model"].strip() if item.get("model") is not None else None,
                       "device_class": item.get("device_class")})
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


def _need(workload):
    """What a replica asks for, in words."""
    return workload["memory"] if workload["memory_bytes"] is not None else "no memory request (a device's default)"


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


def _of_model(workload):
    return " of model %s" % workload["model"] if workload["model"] else ""


def _of_class(workload):
    return " of DeviceClass %s" % workload["device_class"] if workload.get("device_class") else ""


def reason(rule, workload, left, devices, used):
    """In words, why ``left`` replicas of ``workload`` found no device. The first cause that
    applies wins, from "nothing published" down to "the rest are taken by this plan"."""
    noun, model = rule["noun"], _of_model(workload) + _of_class(workload)
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


# --- memory shares: the allocator's way ---------------------------------------------------

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


def _acceptor(matches, keys, problem):
    """Does a candidate (with ``model`` and ``key``) suit the workload: its model and its DeviceClass?"""
    return lambda d: not problem and matches(d["model"]) and (keys is None or d["key"] in keys)


def _prepare(workloads, shares):
    """Each workload gets ``accepts`` (model and DeviceClass) and ``class_problem``."""
    for workload in workloads:
        matches, keys, workload["class_problem"] = model_matcher(workload["model"]), None, None
        if workload["device_class"]:
            keys, workload["class_problem"] = shares.class_keys(workload["device_class"])
        workload["accepts"] = _acceptor(matches, keys, workload["class_problem"])
    return workloads


def _shares_reason(workload, left, seen, sized):
    what = "device%s%s" % (_of_class(workload), _of_model(workload))
    if workload["class_problem"]:
        return workload["class_problem"]
    if not seen:
        return "no %s is published%s" % (what, "" if workload["device_class"] else " (type gpu)")
    if not sized:
        return ("needs %s, which no %s takes: a request above a device's memory or its requestPolicy's "
                "validRange.max is refused" % (_need(workload), what))
    return ("%d of %d replicas left over: no %s has room left for one more claim of %s (claims' consumedCapacity "
            "and earlier workloads)" % (left, workload["replicas"], what, _need(workload)))


# The node orders memory_shares is planned in: the answer's, and two others as a check.
NODE_ORDERS = ("name", "reverse", "spread")


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


def _inventory(devices):
    counts = {}
    for kind in ("gpu", "mig"):
        of_kind = candidates(devices, kind)
        counts[kind] = {"count": len(of_kind), "free": sum(1 for d in of_kind if d["free"])}
    return counts


def summary_line(requested, totals, with_shares=False):
    whole, shared, mig = totals["whole_gpu"], totals["shared"], totals["mig"]
    ratio = " (%.1fx)" % (float(shared) / whole) if whole else ""
    line = "%d replicas requested: %d fit with whole GPUs, %d with sharing%s, %d with MIG" % (
        requested, whole, shared, ratio, mig)
    if with_shares:
        line += ", %d with memory shares (the scheduler's accounting)" % totals[MEMORY_SHARES]
    return line


def plan(devices, workloads, shares=None):
    """The packing plan for flat ``devices`` (already filtered to one driver and the wanted nodes).

    ``workloads`` are checked first (:class:`inputs.InputError` names the bad field). ``shares``
    (:class:`Shares`, over the same devices as published) is what ``memory_shares`` and
    ``device_class`` need; without it, ``memory_shares`` places nothing.
    """
    parsed = parse_workloads(workloads)
    shares = shares or Shares([], [], [])
    missing = sorted(set(w["device_class"] for w in parsed if w["device_class"]) - set(shares.classes))
    if missing:
        raise inputs.InputError("workloads name DeviceClass %s, which the cluster does not have; use one of: %s"
                                % (", ".join(missing), ", ".join(sorted(shares.classes)) or "(none)"))
    _prepare(parsed, shares)
    strategies, unplaced, per_workload = {}, {}, {}
    for name, rule in STRATEGIES:
        strategies[name], per_workload[name], unplaced[name] = place(rule, candidates(devices, rule["type"]), parsed)
    strategies[MEMORY_SHARES], per_workload[MEMORY_SHARES], unplaced[MEMORY_SHARES] = place_shares(shares, parsed)
    requested = sum(w["replicas"] for w in parsed)
    rows = []
    for workload in parsed:
        row = {"name": workload["name"], "memory": workload["memory"], "model": workload["model"],
               "device_class": workload["device_class"], "requested": workload["replicas"]}
        row.update((name, per_workload[name][workload["name"]]) for name in STRATEGY_NAMES)
        rows.append(row)
    return {
        "strategies": strategies,
        "workloads": rows,
        "unplaced": unplaced,
        "requested": requested,
        "inventory": _inventory(devices),
        "summary": summary_line(requested, dict((name, strategies[name]["total"]) for name in STRATEGY_NAMES),
                                shares.any_shared),
    }


def from_slices(slice_list, claims, workloads, driver=DEFAULT_DRIVER, nodes=None, device_classes=None, rules=()):
    """The plan over slices, claims and DeviceClasses as the API returns them, plus the pools left out.

    ``nodes`` (unset or empty: every node) keeps only devices local to those nodes.
    """
    found = slices.report(slice_list, claims, slices.Filters(driver=driver, nodes=nodes), nodes or None, rules=rules)
    entries, _problems = slice_devices.selected_devices(slice_list, driver, nodes or None)
    result = plan(found["devices"], workloads, Shares(entries, claims, device_classes, rules))
    result["ignored_pools"] = [p for p in found["ignored_pools"] if p["driver"] == driver]
    return result
