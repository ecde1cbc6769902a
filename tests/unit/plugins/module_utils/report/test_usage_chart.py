from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.report import usage_chart

FULL, EMPTY = "\u2588", "\u2591"


def row(node, devices, allocated=0, model="NVIDIA L4"):
    return {"node": node, "model": model, "devices": devices, "allocated": allocated, "free": devices - allocated}


# ----- which rows are charted -------------------------------------------------------------------

def test_every_row_is_charted_up_to_the_limit():
    rows = [row("a", 1), row("b", 2)]
    assert usage_chart.chart_rows(rows, limit=2) == (rows, 0)
    assert usage_chart.chart_rows(None) == ([], 0)


def test_beyond_the_limit_the_biggest_rows_stay_in_their_order():
    rows = [row("a", 1), row("b", 8), row("c", 2), row("d", 8), row("e", 4)]
    assert usage_chart.chart_rows(rows, limit=3) == ([row("b", 8), row("d", 8), row("e", 4)], 2)


def test_among_equally_big_rows_the_first_ones_are_kept():
    rows = [row(name, 1) for name in "abcd"]
    assert [r["node"] for r in usage_chart.chart_rows(rows, limit=2)[0]] == ["a", "b"]


def test_the_left_out_rows_are_counted_in_words():
    assert usage_chart.left_out_text(3) == ("3 more node/model rows with fewer devices are not charted; the tables "
                                            "below list every device.")


# ----- labels -----------------------------------------------------------------------------------

def test_a_row_is_labelled_node_dot_model():
    assert usage_chart.row_label(row("gpu-1", 1)) == "gpu-1 \u00b7 NVIDIA L4"
    assert usage_chart.row_label(row("gpu-1", 1, model=None)) == "gpu-1 \u00b7 unknown model"


def test_a_long_node_name_gives_way_so_the_model_still_shows():
    label = usage_chart._shortened_label(row("n" * 80, 1, model="NVIDIA H100 80GB HBM3"))
    assert len(label) == usage_chart._LABEL_CHARS
    assert label.endswith("\u2026 \u00b7 NVIDIA H100 80GB HBM3")


def test_a_long_model_is_cut_to_half_the_label():
    label = usage_chart._shortened_label(row("gpu-1", 1, model="M" * 40))
    assert label == "gpu-1 \u00b7 " + "M" * (usage_chart._LABEL_CHARS // 2 - 1) + "\u2026"


def test_short_labels_are_left_whole():
    assert usage_chart._shortened_label(row("gpu-1", 1)) == usage_chart.row_label(row("gpu-1", 1))


# ----- the SVG chart ----------------------------------------------------------------------------

def widths(svg, kind):
    return [float(w) for w in re.findall(r'<rect class="%s" [^>]*width="([\d.]+)"' % kind, svg)]


def test_nothing_to_chart_is_no_chart():
    assert usage_chart.bar_chart([]) == ""


def test_bars_share_one_scale_and_split_allocated_from_free():
    svg = usage_chart.bar_chart([row("a", 8, allocated=2), row("b", 4, allocated=4), row("c", 0)])
    allocated, free = widths(svg, "allocated"), widths(svg, "free")
    assert allocated[0] == pytest.approx(allocated[1] / 2, abs=0.1)
    assert allocated[0] + free[0] == pytest.approx(2 * (allocated[1] + free[1]), abs=0.1)
    assert free[1] == 0 and allocated[2] == free[2] == 0
    assert "2 allocated, 6 free of 8" in svg and "0 allocated, 0 free of 0" in svg


def test_the_chart_has_a_row_per_entry_and_its_height_follows():
    svg = usage_chart.bar_chart([row("a", 1), row("b", 1), row("c", 1)])
    assert svg.count('<g class="bar-row">') == 3
    height = int(re.search(r'<svg [^>]*height="(\d+)"', svg).group(1))
    assert height == usage_chart._LEGEND_HEIGHT + 3 * usage_chart._ROW_HEIGHT


def test_labels_from_the_cluster_are_escaped_and_kept_whole_in_the_title():
    long_node = "<b>" + "n" * 60
    svg = usage_chart.bar_chart([row(long_node, 1)])
    assert "<b>" not in svg and "&lt;b&gt;" in svg
    assert "<title>&lt;b&gt;%s \u00b7 NVIDIA L4</title>" % ("n" * 60) in svg


def test_the_chart_is_plain_svg_without_scripts_or_external_files():
    svg = usage_chart.bar_chart([row("a", 1)])
    assert svg.startswith('<svg class="chart" xmlns="http://www.w3.org/2000/svg"') and svg.endswith("</svg>")
    assert "<script" not in svg and "href" not in svg
    assert usage_chart.ALLOCATED_COLOUR in svg and usage_chart.FREE_COLOUR in svg


# ----- the text chart ---------------------------------------------------------------------------

@pytest.mark.parametrize("allocated,devices,filled", [(1, 100, 1), (99, 100, 19), (100, 100, 20), (0, 0, 0)])
def test_text_bar_never_rounds_the_last_device_away(allocated, devices, filled):
    drawn = usage_chart.text_bar({"devices": devices, "allocated": allocated})
    assert len(drawn) == 20 and drawn.count("\u2588") == filled


@pytest.mark.parametrize("allocated, devices, expected", [
    (0, 4, EMPTY * 20), (4, 4, FULL * 20), (2, 4, FULL * 10 + EMPTY * 10), (1, 3, FULL * 7 + EMPTY * 13),
])
def test_text_bars_are_proportional(allocated, devices, expected):
    assert usage_chart.text_bar({"devices": devices, "allocated": allocated}) == expected


def test_a_row_without_numbers_is_an_empty_bar():
    assert usage_chart.text_bar({}) == EMPTY * 20


def test_the_text_chart_aligns_its_bars():
    lines = usage_chart.text_chart([row("gpu-1", 2, allocated=1), row("gpu-node-22", 4, model=None)])
    assert lines == ["gpu-1 \u00b7 NVIDIA L4            " + FULL * 10 + EMPTY * 10 + "  1/2 allocated",
                     "gpu-node-22 \u00b7 unknown model  " + EMPTY * 20 + "  0/4 allocated"]
    assert usage_chart.text_chart([]) == []
