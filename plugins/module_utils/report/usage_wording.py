# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The words the GPU usage report uses wherever it is shown (the HTML page, Markdown, the
console): how a claim, pod, node, age, memory share or DeviceClass's free memory is written,
and the column headers and state names the page and the Markdown share. Pure functions.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints

# Idle is not a label but a marked row: see usage_report._state_cell and usage_text._md_device_row.
STATE_LABELS = {"free": "free", "in_use": "in use", "tainted": "tainted (out of service)"}
DASH = "\u2014"
DEVICE_HEADERS = ["device", "type", "model", "memory", "state", "claim", "holder pods", "since"]
# "What still fits": the memory one more claim can get, summed over the class's devices and on one device.
CLASS_HEADERS = ["class", "free", "total matching", "free memory", "largest claim that fits", "free per node"]


def human_age(seconds):
    """``age_seconds`` for people: "45s", "12m", "3h 12m", "2d 4h"; "unknown" for None."""
    if seconds is None:
        return "unknown"
    seconds = max(0, int(seconds))
    if seconds < 60:
        return "%ds" % seconds
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 3600:
        return "%dm" % minutes
    if seconds < 86400:
        return "%dh %dm" % (hours, minutes % 60) if minutes % 60 else "%dh" % hours
    return "%dd %dh" % (days, hours % 24) if hours % 24 else "%dd" % days


# --- wording shared by the page and the Markdown ------------------------------------------

def title(usage, cluster_name=None):
    return "GPU usage %s %s %s %s" % (DASH, cluster_name or "cluster", DASH, usage.get("generated_at") or "")


def namespaced_name(entry):
    return "%s/%s" % (entry.get("namespace"), entry.get("name"))


def claim_name_text(claim):
    return "%s%s" % (claim.get("name"), " (shared)" if claim.get("shared") else "")


def claim_text(claim):
    return "%s/%s" % (claim.get("namespace"), claim_name_text(claim)) if claim else ""


def pod_text(pod):
    parts = [namespaced_name(pod), pod.get("phase") or "unknown phase"]
    if pod.get("terminating"):
        parts.append("terminating")
    owner = pod.get("owner")
    if owner:
        parts.append("%s/%s" % (owner.get("kind"), owner.get("name")))
    return " \u00b7 ".join(parts)


def since_text(item):
    if not item.get("since"):
        return "unknown"
    return "%s (%s)" % (item["since"], human_age(item.get("age_seconds")))


def node_totals_text(node):
    totals = node.get("totals") or {}
    text = "%d devices: %d in use, %d idle, %d free" % tuple(
        totals.get(k) or 0 for k in ("devices", "in_use", "idle", "free"))
    return text + (", %d tainted" % totals["tainted"] if totals.get("tainted") else "")


def taints_text(device):
    """Why a device is out of service and since when: each taint, with the DeviceTaintRule's name."""
    return "; ".join(device_taints.describe(t) for t in device.get("taints") or [])


def node_heading(node):
    ready = {True: "", False: " (NOT READY)"}.get(node.get("ready"), " (readiness unknown)")
    return "%s%s" % (node.get("name"), ready)


def gib_text(value):
    """Bytes as GiB with two decimals, rounded down (what still fits is never overstated)."""
    if value is None:
        return DASH
    return "%.2f GiB" % (int(value) * 100 // 2 ** 30 / 100.0)


def memory_use_text(device):
    """'consumed 18Gi, free 4596Mi' for a device shares can hold or one that is partly consumed."""
    if device.get("memory_consumed") is None or not (device.get("shareable") or device.get("shares")):
        return ""
    return "consumed %s, free %s" % (device.get("memory_consumed"), device.get("memory_free"))


def share_text(share):
    """One claim on a shared device: who, what it consumed, its shareID."""
    consumed = ", ".join("%s %s" % (k, v) for k, v in sorted((share.get("consumed") or {}).items()))
    return "%s \u00b7 %s \u00b7 share %s" % (namespaced_name(share), consumed or "nothing", share.get("share_id"))


def class_memory_texts(free_class):
    """(free memory, the largest one claim can get) of a DeviceClass, in GiB."""
    return gib_text(free_class.get("memory_free_bytes")), gib_text(free_class.get("largest_claim_bytes"))


def per_node_free_text(free_class):
    by_node = free_class.get("by_node") or {}
    return ", ".join("%s: %d" % (name, by_node[name]) for name in sorted(by_node)) or DASH


def summary_figures(usage):
    summary = usage.get("summary") or {}
    figures = [(label, summary.get(key) or 0) for label, key in
               (("devices", "devices"), ("in use", "in_use"), ("idle", "idle"), ("free", "free"))]
    if summary.get("tainted"):
        figures.append(("tainted", summary["tainted"]))
    return figures
