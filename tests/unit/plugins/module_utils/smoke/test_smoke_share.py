"""The smoke test of a share of a card (share_memory, issue 27 item 6): the objects it makes and
its verdicts (smoke_share.py), against plain dicts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_share
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure

DRIVER = "gpu.nvidia.com"


def device(name, memory="23034Mi", uuid="GPU-1"):
    """As NVIDIA's plugin (main at 95932046, taken as 0.5.0) publishes an L4 in memory mode."""
    return {"name": name, "allowMultipleAllocations": True, "attributes": {"uuid": {"string": uuid}},
            "capacity": {"memory": {"value": memory, "requestPolicy": {
                "default": memory, "validRange": {"min": "1Mi", "max": memory, "step": "1Mi"}}}}}


def pool(node, *devices):
    return {"metadata": {"name": node + "-slice"}, "spec": {"driver": DRIVER, "nodeName": node,
                                                            "pool": {"name": node}, "devices": list(devices)}}


def claim(name, node, dev, consumed=None, share_id=None):
    result = {"request": "gpu", "driver": DRIVER, "pool": node, "device": dev}
    if share_id:
        result["shareID"] = share_id
    if consumed:
        result["consumedCapacity"] = {"memory": consumed}
    return {"metadata": {"name": name, "namespace": "ns"}, "status": {"allocation": {"devices": {"results": [result]}}}}


def checks(params):
    return smoke.input_problems(params)


def test_share_memory_must_be_a_positive_quantity_and_runs_alone():
    assert checks({"share_memory": "8Gi", "count": 1, "pods": 1, "timeout": 60, "namespace": "ns",
                   "device_class": "gpu.nvidia.com"}) == []
    found = checks({"share_memory": "8 GB", "count": 2, "pods": 3, "timeout": 60, "namespace": "ns",
                    "device_class": "gpu.nvidia.com", "first_available": [{"name": "a"}]})
    assert "share_memory is '8 GB', which is not a quantity" in found[0]
    assert found[1] == ("share_memory runs two pods with a claim of its own each, for one device; leave pods and "
                        "count and first_available unset")
    prefixed = smoke.input_problems({"share_memory": "0", "count": 1, "pods": 1, "timeout": 60,
                                     "namespace": "ns", "device_class": "c"}, "smoke_test_")
    assert prefixed == ["smoke_test_share_memory is '0'; a share must ask for some memory, like 8Gi"]


def test_a_share_claim_asks_for_memory_of_one_device_with_the_selectors():
    body = smoke_share.share_claim("smoke-r-share-1", "r", "gpu.nvidia.com", "8Gi", ["a == b"], "resource.k8s.io/v1")
    assert body["kind"] == "ResourceClaim" and body["metadata"]["labels"][smoke.RUN_LABEL] == "r"
    assert body["spec"] == {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "capacity": {"requests": {"memory": "8Gi"}},
        "selectors": [{"cel": {"expression": "a == b"}}]}}]}}


