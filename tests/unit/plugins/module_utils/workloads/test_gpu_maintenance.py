from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_maintenance as maint


def slice_of(node, *devices):
    return {"spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node},
                     "devices": [{"name": name, "attributes": {
                         "uuid": {"string": "GPU-%s-%s" % (node, name)}, "productName": {"string": product},
                         "driverVersion": {"version": "580.126.20"}}} for name, product in devices]}}


DEVICES = maint.published([slice_of("node-a", ("gpu-0", "NVIDIA A10"), ("gpu-1", "NVIDIA A10")),
                           slice_of("node-b", ("gpu-0", "NVIDIA L4"), ("gpu-2", "NVIDIA L4"))])


def names(devices):
    return ["%s/%s" % (d["node"], d["device"]) for d in devices]


def test_devices_are_chosen_by_name_uuid_and_selector():
    assert names(maint.choose(DEVICES, by_name=[{"node": "node-b", "device": "gpu-2"}])) == ["node-b/gpu-2"]
    assert names(maint.choose(DEVICES, uuids=["GPU-node-a-gpu-1"])) == ["node-a/gpu-1"]
    assert names(maint.choose(DEVICES, selector={"productName": "NVIDIA L4"})) == ["node-b/gpu-0", "node-b/gpu-2"]
    assert len(maint.choose(DEVICES, selector={"driverVersion": "580.126.20"})) == 4


def test_only_the_newest_complete_generation_of_a_pool_counts():
    old = slice_of("node-a", ("gpu-0", "NVIDIA A10"), ("gpu-7", "NVIDIA A10"))
    new = slice_of("node-a", ("gpu-0", "NVIDIA A10"))
    old["spec"]["pool"].update(generation=1, resourceSliceCount=1)
    new["spec"]["pool"].update(generation=2, resourceSliceCount=1)
    devices = maint.published([old, new])
    assert names(devices) == ["node-a/gpu-0"]
    with pytest.raises(maint.MaintenanceRefused):
        maint.choose(devices, by_name=[{"node": "node-a", "device": "gpu-7"}])


def test_a_boolean_attribute_is_chosen_by_a_yaml_boolean():
    item = slice_of("node-c", ("gpu-0", "NVIDIA H100"))
    item["spec"]["devices"][0]["attributes"]["iommuFDEnabled"] = {"bool": True}
    assert names(maint.choose(maint.published([item]), selector={"iommuFDEnabled": True})) == ["node-c/gpu-0"]


def test_what_matches_nothing_is_refused_by_name():
    with pytest.raises(maint.MaintenanceRefused) as err:
        maint.choose(DEVICES, by_name=[{"node": "node-b", "device": "gpu-9"}], uuids=["GPU-x"])
    assert err.value.details["unmatched"] == ["node-b/gpu-9", "uuid GPU-x"] and "nothing was changed" in str(err.value)


def test_rules_are_named_labelled_and_select_one_device():
    body = maint.rule(DEVICES[3], "NoExecute", "ticket-1")
    assert body["metadata"] == {"name": "dra-gpu-maintenance-node-b-gpu-2",
                                "labels": {"app.kubernetes.io/managed-by": "dra.gpu.gpu_maintenance"}}
    assert body["spec"] == {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-2"},
                            "taint": {"key": "dra.gpu/maintenance", "effect": "NoExecute", "value": "ticket-1"}}
    assert maint.rule_name("Pool_With.Odd", "gpu-0").startswith("dra-gpu-maintenance-") and \
        len(maint.rule_name("Pool_With.Odd", "gpu-0")) == len("dra-gpu-maintenance-") + 16


def stored(body, effect=None):
    body = dict(body, metadata=dict(body["metadata"], resourceVersion="7"))
    taint = dict(body["spec"]["taint"], timeAdded="2026-12-06T20:00:00Z")
    if effect:
        taint["effect"] = effect
    return dict(body, spec=dict(body["spec"], taint=taint))


def test_plan_creates_updates_and_is_idempotent():
    chosen = [DEVICES[3]]
    assert [r["metadata"]["name"] for r in maint.plan([], chosen, "out_of_service")["create"]] == \
        ["dra-gpu-maintenance-node-b-gpu-2"]
    same = stored(maint.rule(DEVICES[3], "NoSchedule", None))
    assert maint.plan([same], chosen, "out_of_service") == {"create": [], "update": [], "delete": []}
    harder = maint.plan([same], chosen, "out_of_service", effect="NoExecute")
    assert harder["update"][0]["spec"]["taint"]["effect"] == "NoExecute"
    assert harder["update"][0]["metadata"]["resourceVersion"] == "7"


def test_back_in_service_deletes_only_our_rules():
    ours = stored(maint.rule(DEVICES[3], "NoSchedule", None))
    theirs = {"metadata": {"name": "dra-gpu-maintenance-node-a-gpu-0"}, "spec": {}}
    assert maint.plan([ours, theirs], [], "in_service")["delete"] == ["dra-gpu-maintenance-node-b-gpu-2"]
    assert maint.plan([ours, theirs], [DEVICES[0]], "in_service")["delete"] == []
    with pytest.raises(maint.MaintenanceRefused) as err:
        maint.plan([theirs], [DEVICES[0]], "out_of_service")
    assert err.value.details["foreign"] == ["dra-gpu-maintenance-node-a-gpu-0"]


def claim(device, pod_uid, pool="node-b"):
    return {"status": {"allocation": {"devices": {"results": [{"driver": "gpu.nvidia.com", "pool": pool,
                                                               "device": device}]}},
                       "reservedFor": [{"resource": "pods", "uid": pod_uid}]}}


def pod(name, uid, phase="Running", labels=None):
    return {"metadata": {"namespace": "ml", "name": name, "uid": uid, "labels": labels or {}},
            "spec": {"nodeName": "node-b"}, "status": {"phase": phase}}


def test_the_pods_on_a_device_and_the_budgets_that_guard_them():
    claims = [claim("gpu-2", "u1"), claim("gpu-0", "u2"), claim("gpu-2", "u3")]
    pods = [pod("a", "u1", labels={"app": "a"}), pod("b", "u2"), pod("done", "u3", phase="Succeeded")]
    holders = maint.pods_on([DEVICES[3]], claims, pods)
    assert [maint.plain(h) for h in holders] == [{"namespace": "ml", "name": "a", "node": "node-b",
                                                  "devices": ["node-b/gpu-2"]}]
    budget = {"metadata": {"namespace": "ml", "name": "keep-a", "generation": 1},
              "spec": {"selector": {"matchLabels": {"app": "a"}}},
              "status": {"disruptionsAllowed": 0, "observedGeneration": 1}}
    assert maint.refusing_budgets([budget], holders) == ["ml/keep-a"]
    assert maint.refusing_budgets([dict(budget, status={"disruptionsAllowed": 1, "observedGeneration": 1})],
                                  holders) == []
