"""The GPU usage page in a real browser: headless chromium renders it, we keep a screenshot in
tests/output/ for people to look at, and check what chromium built from it.

Without chromium the test is skipped on a workstation, but fails on CI (CI set), where a skip
would hide that the page was never rendered."""

import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# tests/integration/browser.py, behind this directory on the path: nothing there shadows a module here.
sys.path.append(os.path.join(REPO, "tests", "integration"))
# The collection as Ansible finds it (make bootstrap links build/collections/ansible_collections/dra/gpu).
for _path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(":") + [os.path.join(REPO, "build", "collections")]:
    if _path and _path not in sys.path:
        sys.path.append(_path)

import browser  # noqa: E402
from ansible_collections.dra.gpu.plugins.module_utils.report import usage_report  # noqa: E402

SCREENSHOT = os.path.join(REPO, "tests", "output", "report-screenshot-sample.png")
IDLE_REASON = "its only pod team-b/job-x-0 is Pending (ImagePullBackOff)"


def _device(name, model, state="free", claim=None, pods=(), since=None, age=None, reason=None):
    return {"name": name, "driver": "gpu.nvidia.com", "pool": "p", "type": "gpu", "model": model,
            "memory": "22.5 GiB", "memory_bytes": 24152899584, "state": state, "claim": claim, "pods": list(pods),
            "since": since, "age_seconds": age, "idle_reason": reason}


def sample_usage():
    train = {"namespace": "team-a", "name": "train-0", "phase": "Running", "terminating": False,
             "owner": {"kind": "Deployment", "name": "train"}}
    job = {"namespace": "team-b", "name": "job-x-0", "phase": "Pending", "terminating": False,
           "owner": {"kind": "Job", "name": "job-x"}}
    busy = {"namespace": "team-a", "name": "train-abc12", "shared": False}
    idle_claim = {"namespace": "team-b", "name": "job-x-claim", "shared": False}
    node_1 = [_device("gpu-%d" % i, "NVIDIA A10") for i in range(4)]
    node_1[0] = _device("gpu-0", "NVIDIA A10", "in_use", busy, [train], "2026-12-05T12:28:00Z", 11520)
    node_2 = [_device("gpu-%d" % i, "NVIDIA L4") for i in range(2)]
    node_2[1] = _device("gpu-1", "NVIDIA L4", "idle", idle_claim, [job], "2026-12-05T13:33:00Z", 7620, IDLE_REASON)
    idle = dict(idle_claim, state="idle", devices=["gpu-node-2/gpu-1"], pods=[dict(job, node="gpu-node-2")],
                since="2026-12-05T13:33:00Z", age_seconds=7620, since_source="pod scheduled", idle_reason=IDLE_REASON)
    return {
        "generated_at": "2026-12-05T15:40:00Z",
        "summary": {"devices": 6, "allocated": 2, "in_use": 1, "idle": 1, "free": 4, "claims": 2, "idle_claims": 1,
                    "pods": 2, "line": "6 devices on 2 nodes: 1 in use, 1 idle (allocated, no running pod), 4 free"},
        "nodes": [{"name": "gpu-node-1", "ready": True, "totals": {"devices": 4, "in_use": 1, "idle": 0, "free": 3},
                   "devices": node_1},
                  {"name": "gpu-node-2", "ready": True, "totals": {"devices": 2, "in_use": 0, "idle": 1, "free": 1},
                   "devices": node_2}],
        "claims": [idle], "idle": [idle],
        "by_namespace": [
            {"namespace": "team-a", "claims": 1, "devices": 1, "pods": 1, "idle_claims": 0, "idle_devices": 0},
            {"namespace": "team-b", "claims": 1, "devices": 1, "pods": 1, "idle_claims": 1, "idle_devices": 1}],
        "by_node_model": [{"node": "gpu-node-1", "model": "NVIDIA A10", "devices": 4, "allocated": 1, "free": 3},
                          {"node": "gpu-node-2", "model": "NVIDIA L4", "devices": 2, "allocated": 1, "free": 1}],
        "free_by_class": [{"class": "gpu.nvidia.com", "previewable": True, "reason": None, "total": 6, "free": 4,
                           "by_node": {"gpu-node-1": 3, "gpu-node-2": 1}},
                          {"class": "mig.nvidia.com", "previewable": True, "reason": None, "total": 0, "free": 0,
                           "by_node": {}}],
        "notes": ["a sample: two nodes, one claim in use and one idle"],
    }


def test_report_renders_in_chromium(tmp_path):
    if browser.chromium_path() is None and not os.environ.get("CI"):
        pytest.skip("chromium is not installed (apt-get install chromium); on CI this fails instead")
    page = tmp_path / "report.html"
    page.write_text(usage_report.html_page(sample_usage(), cluster_name="sample"), encoding="utf-8")

    browser.screenshot(str(page), SCREENSHOT, width=1400, height=1500)
    dom = browser.dump_dom(str(page))

    assert os.path.getsize(SCREENSHOT) > 10000
    assert "gpu-node-1" in dom and "gpu-node-2" in dom
    assert "job-x-claim" in dom and IDLE_REASON in dom and 'class="idle"' in dom
    assert "<svg" in dom and dom.count('class="bar-row"') == 2
