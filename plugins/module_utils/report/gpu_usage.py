# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who holds which GPU, which allocations sit idle, and what is still free. Pure functions.

Input: lists as the API returns them (ResourceSlices, ResourceClaims, Pods, Nodes,
DeviceClasses), so the answer needs only get/list on those. Output: the usage dict that
``usage_report`` renders (its shape is documented in the module ``gpu_usage_info``).

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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, device_taints, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes as node_facts
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes

DEFAULT_DRIVER = nvidia.DRA_DRIVER
# The scheduler writes a claim's allocation and reservations; its status write is the best
# trace of when an allocation happened when the alpha allocationTimestamp is not set.
SCHEDULER_MANAGER = "kube-scheduler"


# --- time --------------------------------------------------------------------------------

def parse_time(text):
    """An RFC 3339 timestamp as the API writes it ("2026-12-05T15:40:00Z") -> aware datetime."""
    if not text:
        return None
    try:
        # The API writes UTC with a Z, to the second (microseconds in managedFields are dropped).
        return datetime.datetime.strptime(text[:19] + "+0000", "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


def format_time(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _age(since, now):
    return None if since is None else max(0, int((now - since).total_seconds()))


# --- pods --------------------------------------------------------------------------------

def owner_of(pod):
    """The workload a person manages for ``pod``, from the pod alone (no get on ReplicaSets or
    Jobs needed): a ReplicaSet named <deployment>-<pod-template-hash> is its Deployment's."""
    owner = gpu_workloads.controller_of(pod)
    if owner is None:
        return None
    kind, name = owner[0], owner[1] or ""
    template_hash = ((pod.get("metadata") or {}).get("labels") or {}).get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith("-" + template_hash):
        return {"kind": "Deployment", "name": name[:-len(template_hash) - 1]}
    return {"kind": kind, "name": name}


def _waiting_reason(pod):
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        reason = ((status.get("state") or {}).get("waiting") or {}).get("reason")
        if reason:
            return reason
    return None


def pod_entry(pod):
    meta, status = pod["metadata"], pod.get("status") or {}
    return {"namespace": meta.get("namespace"), "name": meta.get("name"), "phase": status.get("phase") or "Pending",
            "terminating": bool(meta.get("deletionTimestamp")), "owner": owner_of(pod),
            "node": (pod.get("spec") or {}).get("nodeName"), "waiting": _waiting_reason(pod)}


def runs(pod):
    """A pod that uses its devices now: Running and not being deleted."""
    return pod["phase"] == "Running" and not pod["terminating"]


def why_not_running(pod):
    name = "%s/%s" % (pod["namespace"], pod["name"])
    if pod["terminating"]:
        return "pod %s is Terminating" % name
    if pod["phase"] in ("Succeeded", "Failed"):
        return "pod %s has %s and the claim is not yet released" % (name, pod["phase"])
    return "pod %s is %s%s" % (name, pod["phase"], " (%s)" % pod["waiting"] if pod["waiting"] else "")


def _scheduled_at(pod):
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None


# --- claims ------------------------------------------------------------------------------

def _results(claim, driver):
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return [r for r in results if r.get("driver") == driver]


def generated_for_pod(claim):
    """True for a claim the controller made from a template for one pod (it owns it)."""
    return any(ref.get("kind") == "Pod" and ref.get("controller")
               for ref in (claim.get("metadata") or {}).get("ownerReferences") or [])


def _scheduler_status_write(claim):
    times = [parse_time(entry.get("time")) for entry in (claim.get("metadata") or {}).get("managedFields") or []
             if entry.get("manager") == SCHEDULER_MANAGER and entry.get("subresource") == "status"]
    times = [t for t in times if t]
    return min(times) if times else None


def allocated_since(claim, reserved_pods):
    """When the claim was allocated, and how that was found (the API does not always say)."""
    stamp = parse_time(((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp"))
    if stamp:
        return stamp, "allocationTimestamp"
    scheduled = [t for t in (_scheduled_at(p) for p in reserved_pods) if t]
    if scheduled:
        return min(scheduled), "pod scheduled"
    written = _scheduler_status_write(claim)
    if written:
        return written, "scheduler's status write"
    return parse_time(claim["metadata"].get("creationTimestamp")), "claim created"


def claim_entry(claim, pods_by_key, now):
    """An allocated claim: its devices, the pods it is reserved for, in use or idle and why."""
    meta = claim["metadata"]
    namespace = meta.get("namespace")
    reserved, missing = [], []
    for ref in (claim.get("status") or {}).get("reservedFor") or []:
        if ref.get("resource", "pods") != "pods":
            continue
        pod = pods_by_key.get((namespace, ref.get("name")))
        if pod is None or (ref.get("uid") and pod["metadata"].get("uid") != ref.get("uid")):
            missing.append(ref.get("name"))
        else:
            reserved.append(pod)
    pods = [pod_entry(p) for p in reserved]
    since, source = allocated_since(claim, reserved)
    state, reason = "in_use", None
    if not any(runs(p) for p in pods):
        state = "idle"
        reasons = [why_not_running(p) for p in pods] + ["pod %s/%s is gone" % (namespace, n) for n in missing]
        reason = "; ".join(reasons) if reasons else "allocated, but reserved for no pod"
    return {"namespace": namespace, "name": meta.get("name"), "shared": not generated_for_pod(claim),
            "state": state, "devices": [], "pods": pods,
            "since": format_time(since) if since else None, "age_seconds": _age(since, now),
            "since_source": source if since else None, "idle_reason": reason}


# --- devices and free capacity -------------------------------------------------------------

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


# --- the whole answer ----------------------------------------------------------------------

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


def _device_row(item, device, holders, held, is_free, taints=()):
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


def _room(device, held, is_free, cache):
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
        results = _results(claim, driver)
        if not results:
            continue
        entry = claim_entry(claim, pods_by_key, now)
        allocated_claims.append(entry)
        for result in results:
            claims_of_device.setdefault((result.get("pool"), result.get("device")), []).append((entry, result))

    counters = Counters(entries)
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
        room = _room(device, held, is_free, capacities)
        node_rows.setdefault(node_name, []).append(_device_row(item, device, holders, held, is_free, taints))
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
    return {"generated_at": format_time(now), "driver": driver, "summary": _summary(node_list, allocated_claims),
            "nodes": node_list, "claims": allocated_claims, "idle": idle,
            "by_namespace": _by_namespace(allocated_claims), "by_node_model": _by_node_model(node_list),
            "free_by_class": free_by_class(device_classes, classified, driver), "notes": notes}