def test_holders_run_until_removed_within_a_deadline_and_probes_run_once():
    s = smoke.settings({"share_memory": "8Gi", "pod_annotations": {"a": "b"}})
    holder = smoke_share.share_pod(smoke.HOLDER, "smoke-r-hold-0", "r", s, "smoke-r-share-0", 360)
    assert holder["spec"]["restartPolicy"] == "Always" and holder["spec"]["activeDeadlineSeconds"] == 360
    assert holder["spec"]["containers"][0]["command"] == ["sleep", "360"]
    assert holder["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "smoke-r-share-0"}]
    assert holder["metadata"]["labels"][smoke.ROLE_LABEL] == "holder" and "annotations" not in holder["metadata"]
    probe = smoke_share.share_pod(smoke.PROBE, "smoke-r-0", "r", s, "smoke-r-share-0", 360)
    assert probe["spec"]["restartPolicy"] == "Never" and "activeDeadlineSeconds" not in probe["spec"]
    assert probe["spec"]["containers"][0]["command"] == smoke.DEFAULT_COMMAND
    assert probe["metadata"]["annotations"] == {"a": "b"}


def test_the_second_share_is_pinned_to_the_first_ones_device_by_its_uuid():
    assert smoke_share.pin_selector(DRIVER, {"name": "gpu-0", "attributes": {"uuid": {"string": "GPU-9"}}}) == \
        "device.attributes['gpu.nvidia.com'].uuid == 'GPU-9'"
    with pytest.raises(SmokeFailure, match="device gpu-0 does not publish"):
        smoke_share.pin_selector(DRIVER, {"name": "gpu-0", "attributes": {}})


def test_two_shares_of_one_device_pass_and_whole_or_split_or_smaller_ones_fail():
    one = smoke_share.share_of(claim("a", "node-b", "gpu-0", "8Gi", "s1"))
    two = smoke_share.share_of(claim("b", "node-b", "gpu-0", "8192Mi", "s2"))
    assert one == {"claim": "a", "driver": DRIVER, "pool": "node-b", "device": "gpu-0", "share_id": "s1",
                   "consumed": {"memory": "8Gi"}}
    smoke_share.check_shares([one, two], "8Gi")
    elsewhere = smoke_share.share_of(claim("b", "node-b", "gpu-1", "8Gi", "s2"))
    with pytest.raises(SmokeFailure, match="different devices"):
        smoke_share.check_shares([one, elsewhere], "8Gi")
    whole = smoke_share.share_of(claim("b", "node-b", "gpu-0"))
    with pytest.raises(SmokeFailure, match="whole, not a share"):
        smoke_share.check_shares([one, whole], "8Gi")
    less = smoke_share.share_of(claim("b", "node-b", "gpu-0", "4Gi", "s2"))
    with pytest.raises(SmokeFailure, match="consumed 4Gi .* less than the 8Gi"):
        smoke_share.check_shares([one, less], "8Gi")


def test_free_shares_count_every_claims_shares_and_whole_devices_largest_first():
    slices = [pool("node-b", device("gpu-0"), device("gpu-1"), device("gpu-2")),
              pool("node-a", device("gpu-0", "23028Mi"))]
    claims = [claim("a", "node-b", "gpu-0", "8Gi", "s1"), claim("b", "node-b", "gpu-0", "8Gi", "s2"),
              claim("c", "node-b", "gpu-1"), claim("d", "node-a", "gpu-0", "20Gi", "s3")]
    free = smoke_share.free_shares(slices, claims, DRIVER, lambda d: True)
    assert [(f["node"], f["device"], f["free"]) for f in free] == [
        ("node-b", "gpu-2", "23034Mi"), ("node-b", "gpu-0", "6650Mi"), ("node-a", "gpu-0", "2548Mi"),
        ("node-b", "gpu-1", "0")]
    assert smoke_share.too_big(free) == "23035Mi"
    only_full = smoke_share.free_shares(slices, claims, DRIVER, lambda d: d["name"] == "gpu-0")
    assert smoke_share.too_big(only_full) == "6651Mi"
    assert smoke_share.too_big([]) == "1Mi"


def test_free_shares_count_only_each_pools_newest_complete_generation_as_the_allocator():
    old = pool("node-a", device("gpu-0"), device("gpu-1"))
    new = pool("node-a", device("gpu-0"))
    old["spec"]["pool"]["generation"], new["spec"]["pool"]["generation"] = 1, 2
    new["metadata"]["name"] = "node-a-slice-2"
    free = smoke_share.free_shares([old, new], [claim("a", "node-a", "gpu-0", "8Gi", "s1")], DRIVER, lambda d: True)
    assert [(f["node"], f["device"], f["free"]) for f in free] == [("node-a", "gpu-0", "14842Mi")]
    incomplete = pool("node-b", device("gpu-0"))
    incomplete["spec"]["pool"]["resourceSliceCount"] = 2
    assert smoke_share.free_shares([incomplete], [], DRIVER, lambda d: True) == []


def test_the_unschedulable_reason_in_plain_words_then_the_schedulers():
    free = [{"node": "node-b", "device": "gpu-0", "free": "6650Mi"}]
    assert smoke_share.unschedulable_why("6651Mi", free, "0/2 nodes are available: 2 cannot allocate all claims.") == (
        "no GPU has 6651Mi free: the largest free share is 6650Mi (gpu-0 on node-b); the scheduler said: "
        "0/2 nodes are available: 2 cannot allocate all claims.")


def test_the_too_big_verdict_is_the_schedulers_refusal_or_a_placement():
    waiting = {"metadata": {"name": "t"}, "spec": {}, "status": {}}
    assert smoke_share.too_big_verdict([waiting]) is None
    refused = dict(waiting, status={"conditions": [{"type": "PodScheduled", "status": "False", "reason":
                                                    "Unschedulable", "message": "2 cannot allocate all claims"}]})
    assert smoke_share.too_big_verdict([refused]) == ("unschedulable", "2 cannot allocate all claims")
    other = dict(waiting, status={"conditions": [{"type": "PodScheduled", "reason": "Unschedulable",
                                                  "message": "1 node(s) had untolerated taint"}]})
    assert smoke_share.too_big_verdict([other]) is None
    placed = dict(waiting, spec={"nodeName": "node-b"})
    assert smoke_share.too_big_verdict([placed]) == ("scheduled", placed)


def test_a_holder_is_done_when_it_runs_and_failed_when_its_claim_cannot_be_placed():
    assert smoke_share.holder_verdict([{"metadata": {"name": "h"}, "spec": {}, "status": {"phase": "Pending"}}]) is None
    running = {"metadata": {"name": "h"}, "spec": {}, "status": {"phase": "Running"}}
    assert smoke_share.holder_verdict([running]) == ("done", running)
    stuck = {"metadata": {"name": "h"}, "spec": {}, "status": {"conditions": [
        {"type": "PodScheduled", "reason": "Unschedulable", "message": "cannot allocate all claims"}]}}
    verdict, failure = smoke_share.holder_verdict([stuck])
    assert verdict == "failed" and failure.kind == "unschedulable"


def test_the_report_of_a_share_names_the_device_each_share_what_is_left_and_why_too_big_was_refused():
    share = {"memory": "8Gi", "device": {"node": "node-b", "pool": "node-b", "name": "gpu-0", "uuid": "GPU-1"},
             "claims": [{"claim": "s0", "consumed": {"memory": "8Gi"}, "share_id": "x"},
                        {"claim": "s1", "consumed": {"memory": "8Gi"}, "share_id": "y"}],
             "free": [{"node": "node-b", "device": "gpu-1", "free": "23034Mi"},
                      {"node": "node-b", "device": "gpu-0", "free": "6650Mi"}],
             "too_big": {"memory": "23035Mi", "why": "no GPU has 23035Mi free: ..."}}
    assert smoke_share.share_report(share, "NVIDIA L4") == [
        "two pods, a claim of 8Gi each, on one GPU: gpu-0 on node-b (NVIDIA L4), both saw GPU-1",
        "claim s0: consumed memory 8Gi, share x", "claim s1: consumed memory 8Gi, share y",
        "left per GPU: gpu-1 on node-b 23034Mi, gpu-0 on node-b 6650Mi",
        "a claim of 23035Mi: Unschedulable, as it must be: no GPU has 23035Mi free: ...",
        "enforced: the scheduler's accounting only; nothing caps a pod's use of the GPU's memory"]
