# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU usage report's bar chart: one horizontal bar per (node, model), allocated and free
devices in two colours, as inline SVG (no scripts, fonts or other files) for the page and as
text bars for Markdown. Pure functions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from html import escape

# Beyond this many rows a chart stops being readable; the tables still list every device.
MAX_CHART_ROWS = 50

TEXT_BAR_WIDTH = 20
ALLOCATED_COLOUR = "#2f5fb3"
FREE_COLOUR = "#b9d7b0"
# Devices out of service (tainted NoSchedule/NoExecute, no claim): drawn only where there are any.
TAINTED_COLOUR = "#d98c8c"

_WIDTH = 1160               # the page's content width: the chart lines up with the tables
_NUMBERS_WIDTH = 190        # "12 allocated, 36 free of 48" right of the bars
_LEGEND_HEIGHT = 30
_ROW_HEIGHT = 24
_BAR_HEIGHT = 16
# 12px text of the system fonts averages about 7px a character (measured in chromium). Labels
# get the room the longest one needs, up to _LABEL_CHARS; longer ones end in an ellipsis, the
# whole label kept in a <title> (shown on hover).
_CHAR_WIDTH = 7.2
_LABEL_CHARS = 48
_MIN_LABEL_WIDTH = 120


def chart_rows(by_node_model, limit=MAX_CHART_ROWS):
    """The rows to chart and how many were left out: all of them up to ``limit``, otherwise the
    ``limit`` rows with most devices, kept in their (node, model) order."""
    rows = list(by_node_model or [])
    if len(rows) <= limit:
        return rows, 0
    biggest = sorted(range(len(rows)), key=lambda i: -(rows[i].get("devices") or 0))[:limit]
    return [rows[i] for i in sorted(biggest)], len(rows) - limit


def row_label(row):
    return "%s \u00b7 %s" % (row.get("node"), row.get("model") or "unknown model")


def left_out_text(left_out):
    return ("%d more node/model rows with fewer devices are not charted; the tables below list every device."
            % left_out)


def _ellipsis(text, length):
    return text if len(text) <= length else text[:max(length - 1, 1)] + "\u2026"


def _shortened_label(row):
    """The label in at most _LABEL_CHARS: a long node name gives way first, so the model still shows."""
    model = _ellipsis(row.get("model") or "unknown model", _LABEL_CHARS // 2)
    node_room = _LABEL_CHARS - len(model) - len(" \u00b7 ")
    return row_label({"node": _ellipsis(str(row.get("node")), node_room), "model": model})


def _label_width(rows):
    longest = max(len(_shortened_label(row)) for row in rows)
    return max(_MIN_LABEL_WIDTH, int(longest * _CHAR_WIDTH))


def _legend(bar_left, tainted=False):
    items, x = [], 0
    entries = ((ALLOCATED_COLOUR, "allocated (in use or idle)"), (FREE_COLOUR, "free"))
    if tainted:
        entries += ((TAINTED_COLOUR, "tainted (out of service)"),)
    for colour, text in entries:
        items.append('<rect x="%d" y="4" width="14" height="14" fill="%s"/>'
                     '<text x="%d" y="16">%s</text>' % (x, colour, x + 20, text))
        x += 220
    return '<g class="legend" transform="translate(%d,0)">%s</g>' % (bar_left, "".join(items))


def _bar_row(row, index, bar_left, scale):
    top = _LEGEND_HEIGHT + index * _ROW_HEIGHT
    text_y = top + _BAR_HEIGHT - 3
    devices, allocated, free = (row.get(k) or 0 for k in ("devices", "allocated", "free"))
    allocated_width = round(allocated * scale, 1)
    free_width = round(free * scale, 1)
    label = row_label(row)
    tainted = row.get("tainted") or 0
    tainted_bar = '<rect class="tainted" x="%s" y="%d" width="%s" height="%d" fill="%s"/>' % (
        round(bar_left + allocated_width + free_width, 1), top, round(tainted * scale, 1), _BAR_HEIGHT,
        TAINTED_COLOUR) if tainted else ""
    return ('<g class="bar-row"><title>%s</title>'
            '<text x="%d" y="%d" text-anchor="end">%s</text>'
            '<rect class="allocated" x="%d" y="%d" width="%s" height="%d" fill="%s"/>'
            '<rect class="free" x="%s" y="%d" width="%s" height="%d" fill="%s"/>%s'
            '<text x="%d" y="%d">%d allocated, %d free of %d</text></g>'
            # The numbers column has room for two counts; the tainted ones are the red bar, named in the
            # row's title (shown on hover) and in the node's table.
            % (escape(label + (": %d tainted (out of service)" % tainted if tainted else "")), bar_left - 10, text_y,
               escape(_shortened_label(row)),
               bar_left, top, allocated_width, _BAR_HEIGHT, ALLOCATED_COLOUR,
               round(bar_left + allocated_width, 1), top, free_width, _BAR_HEIGHT, FREE_COLOUR, tainted_bar,
               _WIDTH - _NUMBERS_WIDTH + 12, text_y, allocated, free, devices))


def bar_chart(rows):
    """An <svg> element for ``rows`` (from ``chart_rows``); bars share one scale, so a node
    with 2 devices has a shorter bar than one with 8. Empty string when there is nothing to chart."""
    if not rows:
        return ""
    bar_left = _label_width(rows) + 20
    largest = max(max(row.get("devices") or 0, 1) for row in rows)
    scale = (_WIDTH - _NUMBERS_WIDTH - bar_left) / largest
    height = _LEGEND_HEIGHT + len(rows) * _ROW_HEIGHT
    body = "".join(_bar_row(row, index, bar_left, scale) for index, row in enumerate(rows))
    return ('<svg class="chart" xmlns="http://www.w3.org/2000/svg" role="img" width="%d" height="%d" '
            'viewBox="0 0 %d %d"><title>Devices per node and model: allocated and free</title>%s%s</svg>'
            % (_WIDTH, height, _WIDTH, height, _legend(bar_left, any(row.get("tainted") for row in rows)), body))


def text_bar(row):
    """``row`` of ``by_node_model`` as a fixed-width bar: allocated "\u2588", free "\u2591"."""
    devices, allocated = row.get("devices") or 0, row.get("allocated") or 0
    filled = int(round(TEXT_BAR_WIDTH * allocated / devices)) if devices else 0
    # Never round a last allocated or last free device away: "full" and "empty" must be exact.
    if allocated and not filled:
        filled = 1
    if allocated < devices and filled == TEXT_BAR_WIDTH:
        filled -= 1
    return "\u2588" * filled + "\u2591" * (TEXT_BAR_WIDTH - filled)


def text_chart(rows):
    """``rows`` (from ``chart_rows``) as aligned lines: label, text bar, "3/8 allocated"."""
    labels = [row_label(r) for r in rows]
    width = max([len(label) for label in labels] or [0])
    return ["%s  %s  %d/%d allocated" % (label.ljust(width), text_bar(r), r.get("allocated") or 0,
                                         r.get("devices") or 0) for label, r in zip(labels, rows)]
