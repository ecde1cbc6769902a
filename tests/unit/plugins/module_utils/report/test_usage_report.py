"""The usage report as a person sees it: cluster text escaped, idle rows marked (by colour and
by word), one chart bar per node and model, Markdown tables with the right rows, a short console."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re
from html.parser import HTMLParser

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.report import usage_chart, usage_report


def pod(namespace, name, phase="Running", owner=("Deployment", "train"), terminating=False):
    return {"namespace": namespace, "name": name, "phase": phase, "terminating": terminating,
            "owner": {"kind": owner[0], "name": owner[1]} if owner else None}


def device(name, state="free", claim=None, pods=(), since=None, age=None, reason=None, model="NVIDIA A10",
           memory="22.5 GiB", kind="gpu"):
    return {"name": name, "driver": "gpu.nvidia.com", "pool": "p", "type": kind, "model": model, "memory": memory,
            "memory_bytes": None, "state": state, "claim": claim, "pods": list(pods), "since": since,
            "age_seconds": age, "idle_reason": reason}


EVIL_POD = pod("team-b", "x<script>alert(1)</script>", phase="Pending", owner=None)
IDLE_REASON = "its only pod team-b/x is Pending (ImagePullBackOff)"
IDLE_CLAIM = {"namespace": "team-b", "name": "job-x-claim", "shared": False, "state": "idle",
              "devices": ["gpu-node-2/gpu-1"], "pods": [dict(EVIL_POD, node="gpu-node-2")],
              "since": "2026-12-05T13:33:00Z", "age_seconds": 7620, "since_source": "pod scheduled",
              "idle_reason": IDLE_REASON}
BUSY_CLAIM = {"namespace": "team-a", "name": "train-abc12", "shared": True, "state": "in_use",
              "devices": ["gpu-node-1/gpu-0"], "pods": [dict(pod("team-a", "train-0"), node="gpu-node-1"),
                                                        dict(pod("team-a", "train-1"), node="gpu-node-1")],
              "since": "2026-12-05T12:28:00Z", "age_seconds": 11520, "since_source": "pod scheduled",
              "idle_reason": None}

USAGE = {
    "generated_at": "2026-12-05T15:40:00Z",
    "summary": {"devices": 5, "allocated": 2, "in_use": 1, "idle": 1, "free": 3, "claims": 2, "idle_claims": 1,
                "pods": 3, "line": "5 devices on 2 nodes: 1 in use, 1 idle (allocated, no running pod), 3 free"},
    "nodes": [
        {"name": "gpu-node-1", "ready": True, "totals": {"devices": 3, "in_use": 1, "idle": 0, "free": 2},
         "devices": [device("gpu-0", "in_use", {"namespace": "team-a", "name": "train-abc12", "shared": True},
                            BUSY_CLAIM["pods"], "2026-12-05T12:28:00Z", 11520),
                     device("gpu-1"), device("gpu-2", model=None, memory=None, kind="other")]},
        {"name": "gpu-node-2", "ready": False, "totals": {"devices": 2, "in_use": 0, "idle": 1, "free": 1},
         "devices": [device("gpu-0", model="NVIDIA L4"),
                     device("gpu-1", "idle", {"namespace": "team-b", "name": "job-x-claim", "shared": False},
                            [EVIL_POD], "2026-12-05T13:33:00Z", 7620, IDLE_REASON, model="NVIDIA L4")]},
        {"name": "gpu-node-3", "ready": True, "totals": {"devices": 0, "in_use": 0, "idle": 0, "free": 0},
         "devices": []},
    ],
    "claims": [BUSY_CLAIM, IDLE_CLAIM],
    "idle": [IDLE_CLAIM],
    "by_namespace": [
        {"namespace": "team-a", "claims": 1, "devices": 1, "pods": 2, "idle_claims": 0, "idle_devices": 0},
        {"namespace": "team-b", "claims": 1, "devices": 1, "pods": 1, "idle_claims": 1, "idle_devices": 1}],
    "by_node_model": [
        {"node": "gpu-node-1", "model": "NVIDIA A10", "devices": 2, "allocated": 1, "free": 1},
        {"node": "gpu-node-1", "model": "other", "devices": 1, "allocated": 0, "free": 1},
        {"node": "gpu-node-2", "model": "NVIDIA L4", "devices": 2, "allocated": 1, "free": 1}],
    "free_by_class": [
        {"class": "gpu.nvidia.com", "previewable": True, "reason": None, "total": 4, "free": 3,
         "by_node": {"gpu-node-2": 1, "gpu-node-1": 2}, "memory_free_bytes": (4596 + 2 * 23028) * 2 ** 20,
         "largest_claim_bytes": 23028 * 2 ** 20},
        {"class": "mig.nvidia.com", "previewable": True, "reason": None, "total": 0, "free": 0, "by_node": {}},
        {"class": "odd|class", "previewable": False, "reason": "cannot evaluate device.foo locally: unknown",
         "total": None, "free": None, "by_node": None}],
    "notes": ["node gpu-node-3 is labelled nvidia.com/gpu.present=true but publishes no gpu.nvidia.com devices"],
}

EMPTY = {"generated_at": "2026-12-05T15:40:00Z",
         "summary": {"devices": 0, "allocated": 0, "in_use": 0, "idle": 0, "free": 0, "claims": 0,
                     "idle_claims": 0, "pods": 0, "line": "0 devices on 0 nodes: 0 in use, 0 idle, 0 free"},
         "nodes": [], "claims": [], "idle": [], "by_namespace": [], "by_node_model": [], "free_by_class": [],
         "notes": []}


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


@pytest.mark.parametrize("seconds,text", [
    (None, "unknown"), (0, "0s"), (45, "45s"), (59.9, "59s"), (60, "1m"), (12 * 60 + 5, "12m"), (3600, "1h"),
    (3 * 3600 + 12 * 60 + 30, "3h 12m"), (86400, "1d"), (2 * 86400 + 4 * 3600 + 59, "2d 4h"), (-5, "0s")])
def test_human_age(seconds, text):
    assert usage_report.human_age(seconds) == text


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
    text = usage_report.markdown(EMPTY)
    assert "No idle allocations." in text and "| 0 | 0 | 0 | 0 |" in text
    assert usage_report.console_lines(EMPTY) == [EMPTY["summary"]["line"], "idle: none",
                                                 "free per class: no DeviceClass", "full nodes: none"]


def markdown_table(text, heading):
    section = text.split(heading + "\n\n", 1)[1].split("\n\n", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_markdown_sections_and_tables():
    text = usage_report.markdown(USAGE, "lab")
    assert text.startswith("# GPU usage \u2014 lab \u2014 2026-12-05T15:40:00Z\n")
    headings = re.findall(r"^(#+ .*)$", text, re.M)
    assert headings == ["# GPU usage \u2014 lab \u2014 2026-12-05T15:40:00Z", "## Devices per node and model",
                        "## Idle allocations", "## Per namespace", "## Free devices per DeviceClass", "## Nodes",
                        "### gpu-node-1", "### gpu-node-2 (NOT READY)", "### gpu-node-3", "## Notes"]
    assert markdown_table(text, "## Idle allocations")[2:] == [
        "| **IDLE** | job-x-claim | team-b | gpu-node-2/gpu-1 | %s | 2026-12-05T13:33:00Z (2h 7m) |" % IDLE_REASON]
    assert markdown_table(text, "## Per namespace")[2:] == ["| team-a | 1 | 1 | 2 | 0 | 0 |",
                                                            "| team-b | 1 | 1 | 1 | 1 | 1 |"]
    classes = markdown_table(text, "## Free devices per DeviceClass")[2:]
    assert classes[0] == "| gpu.nvidia.com | 3 | 4 | 49.46 GiB | 22.48 GiB | gpu-node-1: 2, gpu-node-2: 1 |"
    assert classes[2] == ("| odd\\|class | not previewable | \u2014 | \u2014 | \u2014 | cannot evaluate device.foo locally: "
                          "unknown |")
    node_2 = markdown_table(text, "### gpu-node-2 (NOT READY)\n\n2 devices: 0 in use, 1 idle, 1 free")
    assert len(node_2) == 4 and "**IDLE**: " + IDLE_REASON in node_2[3]
    assert "x\\<script>alert(1)\\</script>" in node_2[3]
    assert "No devices of the driver on this node." in text.split("### gpu-node-3")[1]


def test_markdown_text_bars():
    chart = usage_report.markdown(USAGE).split("```\n")[1].split("\n```")[0].splitlines()
    assert chart == [
        "gpu-node-1 \u00b7 NVIDIA A10  " + "\u2588" * 10 + "\u2591" * 10 + "  1/2 allocated",
        "gpu-node-1 \u00b7 other       " + "\u2591" * 20 + "  0/1 allocated",
        "gpu-node-2 \u00b7 NVIDIA L4   " + "\u2588" * 10 + "\u2591" * 10 + "  1/2 allocated"]


def test_console_lines():
    assert usage_report.console_lines(USAGE) == [
        USAGE["summary"]["line"],
        "idle: 1 claim holding 1 device",
        "  team-b/job-x-claim: %s (2h 7m)" % IDLE_REASON,
        "free per class: gpu.nvidia.com 3 (49.46 GiB free, one claim up to 22.48 GiB), mig.nvidia.com 0, "
        "odd|class not previewable",
        "full nodes: none"]


def test_console_names_three_idle_claims_and_full_nodes():
    usage = copy.deepcopy(USAGE)
    usage["idle"] = [dict(IDLE_CLAIM, name="c%d" % i, age_seconds=None) for i in range(5)]
    usage["nodes"][1]["totals"]["free"] = 0
    lines = usage_report.console_lines(usage)
    assert len(lines) <= 8
    assert lines[1] == "idle: 5 claims holding 5 devices (first 3)"
    assert lines[2:5] == ["  team-b/c%d: %s (unknown)" % (i, IDLE_REASON) for i in range(3)]
    assert lines[-1] == "full nodes (no free device): gpu-node-2"


SHARED = dict(device("gpu-0", "in_use", {"namespace": "ml", "name": "a-gpu", "shared": False},
                     [pod("ml", "a"), pod("ml", "b")], "2026-12-05T12:28:00Z", 60, memory="23028Mi"),
              shareable=True, memory_consumed="18Gi", memory_free="4596Mi",
              shares=[{"namespace": "ml", "name": "a-gpu", "state": "in_use", "share_id": "1111-aaaa",
                       "consumed": {"memory": "8Gi"}},
                      {"namespace": "ml", "name": "b<i>-gpu", "state": "in_use", "share_id": "2222-bbbb",
                       "consumed": {"memory": "10Gi"}}])


def test_a_shared_device_shows_memory_consumed_free_and_each_claim_with_its_share():
    usage = copy.deepcopy(USAGE)
    usage["nodes"][0]["devices"][0] = SHARED
    page = usage_report.html_page(usage)
    row = table_with_header(page, "device")[1][1]
    assert row[3] == "23028Miconsumed 18Gi, free 4596Mi"
    assert row[5] == ("ml/a-gpu \u00b7 memory 8Gi \u00b7 share 1111-aaaa"
                      "ml/b<i>-gpu \u00b7 memory 10Gi \u00b7 share 2222-bbbb")
    assert "b&lt;i&gt;-gpu" in page
    text = markdown_table(usage_report.markdown(usage), "### gpu-node-1\n\n3 devices: 1 in use, 0 idle, 2 free")
    assert ("| gpu-0 | gpu | NVIDIA A10 | 23028Mi (consumed 18Gi, free 4596Mi) | in use | ml/a-gpu \u00b7 memory 8Gi "
            "\u00b7 share 1111-aaaa; ml/b\\<i>-gpu \u00b7 memory 10Gi \u00b7 share 2222-bbbb |") in text[2]
    # a device no share can hold keeps its one-line memory cell
    assert table_with_header(page, "device")[2][1][3] == "22.5 GiB"


def test_a_tainted_gpu_shows_why_and_since_when_on_the_page_and_in_markdown():
    usage = copy.deepcopy(USAGE)
    usage["summary"].update(tainted=1, free=2)
    usage["nodes"][0]["totals"].update(tainted=1, free=1)
    usage["nodes"][0]["devices"][1].update(state="tainted", taints=[
        {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule", "time_added": "2026-12-05T15:00:00Z",
         "rule": None},
        {"key": "dra.gpu/maintenance", "value": "", "effect": "NoExecute", "time_added": "2026-12-05T15:10:00Z",
         "rule": "dra-gpu-maintenance-gpu-node-1-gpu-1"}])
    page = usage_report.html_page(usage)
    assert "tainted (out of service)" in page
    assert '<span class="taint">gpu.nvidia.com/xid=79:NoSchedule since 2026-12-05T15:00:00Z</span>' in page
    assert ('<span class="taint">dra.gpu/maintenance:NoExecute (DeviceTaintRule dra-gpu-maintenance-gpu-node-1-gpu-1) '
            'since 2026-12-05T15:10:00Z</span>') in page
    assert "3 devices: 1 in use, 0 idle, 1 free, 1 tainted" in page
    text = usage_report.markdown(usage)
    assert "tainted (out of service); **TAINTED**: gpu.nvidia.com/xid=79:NoSchedule since 2026-12-05T15:00:00Z; " \
           "dra.gpu/maintenance:NoExecute (DeviceTaintRule dra-gpu-maintenance-gpu-node-1-gpu-1)" in text
    assert "tainted" not in usage_report.html_page(USAGE)
    usage["by_node_model"][0].update(tainted=1, free=0)
    chart = usage_chart.bar_chart(usage_chart.chart_rows(usage["by_node_model"])[0])
    assert 'class="tainted"' in chart and "tainted (out of service)" in chart
    assert 'class="tainted"' not in usage_chart.bar_chart(usage_chart.chart_rows(USAGE["by_node_model"])[0])
