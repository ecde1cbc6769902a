# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many replicas of some workloads fit on the free GPUs, four ways: the plan. Pure functions.

Input: the flat devices of :func:`slice_devices.devices_from_slices` (so only the newest
complete generation of each pool counts) and a list of workloads (:mod:`fit_workloads` checks
them). Output: for each strategy, independently of the others, how many replicas fit per node
and in total, where, and what is left over and why:

- ``whole_gpu``, ``shared`` and ``mig`` (:mod:`fit_greedy`): a whole GPU per replica, a shared
  GPU holding ``floor(GPU memory / workload memory)`` replicas, a MIG device per replica; each
  workload in the order given takes the smallest free device that fits;
- ``memory_shares`` (:mod:`fit_memory_shares`): one ResourceClaim per replica asking
  ``capacity.requests.memory``, placed as the scheduler's allocator places it.

A workload may name a ``device_class``: then only devices its CEL selectors match count, for
every strategy, as the allocator evaluates them (:mod:`cel`; a class the local preview cannot
evaluate leaves the workload unplaced with the reason, never guessed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices, slices
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.sharing import fit_greedy, fit_memory_shares, fit_workloads

DEFAULT_DRIVER = nvidia.DRA_DRIVER
MEMORY_SHARES = "memory_shares"
STRATEGY_NAMES = tuple(name for name, _rule in fit_greedy.STRATEGIES) + (MEMORY_SHARES,)


def model_matcher(model):
    """Does a productName match the workload's ``model``? Case-insensitive substring, except that
    a match running on into more digits does not count: "A10" is not an A100, "L4" not an L40S."""
    if not model:
        return lambda product: True
    pattern = re.compile(re.escape(model.strip()) + r"(?!\d)", re.IGNORECASE)
    return lambda product: bool(product) and bool(pattern.search(product))


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


def _inventory(devices):
    counts = {}
    for kind in ("gpu", "mig"):
        of_kind = fit_greedy.candidates(devices, kind)
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
    (:class:`fit_memory_shares.Shares`, over the same devices as published) is what
    ``memory_shares`` and ``device_class`` need; without it, ``memory_shares`` places nothing.
    """
    parsed = fit_workloads.parse_workloads(workloads)
    shares = shares or fit_memory_shares.Shares([], [], [])
    missing = sorted(set(w["device_class"] for w in parsed if w["device_class"]) - set(shares.classes))
    if missing:
        raise inputs.InputError("workloads name DeviceClass %s, which the cluster does not have; use one of: %s"
                                % (", ".join(missing), ", ".join(sorted(shares.classes)) or "(none)"))
    _prepare(parsed, shares)
    strategies, unplaced, per_workload = {}, {}, {}
    for name, rule in fit_greedy.STRATEGIES:
        strategies[name], per_workload[name], unplaced[name] = fit_greedy.place(
            rule, fit_greedy.candidates(devices, rule["type"]), parsed)
    strategies[MEMORY_SHARES], per_workload[MEMORY_SHARES], unplaced[MEMORY_SHARES] = fit_memory_shares.place_shares(
        shares, parsed)
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
    result = plan(found["devices"], workloads, fit_memory_shares.Shares(entries, claims, device_classes, rules))
    result["ignored_pools"] = [p for p in found["ignored_pools"] if p["driver"] == driver]
    return result
