# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a smoke test's result proves a GPU: the allocation, what the probe saw, the
expectations, the sharing the claim was prepared with; and the module's result of a verified run.

Pure functions over plain dicts; smoke_run.py's verification calls them in turn.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints
from ansible_collections.dra.gpu.plugins.module_utils.sharing import opaque_config, sharing_config
from ansible_collections.dra.gpu.plugins.module_utils.dra.slice_devices import plain_attribute
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, parse_quantity
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure

# What each probe prints, and how its output is matched against the allocation.
PROBES = {
    # nvidia-smi -L: "GPU 0: NVIDIA A10 (UUID: GPU-...)" and "  MIG 1g.5gb Device 0: (UUID: MIG-...)"
    "nvidia": {"pattern": r"\(UUID: ((?:GPU|MIG)-[0-9a-fA-F-]+)\)", "attribute": "uuid"},
    # dra-example-driver: GPU_DEVICE_0=gpu-0
    "example": {"pattern": r"^GPU_DEVICE_\d+=(\S+)\s*$", "attribute": None},
}


def chosen_alternative(results):
    """The firstAvailable alternative the scheduler chose ("gpu/alt1" -> "alt1"), or None."""
    for result in results:
        if "/" in (result.get("request") or ""):
            return result["request"].split("/", 1)[1]
    return None


def check_allocation(pod, claim, slices, driver, rules=()):
    """Every allocated device exists in a slice of ``driver`` on the pod's node, is not tainted
    NoSchedule/NoExecute (by its driver's health check or a DeviceTaintRule in ``rules``), and the
    claim is reserved for the pod. Returns the allocated devices with their attributes."""
    node = pod["spec"].get("nodeName")
    results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
    if not results:
        raise SmokeFailure("not_allocated", "claim %s has no allocation" % claim["metadata"]["name"])
    reserved = [r.get("name") for r in (claim.get("status") or {}).get("reservedFor") or []]
    if pod["metadata"]["name"] not in reserved:
        raise SmokeFailure("not_reserved", "claim %s is not reserved for pod %s (reserved for: %s)"
                           % (claim["metadata"]["name"], pod["metadata"]["name"], ", ".join(reserved) or "nobody"))
    published = {}
    for item in slices:
        spec = item.get("spec") or {}
        for device in spec.get("devices") or []:
            published[(spec.get("driver"), spec["pool"]["name"], device["name"])] = (spec.get("nodeName"), device)
    devices = []
    for result in results:
        key = (result.get("driver"), result.get("pool"), result.get("device"))
        if result.get("driver") != driver:
            raise SmokeFailure("wrong_driver", "device %s was allocated by driver %s, expected %s"
                               % (result.get("device"), result.get("driver"), driver))
        if key not in published:
            raise SmokeFailure("unknown_device", "allocated device %s/%s/%s is in no ResourceSlice" % key)
        slice_node, device = published[key]
        if slice_node and slice_node != node:
            raise SmokeFailure("wrong_node", "device %s is published by node %s but the pod runs on %s"
                               % (result.get("device"), slice_node, node))
        taints = device_taints.effective(result["driver"], result["pool"], device, rules)
        if device_taints.blocks(taints):
            # A pass on a GPU out of service would prove nothing about the GPUs users get.
            raise SmokeFailure("tainted_device", "device %s on node %s is tainted (%s): it is out of service, so the "
                               "smoke test does not pass on it; repair it (docs/maintenance.md) or choose other GPUs "
                               "(smoke_test_selectors, smoke_test_node_selector)"
                               % (result.get("device"), node, "; ".join(device_taints.describe(t) for t in taints)))
        attributes = dict((k, plain_attribute(v)) for k, v in (device.get("attributes") or {}).items())
        devices.append({"driver": result["driver"], "pool": result["pool"], "name": result["device"],
                        "request": result.get("request"), "node": node, "attributes": attributes,
                        "capacity": dict((k, (v or {}).get("value")) for k, v in (device.get("capacity") or {}).items())})
    return devices


