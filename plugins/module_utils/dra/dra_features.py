# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DRA features of each Kubernetes version, written once (pure; no cluster access).

The table is the gate defaults per minor from Kubernetes' own versioned gate specs (dra-facts.md):
what an upgrade's target will turn on, which cannot be probed. What the running API server
serves is probed (dra_probes.py: server-side dry runs, because a gate can be turned on or off
by hand); ``report`` puts both side by side. The roles that need a feature say what they need
from here (``needs``), so every refusal reads "needs Kubernetes 1.36+ or the feature gate X".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ALPHA, BETA, GA = "alpha", "beta", "GA"
# feature -> (gate, what it is, {minor: (stage, on by default)}), in the order reports list them.
# DeviceTaintRules are counted "on" only where resource.k8s.io/v1 serves them (1.37): 1.36's beta is
# v1beta2 and off, and this collection uses v1 only, so no gate makes them usable below 1.37.
FEATURES = (
    ("prioritized_list", "DRAPrioritizedList", "prioritized list (firstAvailable)",
     {35: (BETA, True), 36: (GA, True), 37: (GA, True)}),
    ("admin_access", "DRAAdminAccess", "admin access (adminAccess)",
     {35: (BETA, True), 36: (GA, True), 37: (GA, True)}),
    ("partitionable_devices", "DRAPartitionableDevices", "partitionable devices (sharedCounters)",
     {35: (ALPHA, False), 36: (BETA, True), 37: (BETA, True)}),
    ("consumable_capacity", "DRAConsumableCapacity", "consumable capacity (capacity.requests, memory shares)",
     {35: (ALPHA, False), 36: (BETA, True), 37: (BETA, True)}),
    ("device_taints", "DRADeviceTaints", "device taints in ResourceSlices",
     {35: (ALPHA, False), 36: (BETA, True), 37: (GA, True)}),
    ("device_taint_rules", "DRADeviceTaintRules", "DeviceTaintRules in resource.k8s.io/v1",
     {35: (ALPHA, False), 36: (BETA, False), 37: (GA, True)}),
    ("extended_resource", "DRAExtendedResource", "extended resource (DeviceClass extendedResourceName)",
     {35: (ALPHA, False), 36: (BETA, True), 37: (GA, True)}),
    ("device_status", "DRAResourceClaimDeviceStatus", "device status (ResourceClaim status.devices)",
     {35: (BETA, True), 36: (BETA, True), 37: (GA, True)}),
)
NAMES = tuple(f[0] for f in FEATURES)
_BY_NAME = dict((f[0], f) for f in FEATURES)
# Features whose gate cannot make them usable below the first minor that serves them.
NO_GATE_BELOW = ("device_taint_rules",)
# ResourceClaim status.devices cannot be probed without writing a claim's status.
NOT_PROBED = ("device_status",)
# Where a gate must be on for a feature to work, not only on the API server.
COMPONENTS = "kube-apiserver, kube-scheduler, kube-controller-manager and every kubelet"


def gate(name):
    return _BY_NAME[name][1]


def title(name):
    return _BY_NAME[name][2]


def default(name, minor):
    """(stage, on by default) of a feature at ``minor`` (an int, 35), or None outside the table."""
    return _BY_NAME[name][3].get(minor)


def first_on(name):
    """The first minor of the table where the feature is on by default."""
    return min(m for m, (_stage, on) in _BY_NAME[name][3].items() if on)


def stages(name):
    """'alpha and off by default in 1.35, beta and on in 1.36, GA and on in 1.37'."""
    parts = []
    for minor, (stage, on) in sorted(_BY_NAME[name][3].items()):
        parts.append("%s and %s%s in 1.%d" % (stage, "on" if on else "off", " by default" if not parts else "", minor))
    return ", ".join(parts)


def needs(name):
    """What a role that needs the feature says when it is off: 'needs Kubernetes 1.36+ or the
    feature gate DRAConsumableCapacity on kube-apiserver, ...'."""
    minimum = "Kubernetes 1.%d+" % first_on(name)
    if name in NO_GATE_BELOW:
        return "needs %s (%s: %s)" % (minimum, gate(name), stages(name))
    return "needs %s or the feature gate %s on %s (%s)" % (minimum, gate(name), COMPONENTS, stages(name))


def expected(minor):
    """{feature: {on, stage, gate}} that Kubernetes 1.<minor> turns on by default; on None where the
    table does not know the minor (older than 1.35 or newer than the newest tested)."""
    found = {}
    for name in NAMES:
        known = default(name, minor)
        found[name] = {"gate": gate(name), "stage": known[0] if known else None, "on": known[1] if known else None}
    return found


def report(server_minor, probed, target_minor=None):
    """Per feature, in table order: what the running server serves (``probed``, None where it was
    not probed: the version's default then), its version's default, and the target's default.
    ``flipped`` marks a gate set against its version's default (the probe follows the gate)."""
    rows = []
    for name in NAMES:
        running = default(name, server_minor)
        live = (probed or {}).get(name) or {}
        on = live.get("on")
        how = live.get("how") or ("not probed (%s): the default of 1.%d" % (
            "a claim's status cannot be written in a dry run" if name in NOT_PROBED else "no probe ran",
            server_minor))
        if on is None:
            on = running[1] if running else None
        target = default(name, target_minor) if target_minor is not None else None
        rows.append({"name": name, "title": title(name), "gate": gate(name), "on": on, "how": how,
                     "probed": live.get("on") is not None,
                     "default": running[1] if running else None, "stage": running[0] if running else None,
                     "flipped": live.get("on") is not None and running is not None and live["on"] != running[1],
                     "target_on": target[1] if target else None, "target_stage": target[0] if target else None})
    return rows


def lines(server_version, target_version, rows):
    """Sentences a person reads: one per feature, the running server and the target."""
    said = []
    for row in rows:
        now = {True: "on", False: "off", None: "unknown"}[row["on"]]
        flipped = ", gate %s set against the version's default" % row["gate"] if row["flipped"] else ""
        target = {True: "on", False: "off", None: "not known"}[row["target_on"]]
        stage = " (%s)" % row["target_stage"] if row["target_stage"] else ""
        said.append("%s - %s: %s%s (%s); %s: %s%s" % (
            row["title"], server_version, now, flipped, row["how"], target_version, target, stage))
    return said


def served(rows, name):
    """The running server's answer for one feature of ``report``'s rows (None: unknown)."""
    return [r for r in rows if r["name"] == name][0]["on"]


def refusal(name, server_version, why=None):
    """The words of a role that needs a feature the live server does not serve, before any change."""
    return "%s is off on this cluster (%s)%s: this %s. Nothing was changed" % (
        title(name), server_version, " - %s" % why if why else "", needs(name))
