"""Restarting the API server slows the controllers for a while (their watches and RBAC
caches rebuild), which would disturb the tests after it: marked to run last (conftest.py)."""

import os
import subprocess
import time

import pytest

from conftest import RESOURCE, driver_slice, wait_in_thread

pytestmark = pytest.mark.restarts_api_server


def test_wait_survives_an_api_server_restart(api, custom, test_driver):
    thread, outcome = wait_in_thread(api, test_driver, timeout=90, min_devices=1)
    time.sleep(1.0)
    lab = os.path.join(os.path.dirname(__file__), "..", "..", "lab", "lab.py")
    subprocess.run([os.environ.get("LAB_PYTHON", "python"), lab, "restart", "kube-apiserver"], check=True)
    assert "done" not in outcome, outcome
    custom.create_cluster_custom_object(*RESOURCE, driver_slice(test_driver, "p", "node-b"))
    thread.join(60)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"]["watch"]["reconnects"] >= 1
    assert outcome["result"]["summary"]["total"]["count"] == 1
