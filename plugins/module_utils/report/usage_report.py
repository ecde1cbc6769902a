# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU usage dict (from ``gpu_usage.usage``) for people: a self-contained HTML page, the
same content as Markdown (terminals, CI logs) and a few console lines. Pure functions.

Everything that comes from the cluster (names, models, reasons) is escaped: a pod or model name
is data, never markup.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from html import escape

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints
from ansible_collections.dra.gpu.plugins.module_utils.report.usage_chart import bar_chart, chart_rows, left_out_text, text_chart

# Idle is not a label but a marked row: see _state_cell and _md_device_row.
STATE_LABELS = {"free": "free", "in_use": "in use", "tainted": "tainted (out of service)"}
# The console summary names at most this many idle claims and full nodes; the page lists all.
CONSOLE_IDLE_CLAIMS = 3
CONSOLE_FULL_NODES = 10
DASH = "\u2014"
DEVICE_HEADERS = ["device", "type", "model", "memory", "state", "claim", "holder pods", "since"]
# "What still fits": the memory one more claim can get, summed over the class's devices and on one device.
CLASS_HEADERS = ["class", "free", "total matching", "free memory", "largest claim that fits", "free per node"]
# Percent of the page's width per node-table column (device .. since): the same for every node.
DEVICE_COLUMN_WIDTHS = (7, 5, 11, 11, 13, 20, 17, 16)

_CSS = """
body{margin:0;background:#f5f6f8;color:#1d2330;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 32px 40px}
*{box-sizing:border-box}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:30px 0 10px;padding-bottom:4px;border-bottom:1px solid #d5d9e0}
h3{font-size:15px;margin:22px 0 8px}
h3 .muted{font-weight:400;margin-left:8px}
.summary{margin:0 0 16px;color:#39404d}
.figures{display:flex;gap:16px}
.figure{flex:1;background:#fff;border:1px solid #d5d9e0;border-radius:6px;padding:12px 16px}
.figure b{display:block;font-size:34px;line-height:1.1}
.figure.in-use b{color:#2f5fb3}
.figure.idle b{color:#a15c00}
.figure.free b{color:#3d7a32}
svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #d5d9e0;padding:10px}
svg.chart text{font-size:12px;fill:#1d2330}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d5d9e0}
table.counts{width:auto;min-width:60%}
table.devices{table-layout:fixed}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e4e7ec;vertical-align:top;overflow-wrap:break-word}
th{background:#e9edf2;font-weight:600}
tbody tr:nth-child(even){background:#f7f8fa}
tbody tr.idle{background:#ffedc2}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.marker{font-weight:700;color:#8a4b00}
.taint{color:#a61b1b;font-size:90%}
.muted{color:#6b7280}
.nowrap{white-space:nowrap}
"""


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


def _key(entry):
    return "%s/%s" % (entry.get("namespace"), entry.get("name"))


def claim_name_text(claim):
    return "%s%s" % (claim.get("name"), " (shared)" if claim.get("shared") else "")


def claim_text(claim):
    return "%s/%s" % (claim.get("namespace"), claim_name_text(claim)) if claim else ""


def pod_text(pod):
    parts = [_key(pod), pod.get("phase") or "unknown phase"]
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
    return "%s \u00b7 %s \u00b7 share %s" % (_key(share), consumed or "nothing", share.get("share_id"))


def class_memory_texts(free_class):
    """(free memory, the largest one claim can get) of a DeviceClass, in GiB."""
    return gib_text(free_class.get("memory_free_bytes")), gib_text(free_class.get("largest_claim_bytes"))


def per_node_free_text(free_class):
    by_node = free_class.get("by_node") or {}
    return ", ".join("%s: %d" % (name, by_node[name]) for name in sorted(by_node)) or DASH


