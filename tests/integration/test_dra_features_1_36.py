"""What dra_readiness reports a 1.36 API server serves (issue 29: a test per supported minor; the
1.35 test lab's is in test_role_preflight.py, the current release's in
test_demo_on_current_release.py and test_gpu_maintenance.py). 1.36 is where memory shares,
partitionable devices, device taints and the extended-resource path turn on by default, while
DeviceTaintRules stay off (beta, v1beta2 only). The lab is started with one of those gates
turned off, DRAExtendedResource: the report must follow what the server does, learned by a
server-side dry run, not what the version's table says.

The 1.36.3 build is the node lab's (run-node-lab.sh upgrades to it); here only an API-server lab
of it starts (about 10 s once built)."""

import os

import pytest

import old_lab
from conftest import run_module

VERSION = "1.36.3"
FLIPPED = "DRAExtendedResource"


def settings():
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + 650, "driver_mode": "always",
            "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-features-" + VERSION),
            "feature_gates": FLIPPED + "=false"}


@pytest.fixture(scope="module")
def lab_1_36():
    kubeconfig = old_lab.start(VERSION, **settings())
    yield dict(os.environ, KUBECONFIG=kubeconfig)
    old_lab.stop(VERSION, **settings())


def test_readiness_reports_what_a_1_36_server_serves_with_a_gate_turned_off(lab_1_36):
    result = run_module("dra.gpu.dra_readiness", {}, env=lab_1_36)
    assert not result.get("failed"), result
    features = result["dra_features"]
    assert (features["server_version"], features["target_version"]) == (VERSION, "1.37")
    seen = dict((f["name"], (f["on"], f["probed"], f["flipped"])) for f in features["features"])
    assert seen == {
        "prioritized_list": (True, True, False), "admin_access": (True, True, False),
        "partitionable_devices": (True, True, False), "consumable_capacity": (True, True, False),
        "device_taints": (True, True, False),
        # beta and off in 1.36, and only v1beta2: the collection uses resource.k8s.io/v1
        "device_taint_rules": (False, True, False),
        # on by default in 1.36, turned off on this server: the dry run sees the field dropped
        "extended_resource": (False, True, True),
        "device_status": (True, False, False)}, seen
    extended = [f for f in features["features"] if f["name"] == "extended_resource"][0]
    assert extended["gate"] == FLIPPED and extended["default"] is True, extended
    # for the target (1.37), everything is on by default
    assert all(f["target_on"] for f in features["features"]), features["features"]
