# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU sharing classes: what a user asks for (gpu_sharing_classes) -> DeviceClasses with NVIDIA's
opaque config, refused whole when any entry is wrong; what each strategy enforces, in words; and
the MPS classes NVIDIA's driver refuses while it shares GPUs by memory. Pure functions.

Each strategy (time_slicing, mps, mig, memory) selects its devices by CEL and carries the
config NVIDIA's driver reads for it; every rendered config is checked as the driver's kubelet
plugin would decode it (:mod:`opaque_config`) before anything is written, since the driver
checks it only when a pod starts.

Memory shares (strategy ``memory``) are another kind of sharing: NVIDIA's driver 0.5.0 with
ConsumableShares publishes each GPU with ``allowMultipleAllocations`` and its memory as capacity,
and every pod keeps its own claim (a ResourceClaimTemplate asking for ``capacity.requests.memory``,
:mod:`claim_templates`) while the scheduler packs claims onto one GPU. The class selects such GPUs
and carries no config, or a TimeSlicing one. Read on the driver's main branch at 95932046
(0.5.0-dev, standing in for the 0.5.0 tag): cmd/gpu-kubelet-plugin/consumable_shares.go and
device_state.go.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import human_bytes, to_bytes
from ansible_collections.dra.gpu.plugins.module_utils.sharing.opaque_config import (
    API_VERSION, GPU_CONFIG, MIG_CONFIG, parameter_problems, required_gates)

DRIVER = nvidia.DRA_DRIVER
MIG_PROFILE = re.compile(r"^[1-9]g\.[0-9]+gb(\+[a-z.]+|-me)?$")

# What memory shares are and are not, in words (the driver's device_state.go: MPS is refused at
# prepare time while ConsumableShares is on; claims on one device must carry the same config).
SHARES_ENFORCE = ("memory shares are scheduler accounting: the scheduler puts claims on a GPU until their "
                  "capacity.requests.memory adds up to its memory, and nothing caps the memory a pod really uses "
                  "on the GPU (nor its compute); pods sharing a GPU see all of it")
# NVIDIA's own words when it refuses to prepare an MPS claim while ConsumableShares is on (device_state.go, main).
MPS_WITH_SHARES = "MPS sharing is not supported when consumable shares is enabled"
SHARES_COMBINE = ("time-slicing combines with it (a memory class with an interval; the claims on one GPU must all "
                  "carry the same config, or the driver refuses to prepare the later one); MPS does not: with "
                  "ConsumableShares on, the driver refuses every MPS config when it prepares a claim (\"%s\")"
                  % MPS_WITH_SHARES)
SHARES_MODES = {"memory": "a claim without a memory request takes the whole GPU",
                "unlimited": "a claim without a memory request consumes none, so any number fit on one GPU"}


def shares_mode_words(mode):
    """What a ConsumableShares mode does with a claim that asks for no memory, in words."""
    return SHARES_MODES.get(mode) or ("at most %s claims per GPU (each takes one share unless it asks for more), "
                                      "and a claim without a memory request consumes none" % mode)


# The strategies a user can ask for, as data: the device type the class selects, the driver's
# strategy name, and what it enforces, in the words the smoke test and docs report.
STRATEGIES = {
    "time_slicing": {"device_type": "gpu", "driver_strategy": "TimeSlicing", "kind": GPU_CONFIG,
                     "enforces": "time-slicing: the pods take turns on the whole GPU; nothing limits the memory "
                                 "or compute one pod uses, and a fault in one can end the others' work"},
    "mps": {"device_type": "gpu", "driver_strategy": "MPS", "kind": GPU_CONFIG,
            "enforces": "MPS: the pods run concurrently through one MPS control daemon, which caps each "
                        "client's active threads and pinned device memory; no fault isolation"},
    "mig": {"device_type": "mig", "driver_strategy": None, "kind": MIG_CONFIG,
            "enforces": "MIG: each claim gets its own hardware partition with its own memory and compute; "
                        "pods sharing one partition's claim share it without limits"},
    "memory": {"device_type": "gpu", "driver_strategy": None, "kind": GPU_CONFIG,
               "enforces": "memory shares (each pod its own claim asking for capacity.requests.memory): %s; %s"
                           % (SHARES_ENFORCE, SHARES_COMBINE)},
}
# What selects a GPU that the driver shares by memory (published only with ConsumableShares on).
SHARED_SELECTOR = "device.allowMultipleAllocations"
_CLASS_FIELDS = {"name", "strategy", "interval", "mps", "profile", "selectors", "labels"}
_MPS_INPUT_FIELDS = {"active_thread_percentage", "pinned_memory_limit", "per_device_pinned_memory_limit"}


class SharingConfigError(ValueError):
    """A sharing class or config the driver would refuse; the message names it and the fix."""


# ----- a user's sharing classes -> DeviceClasses ----------------------------------------------

