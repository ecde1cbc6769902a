from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.sharing.fit_fakes import (
    per_device, shared_slices, shares_fit)


# --- memory_shares: NVIDIA's 0.5.0 ConsumableShares shapes, placed as the allocator places ---------

def test_memory_shares_4gi_x40_five_per_card_as_the_allocator_counts():
    result = shares_fit([{"name": "inference", "memory": "4Gi", "replicas": 40}])
    shares = result["strategies"]["memory_shares"]
    # 5 x 4096Mi = 20480Mi fits in 23028Mi; a sixth (24576Mi) does not
    assert shares["total"] == 30 and shares["by_node"] == {"node-a": 10, "node-b": 20}
    assert set(per_device(result).values()) == {5} and len(per_device(result)) == 6
    assert shares["depends_on_node_choice"] == []
    assert [p["device"] for p in shares["placements"] if p["node"] == "node-b"] == ["gpu-3", "gpu-2", "gpu-1", "gpu-0"]
    assert shares["placements"][0]["consumes"] == {"memory": "4Gi"} and shares["placements"][0]["shared"] is True
    assert result["unplaced"]["memory_shares"] == [{"workload": "inference", "replicas": 10, "requested": 40, "reason": (
        "10 of 40 replicas left over: no device has room left for one more claim of 4Gi (claims' consumedCapacity "
        "and earlier workloads)")}]
    assert result["summary"].endswith(", 30 with memory shares (the scheduler's accounting)")


def test_memory_shares_mixed_sizes_in_the_order_given():
    result = shares_fit([{"name": "big", "memory": "10Gi", "replicas": 11},
                         {"name": "mid", "memory": "8Gi", "replicas": 3},
                         {"name": "small", "memory": "4Gi", "replicas": 3}])
    rows = dict((row["name"], row["memory_shares"]) for row in result["workloads"])
    # 11 x 10Gi leave one card with 12.49Gi: one 8Gi, then 4.49Gi: one 4Gi
    assert rows == {"big": 11, "mid": 1, "small": 1}
    assert result["strategies"]["memory_shares"]["depends_on_node_choice"] == []
    assert sorted(per_device(result).values()) == [2, 2, 2, 2, 2, 3]


def test_memory_shares_a_class_that_selects_only_l4():
    result = shares_fit([{"name": "l4-only", "memory": "8Gi", "replicas": 10, "device_class": "l4"}])
    assert result["strategies"]["memory_shares"]["by_node"] == {"node-a": 0, "node-b": 8}
    assert result["strategies"]["whole_gpu"]["total"] == 4
    assert result["unplaced"]["memory_shares"][0]["replicas"] == 2
    assert "device of DeviceClass l4" in result["unplaced"]["memory_shares"][0]["reason"]


def test_memory_shares_count_what_claims_already_consumed():
    claims = [{"metadata": {"namespace": "ns", "name": "held"}, "status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-0", "shareID": "s-1",
         "consumedCapacity": {"memory": "20Gi"}},
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-b", "device": "gpu-3"}]}}}}]
    result = shares_fit([{"name": "inference", "memory": "4Gi", "replicas": 40}], claims=claims)
    # node-a gpu-0 keeps 2.49Gi (no 4Gi), node-b gpu-3 is taken whole by a claim without a shareID
    assert per_device(result) == {"node-a/gpu-1": 5, "node-b/gpu-2": 5, "node-b/gpu-1": 5, "node-b/gpu-0": 5}


def test_memory_shares_round_requests_up_to_the_step():
    result = shares_fit([{"name": "decimal", "memory": "10G", "replicas": 1}])
    # 10^10 bytes is 9536.74Mi: the allocator consumes 9537Mi
    assert result["strategies"]["memory_shares"]["placements"][0]["consumes"] == {"memory": "9537Mi"}
    too_big = shares_fit([{"name": "huge", "memory": "23035Mi", "replicas": 1}])
    assert too_big["strategies"]["memory_shares"]["total"] == 0
    assert "validRange.max is refused" in too_big["unplaced"]["memory_shares"][0]["reason"]


def test_memory_shares_n_mode_caps_claims_per_card():
    result = shares_fit([{"name": "tiny", "memory": "1Gi", "replicas": 40}], slices=shared_slices("3"))
    assert result["strategies"]["memory_shares"]["total"] == 18
    assert result["strategies"]["memory_shares"]["placements"][0]["consumes"] == {"memory": "1Gi", "shares": "1"}


def test_memory_shares_name_workloads_whose_count_depends_on_node_choice():
    result = shares_fit([{"name": "big", "memory": "10Gi", "replicas": 6},
                         {"name": "mid", "memory": "8Gi", "replicas": 12},
                         {"name": "small", "memory": "4Gi", "replicas": 12}])
    # Where the six 10Gi claims land decides how many cards keep 4.49Gi for a 4Gi claim.
    assert result["strategies"]["memory_shares"]["depends_on_node_choice"] == ["small"]


def test_memory_shares_skip_tainted_devices_as_the_allocator_does():
    slices = shared_slices()
    slices[0]["spec"]["devices"][0]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    slices[0]["spec"]["devices"][1]["taints"] = [{"key": "gpu.nvidia.com/unmonitored", "effect": "None"}]
    result = shares_fit([{"name": "inference", "memory": "4Gi", "replicas": 40}], slices=slices)
    assert "node-a/gpu-0" not in per_device(result) and per_device(result)["node-a/gpu-1"] == 5


@pytest.mark.parametrize("mode, per_card, first_card", [
    ("memory", {1}, 1),          # the default is the whole card
    ("unlimited", {40}, 40),     # the default is nothing: every claim fits on the first card
    ("3", {3}, 3),               # memory 0, but one of the card's 3 shares each
])
def test_memory_shares_without_a_memory_request_take_the_policy_default(mode, per_card, first_card):
    result = shares_fit([{"name": "w", "memory": "default", "replicas": 40}], slices=shared_slices(mode))
    counts = per_device(result)
    assert set(counts.values()) == per_card and counts["node-a/gpu-0"] == first_card
    # the other answers give a replica without a memory request a device of its own
    assert [result["strategies"][name]["total"] for name in ("whole_gpu", "shared", "mig")] == [6, 6, 0]
    assert result["strategies"]["shared"]["placements"][0]["mps_config"] == {"defaultActiveThreadPercentage": 100}
