# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The taints a device carries, wherever they come from, as data over listed objects.

A device is tainted by its driver in its ResourceSlice (NVIDIA's health checks: gpu.nvidia.com/xid,
gpu-lost, unmonitored) and by every DeviceTaintRule whose selector names it (resource.k8s.io/v1,
Kubernetes 1.37+: driver, pool and device, each unset meaning any). The scheduler gives a claim
that tolerates none of them no device tainted NoSchedule or NoExecute; NoExecute also evicts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The effects that keep a claim without tolerations off the device.
BLOCKING = ("NoSchedule", "NoExecute")


def _plain(taint, rule=None):
    return {"key": taint.get("key"), "value": taint.get("value") or "", "effect": taint.get("effect"),
            "time_added": taint.get("timeAdded"), "rule": rule}


def _selects(selector, driver, pool, device):
    selector = selector or {}
    return all(selector.get(field) in (None, wanted)
               for field, wanted in (("driver", driver), ("pool", pool), ("device", device)))


def effective(driver, pool, device, rules=()):
    """The device's taints (a device as published): its own, then those of the rules that select
    it, each {key, value, effect, time_added, rule (the rule's name, None for the slice's own)}."""
    found = [_plain(t) for t in device.get("taints") or []]
    for rule in rules or []:
        spec = rule.get("spec") or {}
        if spec.get("taint") and _selects(spec.get("deviceSelector"), driver, pool, device.get("name")):
            found.append(_plain(spec["taint"], (rule.get("metadata") or {}).get("name")))
    return found


def blocks(taints):
    """Whether these taints keep new claims (without tolerations) off the device."""
    return any(t.get("effect") in BLOCKING for t in taints or [])


def describe(taint):
    """One taint in words, as the reports print it: key=value:Effect (rule name) since time."""
    text = "%s%s:%s" % (taint["key"], "=" + taint["value"] if taint.get("value") else "", taint["effect"])
    if taint.get("rule"):
        text += " (DeviceTaintRule %s)" % taint["rule"]
    if taint.get("time_added"):
        text += " since %s" % taint["time_added"]
    return text
