# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Taking GPUs out of service and back through DeviceTaintRules, as data over listed objects.

A DeviceTaintRule (resource.k8s.io/v1, GA in Kubernetes 1.37) taints the devices its selector
names: ``NoSchedule`` keeps new claims off them, ``NoExecute`` also has kube-controller-manager's
device-taint eviction controller delete the pods whose claims use them. Its selector names a
driver, a pool and a device, nothing else (the CEL selectors of the alpha API are gone in v1),
so the devices chosen by UUID or attribute are resolved here from the ResourceSlices, and each
gets a rule of its own, named after its pool and device and labelled as ours: taking it back
into service deletes exactly those rules and never another's.

The eviction controller deletes pods without asking their PodDisruptionBudgets; a drain asks.
So the budgets are read here first, as the Eviction API would read them (drain_budgets.py):
one that allows no disruption for a pod on a chosen device stops the run before any change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import re

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import drain_budgets
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.nvidia import DRA_DRIVER as DRIVER

MANAGED_BY = ("app.kubernetes.io/managed-by", "dra.gpu.gpu_maintenance")
TAINT_KEY = "dra.gpu/maintenance"
EFFECTS = ("NoSchedule", "NoExecute")
# Names of the rules: DNS subdomains of at most 253 characters.
PREFIX = "dra-gpu-maintenance-"
PROBE_RULE = "dra-gpu-maintenance-probe"


class MaintenanceRefused(Exception):
    def __init__(self, message, **details):
        super(MaintenanceRefused, self).__init__(message)
        self.details = details


def _value(attribute):
    """A published attribute's value as a string, whatever its type (string, int, bool, version)."""
    for kind in ("string", "version", "int", "bool"):
        if kind in (attribute or {}):
            return str(attribute[kind]).lower() if kind == "bool" else str(attribute[kind])
    return None


