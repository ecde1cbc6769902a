from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints

XID = {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule", "timeAdded": "2026-12-01T10:00:00Z"}


def _rule(name, effect, **selector):
    return {"metadata": {"name": name},
            "spec": {"deviceSelector": selector, "taint": {"key": "dra.gpu/maintenance", "effect": effect}}}


def test_a_slice_taint_comes_first_then_the_rules_that_select_the_device():
    device = {"name": "gpu-0", "taints": [XID]}
    rules = [_rule("all-gpus", "NoExecute", driver="gpu.nvidia.com"),
             _rule("other-pool", "NoSchedule", pool="node-b"),
             _rule("this-gpu", "NoSchedule", driver="gpu.nvidia.com", pool="node-a", device="gpu-0")]
    found = device_taints.effective("gpu.nvidia.com", "node-a", device, rules)
    assert [(t["key"], t["rule"]) for t in found] == [
        ("gpu.nvidia.com/xid", None), ("dra.gpu/maintenance", "all-gpus"), ("dra.gpu/maintenance", "this-gpu")]
    assert found[0] == {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule",
                        "time_added": "2026-12-01T10:00:00Z", "rule": None}


def test_a_rule_without_a_taint_or_for_another_driver_adds_nothing():
    rules = [{"metadata": {"name": "empty"}, "spec": {"deviceSelector": {}}},
             _rule("other-driver", "NoSchedule", driver="example.com")]
    assert device_taints.effective("gpu.nvidia.com", "node-a", {"name": "gpu-0"}, rules) == []


def test_only_noschedule_and_noexecute_block_new_claims():
    assert device_taints.blocks([{"effect": "NoExecute"}])
    assert device_taints.blocks([{"effect": "None"}, {"effect": "NoSchedule"}])
    assert not device_taints.blocks([{"effect": "None"}])
    assert not device_taints.blocks(None)


def test_describe_names_the_rule_and_the_time():
    slice_taint = device_taints.effective("d", "p", {"name": "x", "taints": [XID]})[0]
    assert device_taints.describe(slice_taint) == "gpu.nvidia.com/xid=79:NoSchedule since 2026-12-01T10:00:00Z"
    ruled = device_taints.effective("d", "p", {"name": "x"}, [_rule("drain-x", "NoExecute", device="x")])[0]
    assert device_taints.describe(ruled) == "dra.gpu/maintenance:NoExecute (DeviceTaintRule drain-x)"
