# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU usage report as one self-contained HTML page (inline CSS and SVG; no scripts, fonts
or other files), from the usage dict of ``gpu_usage.usage``. Pure functions.

Everything that comes from the cluster (names, models, reasons) is escaped: a pod or model name
is data, never markup. The same content as Markdown and console lines is usage_text.py; the
words both use are usage_wording.py, the bar chart usage_chart.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from html import escape

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints
from ansible_collections.dra.gpu.plugins.module_utils.report.usage_chart import bar_chart, chart_rows, left_out_text
from ansible_collections.dra.gpu.plugins.module_utils.report.usage_wording import (
    CLASS_HEADERS, DASH, DEVICE_HEADERS, STATE_LABELS, claim_name_text, claim_text, class_memory_texts,
    human_age, memory_use_text, node_heading, node_totals_text, per_node_free_text, pod_text, share_text,
    summary_figures, title)

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
                      for label, number in summary_figures(usage))
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
