"""The usage report as text: Markdown tables with the right rows, cluster text escaped for
Markdown, text bars for the chart, and a short console."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.dra.gpu.plugins.module_utils.report import usage_text
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.report.usage_samples import (
    EMPTY, IDLE_CLAIM, IDLE_REASON, SHARED, USAGE, tainted_usage)


def test_empty_usage_renders_every_section_as_text():
    text = usage_text.markdown(EMPTY)
    assert "No idle allocations." in text and "| 0 | 0 | 0 | 0 |" in text
    assert usage_text.console_lines(EMPTY) == [EMPTY["summary"]["line"], "idle: none",
                                               "free per class: no DeviceClass", "full nodes: none"]


def markdown_table(text, heading):
    section = text.split(heading + "\n\n", 1)[1].split("\n\n", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_markdown_sections_and_tables():
    text = usage_text.markdown(USAGE, "lab")
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
    chart = usage_text.markdown(USAGE).split("```\n")[1].split("\n```")[0].splitlines()
    assert chart == [
        "gpu-node-1 \u00b7 NVIDIA A10  " + "\u2588" * 10 + "\u2591" * 10 + "  1/2 allocated",
        "gpu-node-1 \u00b7 other       " + "\u2591" * 20 + "  0/1 allocated",
        "gpu-node-2 \u00b7 NVIDIA L4   " + "\u2588" * 10 + "\u2591" * 10 + "  1/2 allocated"]


def test_console_lines():
    assert usage_text.console_lines(USAGE) == [
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
    lines = usage_text.console_lines(usage)
    assert len(lines) <= 8
    assert lines[1] == "idle: 5 claims holding 5 devices (first 3)"
    assert lines[2:5] == ["  team-b/c%d: %s (unknown)" % (i, IDLE_REASON) for i in range(3)]
    assert lines[-1] == "full nodes (no free device): gpu-node-2"


def test_a_shared_device_in_markdown_shows_memory_consumed_free_and_each_claim_with_its_share():
    usage = copy.deepcopy(USAGE)
    usage["nodes"][0]["devices"][0] = SHARED
    text = markdown_table(usage_text.markdown(usage), "### gpu-node-1\n\n3 devices: 1 in use, 0 idle, 2 free")
    assert ("| gpu-0 | gpu | NVIDIA A10 | 23028Mi (consumed 18Gi, free 4596Mi) | in use | ml/a-gpu \u00b7 memory 8Gi "
            "\u00b7 share 1111-aaaa; ml/b\\<i>-gpu \u00b7 memory 10Gi \u00b7 share 2222-bbbb |") in text[2]


def test_a_tainted_gpu_in_markdown_shows_why_and_since_when():
    usage = tainted_usage()
    text = usage_text.markdown(usage)
    assert "tainted (out of service); **TAINTED**: gpu.nvidia.com/xid=79:NoSchedule since 2026-12-05T15:00:00Z; " \
           "dra.gpu/maintenance:NoExecute (DeviceTaintRule dra-gpu-maintenance-gpu-node-1-gpu-1)" in text