def probe_output(pod):
    """The probe's termination message (the container's own report)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (status.get("state") or {}).get("terminated") or {}
        if terminated.get("message"):
            return terminated["message"]
    return ""


def check_container(output, devices, probe, pattern=None, attribute=None):
    """The probe saw exactly the allocated devices, and no other GPU."""
    if probe in PROBES:
        pattern, attribute = PROBES[probe]["pattern"], PROBES[probe]["attribute"]
    seen = re.findall(pattern, output or "", flags=re.MULTILINE)
    if not seen:
        raise SmokeFailure("probe_output", "the probe printed no device the verification recognises "
                           "(pattern %s); its output was: %s" % (pattern, (output or "(empty)").strip()[:1000]))
    expected = set()
    for device in devices:
        value = device["name"] if attribute is None else device["attributes"].get(attribute)
        expected.add(value)
        if probe == "nvidia" and device["attributes"].get("parentUUID"):
            # nvidia-smi -L lists the parent GPU above its MIG devices.
            expected.add(device["attributes"]["parentUUID"])
    seen = set(seen)
    extra, missing = sorted(seen - expected), sorted(expected - seen)
    if missing and extra:
        raise SmokeFailure("mismatch", "the container sees %s but was allocated %s" % (
            ", ".join(extra), ", ".join(missing)), seen=sorted(seen), expected=sorted(expected))
    if extra:
        raise SmokeFailure("extra_devices", "the container sees devices it was not allocated: %s (a runtime or "
                           "image that exposes every GPU, e.g. NVIDIA_VISIBLE_DEVICES=all?)" % ", ".join(extra),
                           seen=sorted(seen), expected=sorted(expected))
    if missing:
        raise SmokeFailure("missing_devices", "the container does not see allocated devices: %s"
                           % ", ".join(missing), seen=sorted(seen), expected=sorted(expected))
    return sorted(seen)


def check_expectations(devices, expect):
    """``expect``: product_contains, min_memory, attributes (exact values)."""
    problems = []
    for device in devices:
        attrs = device["attributes"]
        if expect.get("product_contains") and expect["product_contains"] not in str(attrs.get("productName", "")):
            problems.append("%s is a %s, not a %s"
                            % (device["name"], attrs.get("productName"), expect["product_contains"]))
        if expect.get("min_memory"):
            try:
                have = parse_quantity(device["capacity"].get("memory") or "0")
                want = parse_quantity(expect["min_memory"])
            except QuantityError as exc:
                raise SmokeFailure("bad_input", "expect.min_memory: %s" % exc)
            if have < want:
                problems.append("%s has %s of memory, less than %s"
                                % (device["name"], device["capacity"].get("memory"), expect["min_memory"]))
        for key, value in (expect.get("attributes") or {}).items():
            if str(attrs.get(key)) != str(value):
                problems.append("%s has %s=%s, expected %s" % (device["name"], key, attrs.get(key), value))
    if problems:
        raise SmokeFailure("expectation", "allocated devices do not meet expectations: " + "; ".join(problems))


def claim_names(pod):
    """Names of the ResourceClaims ``pod`` uses, generated (from its status) and named (in its spec)."""
    names = [s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []]
    names += [r.get("resourceClaimName") for r in pod["spec"].get("resourceClaims") or []]
    return [name for name in names if name]


def add_devices(devices, allocated):
    """Append to ``devices`` those of ``allocated`` it does not hold yet (one pool and name each)."""
    for device in allocated:
        if (device["pool"], device["name"]) not in [(d["pool"], d["name"]) for d in devices]:
            devices.append(device)


def run_result(pods, devices, outputs, chosen, seen_by_pod, sharing):
    """The module's result of a verified run (timings and namespace are added by the run)."""
    nodes = sorted(set(p["spec"].get("nodeName") for p in pods))
    shared = {"pods": len(pods), "same_devices": len(seen_by_pod) > 1,
              "seen": sorted(set(i for ids in seen_by_pod.values() for i in ids))} if len(pods) > 1 else None
    return {"node": nodes[0] if len(nodes) == 1 else nodes, "devices": devices,
            "first_available_choice": chosen, "probe_outputs": outputs, "shared": shared, "sharing": sharing}


# ----- shared claims ---------------------------------------------------------------------
# What NVIDIA's plugin puts into every container of an MPS claim (its CDI edits): the pipe
# directory of the claim's MPS control daemon. The limits are set in that daemon, not here.
MPS_PIPE_VARIABLE = "CUDA_MPS_PIPE_DIRECTORY"
_STRATEGY_KEYS = {"TimeSlicing": "time_slicing", "MPS": "mps"}
NOT_SHARED = "exclusive: one claim, its devices used as a whole (nothing else shares them)"


def effective_sharing(claim, driver):
    """The sharing config NVIDIA's plugin applies to the claim, read from the allocation as
    the driver reads it: class configs first, the claim's own after them, the last wins."""
    entries = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("config") or []
    ordered = [e for e in entries if e.get("source") == "FromClass"] + \
              [e for e in entries if e.get("source") == "FromClaim"]
    found = None
    for entry in ordered:
        opaque = entry.get("opaque") or {}
        if opaque.get("driver") == driver and (opaque.get("parameters") or {}).get("sharing"):
            found = {"source": entry.get("source"), "parameters": opaque["parameters"]}
    if found is None:
        return {"strategy": None, "source": None, "parameters": None, "enforces": NOT_SHARED}
    strategy = found["parameters"]["sharing"].get("strategy")
    key = "mig" if found["parameters"].get("kind") == opaque_config.MIG_CONFIG else _STRATEGY_KEYS.get(strategy)
    enforces = sharing_config.STRATEGIES[key]["enforces"] if key else "unknown strategy %r" % strategy
    if key == "mig" and strategy == "MPS":
        enforces += "; MPS inside the partition caps each client as configured"
    return dict(found, strategy=strategy, enforces=enforces)


def check_same_devices(seen_by_pod):
    """Every pod of a shared claim saw the same devices. ``seen_by_pod``: {pod: [ids]}."""
    distinct = set(tuple(ids) for ids in seen_by_pod.values())
    if len(distinct) > 1:
        raise SmokeFailure("not_shared", "the pods of one shared claim saw different devices: %s" % "; ".join(
            "%s: %s" % (pod, ", ".join(ids)) for pod, ids in sorted(seen_by_pod.items())), seen=seen_by_pod)


def check_mps(output, pod):
    """The container of an MPS claim was connected to the claim's MPS control daemon."""
    if not re.search(r"^%s=\S+" % MPS_PIPE_VARIABLE, output or "", flags=re.MULTILINE):
        raise SmokeFailure("mps_not_connected", "the claim is prepared with MPS but pod %s has no %s, so its CUDA "
                           "work would not go through the MPS control daemon and its limits; print the variable in "
                           "the probe (the default command does) or check the driver's MPSSupport gate"
                           % (pod, MPS_PIPE_VARIABLE))