def _figures(usage):
    summary = usage.get("summary") or {}
    figures = [(label, summary.get(key) or 0) for label, key in
               (("devices", "devices"), ("in use", "in_use"), ("idle", "idle"), ("free", "free"))]
    if summary.get("tainted"):
        figures.append(("tainted", summary["tainted"]))
    return figures


# --- HTML --------------------------------------------------------------------------------

def _cell(value, css_class=None):
    attribute = ' class="%s"' % css_class if css_class else ""
    return "<td%s>%s</td>" % (attribute, escape("" if value is None else str(value)))


def _table(headers, rows, numeric=(), css_class=None, widths=None):
    """``rows``: (css class or None, [cell html]) pairs; cells already escaped. ``widths``: column
    widths in percent, so that every node's table has the same columns."""
    columns = "<colgroup>%s</colgroup>" % "".join('<col style="width:%d%%">' % w for w in widths) if widths else ""
    head = "".join('<th class="num">%s</th>' % escape(h) if h in numeric else "<th>%s</th>" % escape(h)
                   for h in headers)
    body = "".join("<tr%s>%s</tr>" % (' class="%s"' % css if css else "", "".join(cells)) for css, cells in rows)
    return "<table%s>%s<thead><tr>%s</tr></thead><tbody>%s</tbody></table>" % (
        ' class="%s"' % css_class if css_class else "", columns, head, body)


def _html_figures(usage):
    figures = "".join('<div class="figure %s"><b>%d</b>%s</div>' % (label.replace(" ", "-"), number, escape(label))
                      for label, number in _figures(usage))
    line = (usage.get("summary") or {}).get("line") or ""
    return '<p class="summary">%s</p><div class="figures">%s</div>' % (escape(line), figures)


def _html_chart(usage):
    rows, left_out = chart_rows(usage.get("by_node_model"))
    parts = ["<h2>Devices per node and model</h2>", bar_chart(rows) or '<p class="muted">No devices to chart.</p>']
    if left_out:
        parts.append('<p class="muted">%s</p>' % escape(left_out_text(left_out)))
    return "".join(parts)


def _since_cell(item):
    # A timestamp's hyphens are places to break a line; keep it whole, let the age wrap below it.
    if not item.get("since"):
        return _cell("unknown")
    return '<td><span class="nowrap">%s</span> (%s)</td>' % (escape(item["since"]), human_age(item.get("age_seconds")))


def _state_cell(item):
    taints = "".join('<br><span class="taint">%s</span>' % escape(device_taints.describe(t))
                     for t in item.get("taints") or [])
    if item.get("state") != "idle":
        return "<td>%s%s</td>" % (escape(STATE_LABELS.get(item.get("state"), item.get("state"))), taints)
    return '<td><span class="marker">IDLE</span><br><span class="muted">%s</span>%s</td>' % (escape(
        item.get("idle_reason") or ""), taints)


def _html_idle(usage):
    idle = usage.get("idle") or []
    if not idle:
        return '<h2>Idle allocations</h2><p class="muted">No idle allocations.</p>'
    rows = [("idle", ['<td class="marker">IDLE</td>', _cell(claim_name_text(c)),
                      _cell(c.get("namespace")), _cell(", ".join(c.get("devices") or []) or DASH),
                      _cell(c.get("idle_reason")), _since_cell(c)])
            for c in idle]
    return "<h2>Idle allocations</h2>" + _table(["", "claim", "namespace", "devices", "reason", "since"], rows)


def _html_namespaces(usage):
    headers = ["namespace", "claims", "devices", "pods", "idle claims", "idle devices"]
    rows = [("idle" if n.get("idle_claims") else None,
             [_cell(n.get("namespace"))] + [_cell(n.get(k) or 0, "num") for k in
                                            ("claims", "devices", "pods", "idle_claims", "idle_devices")])
            for n in usage.get("by_namespace") or []]
    if not rows:
        return '<h2>Per namespace</h2><p class="muted">No allocated claims.</p>'
    return "<h2>Per namespace</h2>" + _table(headers, rows, numeric=headers[1:], css_class="counts")


