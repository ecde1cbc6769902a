# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workloads option of gpu_fit and gpu_packing_check: every entry checked with the field and
the fix named (one message lists all problems), parsed with defaults and memory in bytes, and
the words a leftover's reason uses for a workload's model and DeviceClass. Pure functions.

A workload is ``{name, memory, replicas, model, device_class}``: ``memory`` is what one replica
needs (a Kubernetes quantity, or ``default`` for a claim with no memory request), ``model`` part
of the GPU's product name, ``device_class`` a DeviceClass whose selectors choose the devices.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, parse_quantity

WORKLOAD_KEYS = ("name", "replicas", "memory", "model", "device_class")
# Below this a memory figure is a slip (``memory: 4`` is four bytes), not a workload's need.
MIN_MEMORY = 2 ** 20
# ``memory: default``: a claim with no memory request, which gets what the device's request
# policy gives by default (NVIDIA's ConsumableShares: the whole card in mode memory, nothing in
# unlimited and N); the other answers then give each replica a device of its own.
NO_REQUEST = "default"

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


def _workload_problems(label, item):
    """The problems with one workload entry."""
    if not isinstance(item, dict):
        return ["%s is %r; each workload is a mapping with name, memory, and optionally replicas and model, "
                "e.g. {name: web, memory: 4Gi, replicas: 2}" % (label, item)]
    problems = inputs.Problems()
    unknown = sorted(str(k) for k in set(item) - set(WORKLOAD_KEYS))
    if unknown:
        problems.add("%s has %s, which it does not know; use %s"
                     % (label, ", ".join(unknown), ", ".join(WORKLOAD_KEYS)))
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        shown = "missing" if name is None else "%r" % (name,)
        problems.add("%s.name is %s; give each workload a name, e.g. web" % (label, shown))
    problems.check(inputs.integer, label + ".replicas", item.get("replicas", 1), 1, "pods of this workload")
    problems.check(memory, label + ".memory", item.get("memory"))
    model = item.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        problems.add("%s.model is %r; write part of the GPU's product name, e.g. L4 or A100, or leave it out for "
                     "any model" % (label, model))
    device_class = item.get("device_class")
    if device_class is not None:
        problems.check(inputs.dns_subdomain, label + ".device_class", device_class, "DeviceClass")
    return problems.found


def input_problems(workloads, name="workloads"):
    """Every problem with the workloads option, for :func:`inputs.refuse` (one message lists them all)."""
    if not isinstance(workloads, list) or not workloads:
        return ["%s is %r; list at least one workload, e.g. [{name: web, memory: 4Gi, replicas: 2}]"
                % (name, workloads)]
    problems = inputs.Problems()
    for index, item in enumerate(workloads):
        problems.extend(_workload_problems("%s[%d]" % (name, index), item))
    names = [w.get("name") for w in workloads if isinstance(w, dict) and isinstance(w.get("name"), str)]
    problems.check(inputs.unique, name, names, "workload name")
    return problems.found


def parse_workloads(workloads, name="workloads"):
    """The workloads, checked, with defaults filled in and memory in bytes."""
    problems = input_problems(workloads, name)
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


# --- a workload in the words of a reason -------------------------------------------------------

def of_model(workload):
    """The words ' of model L4' when the workload names a model, else nothing."""
    return " of model %s" % workload["model"] if workload["model"] else ""


def of_class(workload):
    """The words ' of DeviceClass l4' when the workload names a DeviceClass, else nothing."""
    return " of DeviceClass %s" % workload["device_class"] if workload.get("device_class") else ""
