# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU usage report as text: the page's content as Markdown (terminals, CI logs) and a few
console lines, from the usage dict of ``gpu_usage.usage``. Pure functions.

Cluster text is escaped for Markdown: a "|" cannot end a cell, nor "<" open HTML where the
Markdown is rendered.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.report.usage_chart import chart_rows, left_out_text, text_chart
from ansible_collections.dra.gpu.plugins.module_utils.report.usage_wording import (
    CLASS_HEADERS, DASH, DEVICE_HEADERS, STATE_LABELS, claim_name_text, claim_text, class_memory_texts, human_age,
    memory_use_text, namespaced_name, node_heading, node_totals_text, per_node_free_text, pod_text, share_text,
    since_text, summary_figures, taints_text, title)

# The console summary names at most this many idle claims and full nodes; the page lists all.
CONSOLE_IDLE_CLAIMS = 3
CONSOLE_FULL_NODES = 10


# --- Markdown ----------------------------------------------------------------------------

def _md_cell(value):
    # A "|" would end the cell and a newline the row; "<" could open HTML where Markdown is rendered.
    text = "" if value is None else str(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<")
    return " ".join(text.split())


def _md_table(headers, rows):
    lines = ["| %s |" % " | ".join(headers), "|%s" % ("---|" * len(headers))]
    lines.extend("| %s |" % " | ".join(_md_cell(v) for v in row) for row in rows)
    return "\n".join(lines)


def _md_chart(usage):
    rows, left_out = chart_rows(usage.get("by_node_model"))
    if not rows:
        return "## Devices per node and model\n\nNo devices to chart."
    text = "## Devices per node and model\n\n```\n%s\n```" % "\n".join(text_chart(rows))
    return text + ("\n\n" + left_out_text(left_out) if left_out else "")


def _md_idle(usage):
    idle = usage.get("idle") or []
    if not idle:
        return "## Idle allocations\n\nNo idle allocations."
    rows = [["**IDLE**", claim_name_text(c), c.get("namespace"),
             ", ".join(c.get("devices") or []) or DASH, c.get("idle_reason"), since_text(c)] for c in idle]
    return "## Idle allocations\n\n" + _md_table(["", "claim", "namespace", "devices", "reason", "since"], rows)


def _md_namespaces(usage):
    keys = ("claims", "devices", "pods", "idle_claims", "idle_devices")
    rows = [[n.get("namespace")] + [n.get(k) or 0 for k in keys] for n in usage.get("by_namespace") or []]
    if not rows:
        return "## Per namespace\n\nNo allocated claims."
    return "## Per namespace\n\n" + _md_table(
        ["namespace", "claims", "devices", "pods", "idle claims", "idle devices"], rows)


def _md_free_by_class(usage):
    rows = []
    for c in usage.get("free_by_class") or []:
        if c.get("previewable"):
            rows.append([c.get("class"), c.get("free"), c.get("total")] + list(class_memory_texts(c))
                        + [per_node_free_text(c)])
        else:
            rows.append([c.get("class"), "not previewable", DASH, DASH, DASH, c.get("reason")])
    if not rows:
        return "## Free devices per DeviceClass\n\nNo DeviceClass selects these devices."
    return "## Free devices per DeviceClass\n\n" + _md_table(CLASS_HEADERS, rows)


def _md_device_row(device):
    state = STATE_LABELS.get(device.get("state"), device.get("state"))
    if device.get("state") == "idle":
        state = "**IDLE**: %s" % (device.get("idle_reason") or "")
    if device.get("taints"):
        state = "%s; **TAINTED**: %s" % (state, taints_text(device))
    pods = "; ".join(pod_text(p) for p in device.get("pods") or []) or DASH
    memory = device.get("memory") or DASH
    if memory_use_text(device):
        memory = "%s (%s)" % (memory, memory_use_text(device))
    holders = "; ".join(share_text(s) for s in device.get("shares") or []) or claim_text(device.get("claim")) or DASH
    return [device.get("name"), device.get("type"), device.get("model") or DASH, memory,
            state, holders, pods, since_text(device) if device.get("claim") else DASH]


def _md_node(node):
    heading = "### %s\n\n%s" % (_md_cell(node_heading(node)), node_totals_text(node))
    devices = node.get("devices") or []
    if not devices:
        return heading + "\n\nNo devices of the driver on this node."
    return heading + "\n\n" + _md_table(DEVICE_HEADERS, [_md_device_row(d) for d in devices])


def markdown(usage, cluster_name=None):
    """The page's content as Markdown: headings, pipe tables, text bars instead of the SVG."""
    summary = usage.get("summary") or {}
    figures = summary_figures(usage)
    sections = ["# %s" % _md_cell(title(usage, cluster_name)), _md_cell(summary.get("line")),
                _md_table([label for label, _n in figures], [[n for _label, n in figures]]),
                _md_chart(usage), _md_idle(usage), _md_namespaces(usage), _md_free_by_class(usage), "## Nodes"]
    sections.extend(_md_node(n) for n in usage.get("nodes") or [])
    if usage.get("notes"):
        sections.append("## Notes\n\n" + "\n".join("- %s" % _md_cell(n) for n in usage["notes"]))
    return "\n\n".join(sections) + "\n"


# --- console -----------------------------------------------------------------------------

def _console_idle(usage):
    idle = usage.get("idle") or []
    if not idle:
        return ["idle: none"]
    devices = sum(len(c.get("devices") or []) for c in idle)
    shown = "" if len(idle) <= CONSOLE_IDLE_CLAIMS else " (first %d)" % CONSOLE_IDLE_CLAIMS
    lines = ["idle: %d claim%s holding %d device%s%s" % (len(idle), "" if len(idle) == 1 else "s", devices,
                                                         "" if devices == 1 else "s", shown)]
    lines.extend("  %s: %s (%s)" % (namespaced_name(c), c.get("idle_reason"), human_age(c.get("age_seconds")))
                 for c in idle[:CONSOLE_IDLE_CLAIMS])
    return lines


def _console_class(free_class):
    if not free_class.get("previewable"):
        return "%s not previewable" % free_class.get("class")
    text = "%s %s" % (free_class.get("class"), free_class.get("free"))
    if free_class.get("memory_free_bytes") is not None:
        memory, largest = class_memory_texts(free_class)
        text += " (%s free, one claim up to %s)" % (memory, largest)
    return text


def _console_free_by_class(usage):
    parts = [_console_class(c) for c in usage.get("free_by_class") or []]
    return "free per class: " + (", ".join(parts) or "no DeviceClass")


def _console_full_nodes(usage):
    full = [n.get("name") for n in usage.get("nodes") or []
            if (n.get("totals") or {}).get("devices") and not (n.get("totals") or {}).get("free")]
    if not full:
        return "full nodes: none"
    more = len(full) - CONSOLE_FULL_NODES
    return "full nodes (no free device): " + ", ".join(full[:CONSOLE_FULL_NODES]) + (
        " and %d more" % more if more > 0 else "")


def console_lines(usage):
    """At most 7 short lines: the summary, idle claims (the first 3), free per class, full nodes."""
    summary_line = (usage.get("summary") or {}).get("line") or "no GPU usage data"
    return [summary_line] + _console_idle(usage) + [_console_free_by_class(usage), _console_full_nodes(usage)]