def _html_free_class_cells(free_class):
    if not free_class.get("previewable"):
        return [_cell(free_class.get("class")),
                '<td colspan="5"><span class="marker">not previewable</span>: %s</td>'
                % escape(free_class.get("reason") or "")]
    memory, largest = class_memory_texts(free_class)
    return [_cell(free_class.get("class")), _cell(free_class.get("free"), "num"),
            _cell(free_class.get("total"), "num"), _cell(memory, "num"), _cell(largest, "num"),
            _cell(per_node_free_text(free_class))]


def _html_free_by_class(usage):
    classes = usage.get("free_by_class") or []
    if not classes:
        return '<h2>Free devices per DeviceClass</h2><p class="muted">No DeviceClass selects these devices.</p>'
    rows = [(None, _html_free_class_cells(c)) for c in classes]
    return "<h2>Free devices per DeviceClass</h2>" + _table(
        CLASS_HEADERS, rows, numeric=CLASS_HEADERS[1:5], css_class="counts")


def _pods_html(pods):
    if not pods:
        return "<td>%s</td>" % DASH
    return "<td>%s</td>" % "<br>".join('<span class="pod">%s</span>' % escape(pod_text(p)) for p in pods)


def _memory_cell(device):
    use = memory_use_text(device)
    if not use:
        return _cell(device.get("memory") or DASH)
    return '<td>%s<br><span class="muted">%s</span></td>' % (escape(device.get("memory") or DASH), escape(use))


def _claim_cell(device):
    shares = device.get("shares") or []
    if not shares:
        return _cell(claim_text(device.get("claim")) or DASH)
    return "<td>%s</td>" % "<br>".join('<span class="share">%s</span>' % escape(share_text(s)) for s in shares)


def _device_cells(device):
    return [_cell(device.get("name")), _cell(device.get("type")), _cell(device.get("model") or DASH),
            _memory_cell(device), _state_cell(device), _claim_cell(device), _pods_html(device.get("pods")),
            _since_cell(device) if device.get("claim") else _cell(DASH)]


def _html_node(node):
    heading = '<h3>%s<span class="muted">%s</span></h3>' % (
        escape(node_heading(node)), escape(node_totals_text(node)))
    devices = node.get("devices") or []
    if not devices:
        return heading + "<p>No devices of the driver on this node.</p>"
    rows = [("idle" if d.get("state") == "idle" else None, _device_cells(d)) for d in devices]
    return heading + _table(DEVICE_HEADERS, rows, css_class="devices", widths=DEVICE_COLUMN_WIDTHS)


def _html_nodes(usage):
    nodes = usage.get("nodes") or []
    if not nodes:
        return '<h2>Nodes</h2><p class="muted">No GPU nodes found.</p>'
    return "<h2>Nodes</h2>" + "".join(_html_node(n) for n in nodes)


def _html_notes(usage):
    notes = usage.get("notes") or []
    if not notes:
        return ""
    return "<h2>Notes</h2><ul>%s</ul>" % "".join("<li>%s</li>" % escape(n) for n in notes)


def html_page(usage, cluster_name=None):
    """One self-contained HTML page (inline CSS and SVG; no scripts, fonts or other files)."""
    page_title = escape(title(usage, cluster_name))
    sections = [_html_figures(usage), _html_chart(usage), _html_idle(usage), _html_namespaces(usage),
                _html_free_by_class(usage), _html_nodes(usage), _html_notes(usage)]
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<title>%s</title><style>%s</style></head>\n<body><main><h1>%s</h1>\n%s\n</main></body></html>\n"
            % (page_title, _CSS.strip(), page_title, "\n".join(s for s in sections if s)))


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
    figures = _figures(usage)
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
    lines.extend("  %s: %s (%s)" % (_key(c), c.get("idle_reason"), human_age(c.get("age_seconds")))
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