def _text(value):
    """A selector's value as _value writes the published one: YAML's true is "true", not "True"."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _attribute(device, name):
    attributes = device.get("attributes") or {}
    return _value(attributes.get(name) or attributes.get("%s/%s" % (DRIVER, name)))


def published(slices, driver=DRIVER):
    """Every device ``driver`` publishes in the newest complete generation of its pool, as the
    scheduler sees them (slice_devices.selected_devices): {driver, pool, node, device, uuid, attributes}."""
    entries, _problems = slice_devices.selected_devices(slices, driver)
    return [{"driver": driver, "pool": item["spec"]["pool"]["name"], "node": node, "device": device["name"],
             "uuid": _attribute(device, "uuid"),
             "attributes": dict((k.split("/")[-1], _value(v)) for k, v in (device.get("attributes") or {}).items())}
            for item, device, node in entries]


def choose(devices, by_name=(), uuids=(), selector=None):
    """The published devices chosen by node and device name, by UUID or by attribute values (a
    mapping of attribute name to value, all of which must match). Raises MaintenanceRefused
    naming what matched nothing, before anything changes."""
    chosen, missing = {}, []
    for entry in by_name:
        hits = [d for d in devices if d["node"] == entry["node"] and d["device"] == entry["device"]]
        if not hits:
            missing.append("%s/%s" % (entry["node"], entry["device"]))
        chosen.update(((d["pool"], d["device"]), d) for d in hits)
    for uuid in uuids:
        hits = [d for d in devices if d["uuid"] == uuid]
        if not hits:
            missing.append("uuid %s" % uuid)
        chosen.update(((d["pool"], d["device"]), d) for d in hits)
    if selector:
        hits = [d for d in devices if all(d["attributes"].get(k) == _text(v) for k, v in selector.items())]
        if not hits:
            missing.append("selector %s" % ", ".join("%s=%s" % kv for kv in sorted(selector.items())))
        chosen.update(((d["pool"], d["device"]), d) for d in hits)
    if missing:
        raise MaintenanceRefused(
            "no device published by %s matches %s (see dra.gpu.resource_slice_info for the nodes, device names, "
            "UUIDs and attributes); nothing was changed" % (DRIVER, "; ".join(missing)), unmatched=missing)
    return [chosen[k] for k in sorted(chosen)]


def rule_name(pool, device):
    """``dra-gpu-maintenance-<pool>-<device>``, or with a hash where that would be too long or not
    a DNS subdomain (a pool name may hold characters a name may not)."""
    name = "%s%s-%s" % (PREFIX, pool, device)
    if len(name) <= 253 and re.match(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", name):
        return name
    return "%s%s" % (PREFIX, hashlib.sha256(("%s/%s" % (pool, device)).encode("utf-8")).hexdigest()[:16])


def rule(device, effect, reason):
    taint = {"key": TAINT_KEY, "effect": effect}
    if reason:
        taint["value"] = reason
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "DeviceTaintRule",
            "metadata": {"name": rule_name(device["pool"], device["device"]), "labels": dict([MANAGED_BY])},
            "spec": {"deviceSelector": {"driver": device["driver"], "pool": device["pool"], "device": device["device"]},
                     "taint": taint}}


def owned(rules):
    return [r for r in rules if ((r.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY[0]) == MANAGED_BY[1]]


def _same(existing, wanted):
    taint = dict(((existing.get("spec") or {}).get("taint") or {}))
    taint.pop("timeAdded", None)
    return (existing.get("spec") or {}).get("deviceSelector") == wanted["spec"]["deviceSelector"] and \
        taint == wanted["spec"]["taint"]


def plan(existing_rules, devices, state, effect="NoSchedule", reason=None):
    """{"create": [bodies], "update": [bodies], "delete": [names]}: what makes our rules take
    ``devices`` out of service (state out_of_service) or back (in_service: only our rules on
    them, or, with no devices, all of ours). A rule of the same name that is not ours is
    refused, never taken over."""
    by_name = dict((r["metadata"]["name"], r) for r in existing_rules)
    ours = set(r["metadata"]["name"] for r in owned(existing_rules))
    steps = {"create": [], "update": [], "delete": []}
    if state == "in_service":
        names = [rule_name(d["pool"], d["device"]) for d in devices] if devices else sorted(ours)
        steps["delete"] = sorted(n for n in names if n in ours)
        return steps
    for device in devices:
        wanted = rule(device, effect, reason)
        name = wanted["metadata"]["name"]
        current = by_name.get(name)
        if current is None:
            steps["create"].append(wanted)
        elif name not in ours:
            raise MaintenanceRefused("the DeviceTaintRule %s exists and is not this collection's (no label %s=%s); "
                                     "it was left alone and nothing was changed: rename or delete it"
                                     % (name, MANAGED_BY[0], MANAGED_BY[1]), foreign=[name])
        elif not _same(current, wanted):
            wanted["metadata"]["resourceVersion"] = current["metadata"].get("resourceVersion")
            steps["update"].append(wanted)
    return steps


def summary(rules):
    """Our rules as the diff shows them: {name: "<pool>/<device> <effect>"}."""
    return dict((r["metadata"]["name"], "%s/%s %s" % (r["spec"]["deviceSelector"].get("pool"),
                                                      r["spec"]["deviceSelector"].get("device"),
                                                      r["spec"]["taint"]["effect"])) for r in owned(rules))


def _key(result):
    return (result.get("driver"), result.get("pool"), result.get("device"))


def pods_on(devices, claims, pods):
    """The pods (namespace, name, node, device) whose claims hold one of ``devices``: the pods a
    claim allocated there is reserved for, by uid, that have not finished (a terminating pod still
    holds its device until its claim lets it go)."""
    wanted = set((d["driver"], d["pool"], d["device"]) for d in devices)
    holders = {}
    for claim in claims:
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        used = sorted(set(_key(r)[2] for r in results if _key(r) in wanted))
        if used:
            for consumer in status.get("reservedFor") or []:
                if consumer.get("resource") == "pods":
                    holders.setdefault(consumer.get("uid"), set()).update(
                        "%s/%s" % (r["pool"], r["device"]) for r in results if _key(r) in wanted)
    found = []
    for pod in pods:
        metadata = pod.get("metadata") or {}
        if metadata.get("uid") in holders and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            found.append({"namespace": metadata.get("namespace"), "name": metadata.get("name"),
                          "node": (pod.get("spec") or {}).get("nodeName"), "devices": sorted(holders[metadata["uid"]]),
                          "labels": metadata.get("labels") or {}, "uid": metadata.get("uid"),
                          "_pod": pod})
    return sorted(found, key=lambda p: (p["namespace"], p["name"]))


def refusing_budgets(budgets, holders):
    """The budgets (namespace/name) that would refuse to let a pod on the devices go."""
    return drain_budgets.blocking(budgets, [h["_pod"] for h in holders])


def plain(holder):
    return dict((k, holder[k]) for k in ("namespace", "name", "node", "devices"))


def probe_rule():
    """A DeviceTaintRule the dry run creates: it selects nothing that exists."""
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "DeviceTaintRule",
            "metadata": {"name": PROBE_RULE},
            "spec": {"deviceSelector": {"driver": DRIVER, "pool": PROBE_RULE, "device": "none"},
                     "taint": {"key": TAINT_KEY, "effect": "NoSchedule"}}}


def unserved(server_version, why):
    """The refusal on a cluster without resource.k8s.io/v1 DeviceTaintRules, with the fix."""
    minor = dra_features.first_on("device_taint_rules")
    return ("this cluster (%s) does not serve DeviceTaintRules in %s/%s (a server-side dry run of one was refused: %s). "
            "Taking one GPU out of service %s; 1.36's beta is v1beta2, which this collection does not use. "
            "Upgrade the cluster to 1.%d (dra.gpu.cluster_upgrade); until then, cordon the GPU's node to keep new "
            "pods off it. Nothing was changed."
            % (server_version, RESOURCE_GROUP, RESOURCE_VERSION, why, dra_features.needs("device_taint_rules"), minor))
