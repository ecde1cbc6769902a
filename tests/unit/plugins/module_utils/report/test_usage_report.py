"""The usage report's HTML page as a person sees it: cluster text escaped, idle rows marked (by
colour and by word), one chart bar per node and model, every section there even when empty."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
from html.parser import HTMLParser

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.report import usage_chart, usage_report
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.report.usage_samples import (
    EMPTY, IDLE_REASON, SHARED, USAGE, tainted_usage)


class Tables(HTMLParser):
    """Rows of the page's tables, each as (row class, [cell text]), grouped by table."""

    def __init__(self):
        HTMLParser.__init__(self)
        self.tables, self.row, self.cell = [], None, None
        self.elements = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.row = (dict(attrs).get("class"), [])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.row[1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr":
            self.tables[-1].append(self.row)

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def parsed(page):
    tables = Tables()
    tables.feed(page)
    tables.close()
    return tables


def table_with_header(page, first_header):
    for table in parsed(page).tables:
        if table[0][1][0] == first_header:
            return table
    raise AssertionError("no table starting with %r" % first_header)


def test_page_escapes_everything_from_the_cluster():
    page = usage_report.html_page(USAGE, cluster_name="prod <b>")
    assert "<script>" not in page
    assert "x&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "prod &lt;b&gt;" in page and "prod <b>" not in page
    assert "odd|class" in page


def test_page_escapes_markup_in_every_field():
    usage = copy.deepcopy(USAGE)
    evil = "<img src=x>"
    usage["nodes"][0]["devices"][2].update(model=evil, memory=evil)
    usage["nodes"][1]["devices"][1]["idle_reason"] = evil
    usage["idle"][0].update(idle_reason=evil, devices=[evil])
    usage["by_node_model"][1]["model"] = evil
    usage["by_namespace"][0]["namespace"] = evil
    usage["free_by_class"][2]["reason"] = evil
    usage["free_by_class"][0]["by_node"] = {evil: 1}
    usage["notes"] = [evil]
    usage["summary"]["line"] = evil
    page = usage_report.html_page(usage)
    assert "<img" not in page
    # model, memory, two idle reasons, idle devices, chart title and label, namespace, class reason,
    # per-node free, note, summary line
    assert page.count("&lt;img src=x&gt;") == 12


def test_page_title_and_figures():
    page = usage_report.html_page(USAGE)
    assert "<title>GPU usage \u2014 cluster \u2014 2026-12-05T15:40:00Z</title>" in page
    figures = re.findall(r'<div class="figure[^"]*"><b>(\d+)</b>([^<]+)</div>', page)
    assert figures == [("5", "devices"), ("1", "in use"), ("1", "idle"), ("3", "free")]
    assert USAGE["summary"]["line"] in page


def test_page_is_self_contained():
    page = usage_report.html_page(USAGE)
    tags = set(tag for tag, _attrs in parsed(page).elements)
    assert not tags & {"script", "link", "img", "iframe"}
    assert "<style>" in page and "url(" not in page and "@import" not in page


def test_idle_allocations_are_marked_by_colour_class_and_by_word():
    rows = table_with_header(usage_report.html_page(USAGE), "")[1:]
    assert rows == [("idle", ["IDLE", "job-x-claim", "team-b", "gpu-node-2/gpu-1", IDLE_REASON,
                              "2026-12-05T13:33:00Z (2h 7m)"])]


def test_idle_device_row_in_its_node_table():
    page = usage_report.html_page(USAGE)
    node_tables = [t for t in parsed(page).tables if t[0][1][0] == "device"]
    assert len(node_tables) == 2     # gpu-node-3 has no devices: a line, not a table
    node_2 = node_tables[1][1:]
    assert [css for css, _cells in node_2] == [None, "idle"]
    name, kind, model, memory, state, claim, pods, since = node_2[1][1]
    assert (name, model, claim) == ("gpu-1", "NVIDIA L4", "team-b/job-x-claim")
    assert state.startswith("IDLE") and IDLE_REASON in state
    assert "Pending" in pods and since == "2026-12-05T13:33:00Z (2h 7m)"
    assert node_2[0][1][4:] == ["free", "\u2014", "\u2014", "\u2014"]


def test_node_tables_show_holders_owner_and_unknowns():
    node_1 = [t for t in parsed(usage_report.html_page(USAGE)).tables if t[0][1][0] == "device"][0][1:]
    busy = node_1[0][1]
    assert busy[4] == "in use" and busy[5] == "team-a/train-abc12 (shared)"
    assert "team-a/train-0 \u00b7 Running \u00b7 Deployment/train" in busy[6] and "team-a/train-1" in busy[6]
    assert busy[7] == "2026-12-05T12:28:00Z (3h 12m)"
    assert node_1[2][1][:4] == ["gpu-2", "other", "\u2014", "\u2014"]


def test_nodes_without_devices_and_not_ready_nodes_are_named():
    page = usage_report.html_page(USAGE)
    headings = re.findall(r"<h3>(.*?)<span[^>]*>(.*?)</span></h3>", page)
    assert headings == [("gpu-node-1", "3 devices: 1 in use, 0 idle, 2 free"),
                        ("gpu-node-2 (NOT READY)", "2 devices: 0 in use, 1 idle, 1 free"),
                        ("gpu-node-3", "0 devices: 0 in use, 0 idle, 0 free")]
    assert page.split("gpu-node-3<span")[1].count("No devices of the driver on this node.") == 1


def test_chart_has_one_bar_group_per_node_and_model():
    page = usage_report.html_page(USAGE)
    svg = re.search(r"<svg .*?</svg>", page, re.S).group(0)
    groups = re.findall(r'<g class="bar-row"><title>([^<]*)</title>', svg)
    assert groups == ["gpu-node-1 \u00b7 NVIDIA A10", "gpu-node-1 \u00b7 other", "gpu-node-2 \u00b7 NVIDIA L4"]
    assert "1 allocated, 1 free of 2" in svg and "0 allocated, 1 free of 1" in svg
    # One scale for all bars: a 1-device row is half as long as a 2-device row.
    widths = [float(w) for w in re.findall(r'<rect class="(?:allocated|free)" [^>]*width="([\d.]+)"', svg)]
    assert widths[0] + widths[1] == pytest.approx(2 * (widths[2] + widths[3]))
    assert widths[2] == 0


def test_chart_keeps_the_50_biggest_rows_and_says_how_many_are_left_out():
    usage = copy.deepcopy(USAGE)
    usage["by_node_model"] = [{"node": "n-%03d" % i, "model": "M", "devices": 1 + (i % 3 == 0), "allocated": 0,
                               "free": 1} for i in range(60)]
    page = usage_report.html_page(usage)
    assert page.count('<g class="bar-row">') == 50
    assert "10 more node/model rows with fewer devices are not charted" in page
    rows, left_out = usage_chart.chart_rows(usage["by_node_model"])
    assert left_out == 10
    assert sum(1 for r in rows if r["devices"] == 2) == 20       # all 20 two-device rows are kept
    assert [r["node"] for r in rows] == sorted(r["node"] for r in rows)
    height = int(re.search(r'<svg [^>]*height="(\d+)"', page).group(1))
    assert height > 50 * 20


def test_namespace_and_free_class_tables():
    page = usage_report.html_page(USAGE)
    namespaces = table_with_header(page, "namespace")
    assert namespaces[1:] == [(None, ["team-a", "1", "1", "2", "0", "0"]), ("idle", ["team-b", "1", "1", "1", "1", "1"])]
    classes = table_with_header(page, "class")[1:]
    assert classes[0][1] == ["gpu.nvidia.com", "3", "4", "49.46 GiB", "22.48 GiB", "gpu-node-1: 2, gpu-node-2: 1"]
    assert classes[1][1] == ["mig.nvidia.com", "0", "0", "\u2014", "\u2014", "\u2014"]
    assert classes[2][1] == ["odd|class", "not previewable: cannot evaluate device.foo locally: unknown"]


def test_notes_are_listed():
    assert "<li>node gpu-node-3 is labelled" in usage_report.html_page(USAGE)
    assert "<h2>Notes</h2>" not in usage_report.html_page(EMPTY)


def test_empty_usage_renders_every_section():
    page = usage_report.html_page(EMPTY)
    for text in ("No devices to chart.", "No idle allocations.", "No allocated claims.",
                 "No DeviceClass selects these devices.", "No GPU nodes found."):
        assert text in page
    assert "<svg" not in page


def test_a_shared_device_shows_memory_consumed_free_and_each_claim_with_its_share():
    usage = copy.deepcopy(USAGE)
    usage["nodes"][0]["devices"][0] = SHARED
    page = usage_report.html_page(usage)
    row = table_with_header(page, "device")[1][1]
    assert row[3] == "23028Miconsumed 18Gi, free 4596Mi"
    assert row[5] == ("ml/a-gpu \u00b7 memory 8Gi \u00b7 share 1111-aaaa"
                      "ml/b<i>-gpu \u00b7 memory 10Gi \u00b7 share 2222-bbbb")
    assert "b&lt;i&gt;-gpu" in page
    # a device no share can hold keeps its one-line memory cell
    assert table_with_header(page, "device")[2][1][3] == "22.5 GiB"


def test_a_tainted_gpu_shows_why_and_since_when_on_the_page_and_in_markdown():
    usage = tainted_usage()
    page = usage_report.html_page(usage)
    assert "tainted (out of service)" in page
    assert '<span class="taint">gpu.nvidia.com/xid=79:NoSchedule since 2026-12-05T15:00:00Z</span>' in page
    assert ('<span class="taint">dra.gpu/maintenance:NoExecute (DeviceTaintRule dra-gpu-maintenance-gpu-node-1-gpu-1) '
            'since 2026-12-05T15:10:00Z</span>') in page
    assert "3 devices: 1 in use, 0 idle, 1 free, 1 tainted" in page
    assert "tainted" not in usage_report.html_page(USAGE)
    usage["by_node_model"][0].update(tainted=1, free=0)
    chart = usage_chart.bar_chart(usage_chart.chart_rows(usage["by_node_model"])[0])
    assert 'class="tainted"' in chart and "tainted (out of service)" in chart
    assert 'class="tainted"' not in usage_chart.bar_chart(usage_chart.chart_rows(USAGE["by_node_model"])[0])
