"""The simulated driver's health taints have the shapes NVIDIA's plugin publishes.

Pinned from NVIDIA's cmd/gpu-kubelet-plugin/device_health.go (healthEventToTaint, xidsToSkip)
and allocatable.go (AddOrUpdateTaint) at main 95932046, treated as v0.5.0."""

import pytest

from labctl.apiserver.sim import gpus, health

DEVICES = ["gpu-0", "gpu-1", "gpu-2", "gpu-3-mig-1g10gb-19-0", "gpu-3-mig-3g40gb-9-4"]


def test_keys_and_gate_are_nvidias():
    assert (health.TAINT_XID, health.TAINT_GPU_LOST, health.TAINT_UNMONITORED) == (
        "gpu.nvidia.com/xid", "gpu.nvidia.com/gpu-lost", "gpu.nvidia.com/unmonitored")
    assert health.GATE == "NVMLDeviceHealthCheck"


@pytest.mark.parametrize("xid, effect", [(48, "NoSchedule"), (79, "NoSchedule"), (63, "NoSchedule"),
                                         (13, "None"), (31, "None"), (43, "None"), (45, "None"),
                                         (68, "None"), (109, "None")])
def test_an_xid_taints_only_its_device_with_the_number_as_value(xid, effect):
    events = [health.parse_event("xid=%d" % xid, "gpu-2")]
    assert health.device_taints(events, DEVICES) == {
        "gpu-2": [{"key": "gpu.nvidia.com/xid", "value": str(xid), "effect": effect}]}


def test_a_lost_gpu_taints_every_device_of_the_node_without_a_value():
    taints = health.device_taints([health.parse_event("gpu-lost")], DEVICES)
    assert sorted(taints) == sorted(DEVICES)
    assert all(t == [{"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule"}] for t in taints.values())


def test_an_unmonitored_gpu_taints_the_gpu_and_its_mig_devices_with_effect_none():
    taints = health.device_taints([health.parse_event("unmonitored", "gpu-3-mig-1g10gb-19-0")], DEVICES)
    assert sorted(taints) == ["gpu-3-mig-1g10gb-19-0", "gpu-3-mig-3g40gb-9-4"]
    assert taints["gpu-3-mig-3g40gb-9-4"] == [{"key": "gpu.nvidia.com/unmonitored", "effect": "None"}]


def test_one_taint_per_key_the_latest_xid_wins_and_keys_add_up():
    events = [health.parse_event("xid=48", "gpu-1"), health.parse_event("xid=63", "gpu-1"),
              health.parse_event("gpu-lost")]
    assert health.device_taints(events, DEVICES)["gpu-1"] == [
        {"key": "gpu.nvidia.com/xid", "value": "63", "effect": "NoSchedule"},
        {"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule"}]


def test_an_xid_on_an_unknown_device_is_ignored():
    assert not health.device_taints([health.parse_event("xid=48", "gpu-9")], DEVICES)


def test_the_plugin_sends_no_time_added_and_keeps_the_servers_for_an_unchanged_taint():
    devices = health.with_taints([{"name": "gpu-2"}, {"name": "gpu-1"}], [health.parse_event("xid=48", "gpu-2")])
    assert "timeAdded" not in devices[0]["taints"][0] and "taints" not in devices[1]
    stamped = dict(devices[0]["taints"][0], timeAdded="2026-12-06T20:00:00Z")
    stored = [{"spec": {"devices": [dict(devices[0], taints=[stamped])]}}]
    assert health.copy_time_added(devices, stored)[0]["taints"][0]["timeAdded"] == "2026-12-06T20:00:00Z"
    changed = health.with_taints([{"name": "gpu-2"}], [health.parse_event("xid=79", "gpu-2")])
    assert "timeAdded" not in health.copy_time_added(changed, stored)[0]["taints"][0]


@pytest.mark.parametrize("text, device", [("xid=abc", "gpu-0"), ("xid", "gpu-0"), ("fire", "gpu-0"),
                                          ("gpu-lost=1", None), ("xid=48", None), ("unmonitored", None)])
def test_malformed_faults_are_refused(text, device):
    with pytest.raises(health.FaultError):
        health.parse_event(text, device)


def test_taints_ride_on_the_simulated_devices():
    devices = gpus.node_devices("node-b", [{"model": "L4", "count": 3}])
    published = health.with_taints(devices, [health.parse_event("xid=79", "gpu-2")])
    assert [d.get("taints") for d in published] == [
        None, None, [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]]