def _mps_parameters(mps, where, problems):
    if mps is None:
        return None
    if not isinstance(mps, dict):
        problems.append("%s.mps must be a map with %s" % (where, ", ".join(sorted(_MPS_INPUT_FIELDS))))
        return None
    for key in sorted(set(mps) - _MPS_INPUT_FIELDS):
        problems.append("%s.mps.%s is not a setting; write %s" % (where, key, ", ".join(sorted(_MPS_INPUT_FIELDS))))
    config = {}
    if mps.get("active_thread_percentage") is not None:
        config["defaultActiveThreadPercentage"] = mps["active_thread_percentage"]
    if mps.get("pinned_memory_limit") is not None:
        config["defaultPinnedDeviceMemoryLimit"] = str(mps["pinned_memory_limit"])
    per_device = mps.get("per_device_pinned_memory_limit")
    if per_device and not isinstance(per_device, dict):
        problems.append("%s.mps.per_device_pinned_memory_limit is %r; write a map of device index or UUID to a "
                        "limit, e.g. {\"0\": 8Gi}" % (where, per_device))
    elif per_device:
        config["defaultPerDevicePinnedMemoryLimit"] = {str(k): str(v) for k, v in per_device.items()}
    return config


def class_parameters(entry, where):
    """(parameters or None, problems) for one entry of gpu_sharing_classes."""
    problems = []
    strategy = entry.get("strategy")
    if strategy == "memory":
        if "mps" in entry:
            problems.append("%s.mps does not combine with strategy memory: NVIDIA's driver refuses MPS while it shares "
                            "GPUs by memory (\"%s\"); remove mps, or set interval for time-slicing" % (where, MPS_WITH_SHARES))
        if entry.get("interval") is None:
            return None, problems
        sharing = {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": entry["interval"]}}
        return {"apiVersion": API_VERSION, "kind": GPU_CONFIG, "sharing": sharing}, problems
    if strategy == "time_slicing":
        if "mps" in entry:
            problems.append("%s.mps applies to strategy mps (or mig), not time_slicing" % where)
        sharing = {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": entry.get("interval") or "Default"}}
        return {"apiVersion": API_VERSION, "kind": GPU_CONFIG, "sharing": sharing}, problems
    if "interval" in entry:
        problems.append("%s.interval applies to strategies time_slicing and memory only" % where)
    mps = _mps_parameters(entry.get("mps"), where, problems)
    if strategy == "mps":
        sharing = {"strategy": "MPS", "mpsConfig": mps or {}}
        return {"apiVersion": API_VERSION, "kind": GPU_CONFIG, "sharing": sharing}, problems
    # MIG: the partition is the isolation; MPS on top is optional, as the driver allows.
    if mps is not None:
        return {"apiVersion": API_VERSION, "kind": MIG_CONFIG,
                "sharing": {"strategy": "MPS", "mpsConfig": mps}}, problems
    return None, problems


def class_selectors(entry):
    """CEL selectors of a sharing class: the device type, the MIG profile, the user's extras."""
    kind = STRATEGIES[entry["strategy"]]["device_type"]
    base = "device.driver == '%s' && device.attributes['%s'].type == '%s'" % (DRIVER, DRIVER, kind)
    if entry.get("profile"):
        base += " && device.attributes['%s'].profile == '%s'" % (DRIVER, entry["profile"])
    if entry["strategy"] == "memory":
        base += " && " + SHARED_SELECTOR
    return [base] + list(entry.get("selectors") or [])


def entry_problems(entry, where):
    """Input problems of one class entry that need no cluster."""
    if not isinstance(entry, dict):
        return ["%s must be a map with name and strategy" % where]
    problems = ["%s.%s is not a setting of a sharing class; known: %s" % (where, key, ", ".join(sorted(_CLASS_FIELDS)))
                for key in sorted(set(entry) - _CLASS_FIELDS)]
    if not entry.get("name"):
        problems.append("%s.name is missing; name the DeviceClass, e.g. nvidia-gpu-mps" % where)
    if entry.get("strategy") not in STRATEGIES:
        problems.append("%s.strategy is %r; write one of %s" % (where, entry.get("strategy"), ", ".join(sorted(STRATEGIES))))
        return problems
    if entry["strategy"] == "mig":
        if not entry.get("profile"):
            problems.append("%s.profile is missing: a mig class selects one MIG profile, e.g. 1g.10gb" % where)
        elif not MIG_PROFILE.match(str(entry["profile"])):
            problems.append("%s.profile is %r, not a MIG profile name like 1g.10gb or 3g.40gb" % (where, entry["profile"]))
    elif entry.get("profile"):
        problems.append("%s.profile applies to strategy mig only" % where)
    return problems


def device_classes(entries, managed_labels=None, root="gpu_sharing_classes"):
    """Validate every entry, then return (classes for dra.gpu.device_class, gates needed).

    Raises SharingConfigError naming every problem at once, so nothing is half-applied.
    """
    problems, classes, gates, seen = [], [], set(), set()
    for index, entry in enumerate(entries or []):
        where = "%s[%d]" % (root, index)
        found = entry_problems(entry, where)
        name = entry.get("name") if isinstance(entry, dict) else None
        # An entry without a name is reported by entry_problems, not as a duplicate.
        if name is not None and name in seen:
            found.append("%s.name %s is listed twice" % (where, name))
        seen.add(name)
        if not found:
            parameters, found = class_parameters(entry, where)
            if parameters is not None and not found:
                found = ["%s: %s (the driver would refuse it when a pod starts)" % (where, p)
                         for p in parameter_problems(parameters)]
                gates.update(required_gates(parameters))
        problems += found
        if found:
            continue
        body = {"name": entry["name"], "selectors": class_selectors(entry),
                "labels": dict(entry.get("labels") or {}, **(managed_labels or {})),
                "strategy": entry["strategy"], "profile": entry.get("profile"),
                "enforces": STRATEGIES[entry["strategy"]]["enforces"]}
        if parameters is not None:
            body["config"] = [{"opaque": {"driver": DRIVER, "parameters": parameters}}]
        classes.append(body)
    if problems:
        raise SharingConfigError("; ".join(problems))
    return classes, sorted(gates)


def memory_problems(classes, devices, root="gpu_sharing_classes"):
    """An MPS pinned-memory limit above the memory of every device the class selects can never
    be honoured; refuse it naming the largest device. ``devices`` are inventory devices."""
    problems = []
    for index, body in enumerate(classes):
        for config in body.get("config") or []:
            mps = ((config["opaque"]["parameters"].get("sharing") or {}).get("mpsConfig") or {})
            limit = mps.get("defaultPinnedDeviceMemoryLimit")
            kind = STRATEGIES[body["strategy"]]["device_type"]
            sizes = [to_bytes(d["capacity"]["memory"]) for d in devices
                     if d["attributes"].get("type") == kind and d["capacity"].get("memory")]
            if limit is None or not sizes:
                continue
            if to_bytes(limit) > max(sizes):
                problems.append("%s (%s): mps.pinned_memory_limit %s is more than the largest %s device has (%s); "
                                "lower it to at most %s" % ("%s[%d]" % (root, index), body["name"], limit,
                                                            kind.upper(), human_bytes(max(sizes)), human_bytes(max(sizes))))
    return problems


# ----- MPS classes, which the driver refuses while it shares GPUs by memory -------------------

def _asks_for_mps(config):
    """Whether a DeviceClass's ``config`` list holds an opaque config for NVIDIA's driver that asks
    for MPS (a GpuConfig's or a MigDeviceConfig's ``sharing``)."""
    for entry in config or []:
        opaque = (entry or {}).get("opaque") or {}
        if opaque.get("driver") == DRIVER and \
                ((opaque.get("parameters") or {}).get("sharing") or {}).get("strategy") == "MPS":
            return True
    return False


def mps_classes(classes):
    """The names of the DeviceClasses (as the API returns them) whose opaque config for NVIDIA's
    driver asks for MPS, directly or inside a MIG partition."""
    return sorted(body["metadata"]["name"] for body in classes or []
                  if _asks_for_mps((body.get("spec") or {}).get("config")))


def live_mps_refusal(classes, variable):
    """Before ConsumableShares is turned on: the live DeviceClasses (as the API returns them) that
    carry MPS, whose pods the driver would stop preparing, as one refusal naming ``variable``, or None."""
    names = mps_classes(classes)
    if not names:
        return None
    one = len(names) == 1
    return ("%s: DeviceClass %s carr%s an MPS sharing config, which NVIDIA's DRA driver refuses to prepare while "
            "ConsumableShares is on (\"%s\"), so their pods would stop starting; remove %s first (dra.gpu.gpu_sharing "
            "without mps classes), or leave the mode off"
            % (variable, ", ".join(names), "ies" if one else "y", MPS_WITH_SHARES, "it" if one else "them"))


def mps_problem(classes, modes):
    """With the driver sharing GPUs by memory (``modes``: the ConsumableShares modes its plugins
    run in), an MPS class of ``classes`` (device_classes' bodies) could never start a pod: one
    sentence naming them, or None."""
    names = [c["name"] for c in classes if _asks_for_mps(c.get("config"))]
    if not names or not modes:
        return None
    return ("%s ask%s for MPS, but NVIDIA's DRA driver runs ConsumableShares (%s) and refuses every MPS config when it "
            "prepares a claim (\"%s\"): remove %s, or leave gpu_operator_dra_consumable_shares empty"
            % (", ".join(names), "s" if len(names) == 1 else "", ", ".join(modes), MPS_WITH_SHARES,
               "it" if len(names) == 1 else "them"))
