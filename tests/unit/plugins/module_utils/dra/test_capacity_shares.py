from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares
from ansible_collections.dra.gpu.plugins.module_utils.dra.capacity_shares import Capacity

MI, GI = 2 ** 20, 2 ** 30
A10 = "23028Mi"


def memory_mode(whole=A10):
    """A GPU's memory as NVIDIA's 0.5.0 plugin publishes it in ``memory`` mode."""
    return {"value": whole, "requestPolicy": {"default": whole, "validRange": {"min": "1Mi", "max": whole, "step": "1Mi"}}}


def unlimited_mode(whole=A10):
    return {"value": whole, "requestPolicy": {"default": "0", "validRange": {"min": "0", "max": whole, "step": "1Mi"}}}


def shares(count):
    policy = {"default": "1", "validRange": {"min": "1", "max": str(count), "step": "1"}}
    return {"value": str(count), "requestPolicy": policy}


@pytest.mark.parametrize("policy, requested, consumed", [
    (memory_mode(), 8 * GI, 8 * GI),
    (memory_mode(), None, 23028 * MI),                  # no request: the default, the whole card
    (unlimited_mode(), None, 0),                        # no request: nothing
    (memory_mode(), 10 ** 10, 9537 * MI),               # 10G rounds up to the next 1Mi step from 1Mi
    (memory_mode(), 1, MI),                             # below min: min
    (unlimited_mode(), 10 ** 10, 9537 * MI),            # from min 0 in steps of 1Mi
    ({"value": "10"}, 4, 4),                            # no policy: the request as it is
    ({"value": "10"}, None, 10),                        # no policy, no request: the whole value
    ({"value": "10", "requestPolicy": {"validValues": ["2", "5", "10"]}}, 3, 5),
    ({"value": "10", "requestPolicy": {"validValues": ["2", "5"]}}, 7, 7),
    ({"value": "3", "requestPolicy": {"default": "1", "validRange": {"min": "1", "max": "3", "step": "1"}}}, None, 1),
])
def test_consumed_as_the_allocator_rounds(policy, requested, consumed):
    assert Capacity(policy).consumes(requested) == consumed


@pytest.mark.parametrize("policy, consumed, refused", [
    (memory_mode(), 23028 * MI, False),
    (memory_mode(), 23029 * MI, True),                  # above validRange.max
    (memory_mode(), 8 * GI + 1, True),                  # off the step grid
    ({"value": "10", "requestPolicy": {"validValues": ["2", "5"]}}, 7, True),
    ({"value": "10", "requestPolicy": {"default": "7", "validValues": ["2", "5"]}}, 7, False),  # the default
    ({"value": "10"}, 11, False),                       # no policy: only the capacity sum can refuse
])
def test_policy_refusals(policy, consumed, refused):
    assert Capacity(policy).violates(consumed) is refused


def device(mode="memory", count=None):
    capacity = {"memory": memory_mode() if mode == "memory" else unlimited_mode()}
    if count:
        capacity["shares"] = shares(count)
    return {"name": "gpu-0", "allowMultipleAllocations": True, "capacity": capacity}


def test_consumption_of_every_capacity_and_the_room_left():
    caps = capacity_shares.capacities(device("unlimited", count=4))
    consumed = capacity_shares.consumption(caps, {"memory": 4 * GI})
    assert consumed == {"memory": 4 * GI, "shares": 1}
    assert capacity_shares.room(caps, {}, consumed) == 4              # shares, not memory (5), decide
    assert capacity_shares.room(caps, {"memory": 20 * GI, "shares": 1}, consumed) == 0
    nothing = capacity_shares.consumption(capacity_shares.capacities(device("unlimited")), {})
    assert nothing == {"memory": 0}
    assert capacity_shares.room(capacity_shares.capacities(device("unlimited")), {}, nothing) is None


def test_requests_the_device_cannot_take_skip_it():
    caps = capacity_shares.capacities(device())
    assert capacity_shares.consumption(caps, {"memory": 23 * GI}) is None      # above max
    assert capacity_shares.consumption(caps, {"cores": 2}) is None             # a capacity it lacks
    assert capacity_shares.room(caps, {}, capacity_shares.consumption(caps, {"memory": 4 * GI})) == 5
    assert capacity_shares.room(caps, {}, capacity_shares.consumption(caps, {})) == 1    # the whole card


def claim(name, results):
    return {"metadata": {"namespace": "ns", "name": name},
            "status": {"allocation": {"devices": {"results": results}}}}


def test_allocated_sums_shares_and_keeps_whole_allocations_apart():
    claims = [
        claim("a", [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0", "shareID": "u1",
                     "consumedCapacity": {"memory": "8Gi"}}]),
        claim("b", [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0", "shareID": "u2",
                     "consumedCapacity": {"memory": "4096Mi"}}]),
        claim("c", [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-1"}]),
        claim("d", [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-2", "adminAccess": True}]),
    ]
    allocated = capacity_shares.Allocated(claims)
    assert allocated.usage(("gpu.nvidia.com", "n", "gpu-0")) == (False, {"memory": 12 * GI})
    assert allocated.usage(("gpu.nvidia.com", "n", "gpu-1")) == (True, {})
    assert allocated.usage(("gpu.nvidia.com", "n", "gpu-2")) == (False, {})
    assert [s["share_id"] for s in allocated.shares[("gpu.nvidia.com", "n", "gpu-0")]] == ["u1", "u2"]


def test_allocator_order_is_pool_slice_and_slice_position():
    first = {"metadata": {"name": "b-slice"},
             "spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "gpu-10"}, {"name": "gpu-2"}]}}
    second = {"metadata": {"name": "a-slice"},
              "spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "gpu-9"}]}}
    entries = [(first, d, "n") for d in first["spec"]["devices"]] + [(second, second["spec"]["devices"][0], "n")]
    assert [e[1]["name"] for e in capacity_shares.allocator_order(entries)] == ["gpu-9", "gpu-10", "gpu-2"]


def test_largest_request_left_on_a_device():
    caps = capacity_shares.capacities(device())
    assert capacity_shares.largest_request(caps, {}, "memory") == 23028 * MI
    assert capacity_shares.largest_request(caps, {"memory": 20 * GI}, "memory") == 2548 * MI
    assert capacity_shares.largest_request(caps, {"memory": 23028 * MI}, "memory") is None
    with_shares = capacity_shares.capacities(device("unlimited", count=2))
    assert capacity_shares.largest_request(with_shares, {"memory": 8 * GI, "shares": 2}, "memory") is None
    assert capacity_shares.largest_request(caps, {}, "cores") is None


def test_memory_consumed_is_all_of_a_device_taken_whole_else_what_its_shares_hold():
    assert capacity_shares.memory_consumed((True, {}), 100) == 100
    assert capacity_shares.memory_consumed((False, {"memory": 30}), 100) == 30
    assert capacity_shares.memory_consumed((False, {"memory": 130}), 100) == 100
    assert capacity_shares.memory_consumed((False, {}), 100) == 0
