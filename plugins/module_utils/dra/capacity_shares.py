# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Consumable capacity (DRAConsumableCapacity) as the scheduler's allocator counts it. Pure functions.

Read from k8s.io/dynamic-resource-allocation v0.37.2, structured/internal/incubating
(consumable_capacity.go, allocator_incubating.go) and the scheduler's allocateddevices.go;
written anew here, not copied:

- a claim's request consumes *every* capacity of the device: a requested one rounded by its
  ``requestPolicy`` (below ``validRange.min``: min; else up to ``min + k * step``; with
  ``validValues``: the first value at least the request), an unrequested one its policy's
  ``default``, or, without a policy, the capacity's whole value;
- a request naming a capacity the device lacks skips the device; so does a consumed value
  above ``validRange.max``, off the step grid, or not among ``validValues`` (unless it is the
  default); a negative value aborts the allocation (here: the device is skipped and said so);
- the device fits while, per capacity, what allocations consumed plus this request is at most
  the capacity's value; this is checked on devices without ``allowMultipleAllocations`` too
  (there a memory request is a minimum size, and the claim gets the whole device);
- an allocation result with a ``shareID`` adds its ``consumedCapacity`` to its device; one
  without takes the device whole; ``adminAccess`` results count for nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, parse_quantity

# What a request of no capacity at all consumes: nothing of anything (unbounded replicas).
UNBOUNDED = None


def amount(value):
    """A quantity as an exact number: int when whole (every memory figure), else Decimal."""
    number = parse_quantity(value)
    return int(number) if number == number.to_integral_value() else number


class Capacity:
    """One published capacity: its value and request policy, as numbers."""

    __slots__ = ("value", "default", "minimum", "maximum", "step", "values", "has_policy")

    def __init__(self, entry):
        entry = entry or {}
        self.value = amount(entry.get("value", "0"))
        policy = entry.get("requestPolicy")
        self.has_policy = policy is not None
        policy = policy or {}
        valid = policy.get("validRange")
        self.default = amount(policy["default"]) if policy.get("default") is not None else None
        self.minimum = amount(valid["min"]) if valid and valid.get("min") is not None else None
        self.maximum = amount(valid["max"]) if valid and valid.get("max") is not None else None
        self.step = amount(valid["step"]) if valid and valid.get("step") is not None else None
        self.values = [amount(v) for v in policy.get("validValues") or []] if not valid else []

    def consumes(self, requested):
        """What one allocation consumes of this capacity, for ``requested`` (None: not requested)."""
        if requested is None:
            return self.default if self.default is not None else self.value
        if not self.has_policy:
            return requested
        if self.minimum is not None:
            if requested < self.minimum:
                return self.minimum
            if not self.step:
                return requested
            steps = -((self.minimum - requested) // self.step)  # ceiling division, exact for ints and Decimals
            return self.minimum + steps * self.step
        if self.values:
            return next((v for v in self.values if requested <= v), requested)
        return requested

    def violates(self, consumed):
        """True when the policy refuses ``consumed`` (the allocator then skips the device)."""
        if not self.has_policy or (self.default is not None and consumed == self.default):
            return False
        if self.minimum is not None:
            if self.maximum is not None and consumed > self.maximum:
                return True
            return bool(self.step) and (consumed - self.minimum) % self.step != 0
        if self.values:
            return consumed not in self.values
        return False


def capacities(device):
    """name -> :class:`Capacity` of a device as published; a value that is no quantity makes
    the device unusable for this arithmetic (None), as the API server would have refused it."""
    try:
        return dict((name, Capacity(entry)) for name, entry in (device.get("capacity") or {}).items())
    except (QuantityError, KeyError, TypeError):
        return None


def requests_of(requests):
    """A claim's ``capacity.requests`` (name -> quantity text) as numbers."""
    return dict((name, amount(value)) for name, value in (requests or {}).items())


def consumption(device_capacities, requests):
    """What one allocation of ``requests`` consumes on a device: name -> amount, or None when the
    allocator skips the device for it (a capacity it lacks, a policy it breaks, a negative value)."""
    if device_capacities is None or any(name not in device_capacities for name in requests):
        return None
    consumed = {}
    for name, capacity in device_capacities.items():
        value = capacity.consumes(requests.get(name))
        if value < 0 or capacity.violates(value):
            return None
        consumed[name] = value
    return consumed


def room(device_capacities, used, consumed):
    """How many more allocations of ``consumed`` the device takes beside ``used`` (None: no limit,
    everything consumed is 0). Each allocation must fit on top of all earlier ones."""
    most = UNBOUNDED
    for name, capacity in device_capacities.items():
        need = consumed.get(name, 0)
        left = capacity.value - used.get(name, 0)
        if left < 0 or (need > left):
            return 0
        if need > 0:
            count = int(left // need)
            most = count if most is None else min(most, count)
    return most


def add(used, consumed, times=1):
    for name, value in consumed.items():
        used[name] = used.get(name, 0) + value * times


class Allocated:
    """What the claims' allocation results hold, per (driver, pool, device): taken whole
    (``dedicated``), or the sum of the shares' consumed capacity, and each share."""

    def __init__(self, claims):
        self.dedicated = set()
        self.used = {}
        self.shares = {}
        for claim in claims or []:
            meta = claim.get("metadata") or {}
            status = claim.get("status") or {}
            results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
            for result in results:
                if result.get("adminAccess"):
                    continue
                key = (result.get("driver"), result.get("pool"), result.get("device"))
                if result.get("shareID") is None:
                    self.dedicated.add(key)
                    continue
                consumed = result.get("consumedCapacity") or {}
                try:
                    add(self.used.setdefault(key, {}), requests_of(consumed))
                except QuantityError:
                    pass  # the API server validates quantities; nothing to count
                self.shares.setdefault(key, []).append({
                    "namespace": meta.get("namespace"), "claim": meta.get("name"), "request": result.get("request"),
                    "share_id": result.get("shareID"), "consumed": dict(consumed)})

    def usage(self, key):
        """(taken whole, consumed so far) of one device."""
        return key in self.dedicated, self.used.get(key, {})


def memory_consumed(usage, total):
    """Bytes of a device's ``total`` memory the claims hold, from its ``Allocated.usage``: all of it
    when one took it whole, else what its shares consumed (never more than the device has)."""
    whole, used = usage
    return total if whole else min(total, int(used.get("memory", 0)))


def allocator_order(entries):
    """``(slice, device, node)`` entries in the order the allocator tries them on one node:
    pools by driver and name, slices by name, devices as the slice lists them."""
    positions = {}
    for item, _device, _node in entries:
        if id(item) not in positions:
            positions[id(item)] = dict((id(d), i) for i, d in enumerate(item["spec"].get("devices") or []))

    def fast_key(entry):
        item, device, node = entry
        spec = item["spec"]
        return (node or "", spec.get("driver") or "", spec["pool"]["name"] or "", item["metadata"]["name"],
                positions[id(item)][id(device)])
    return sorted(entries, key=fast_key)


def largest_request(device_capacities, used, name):
    """The largest request of capacity ``name`` one more allocation can still get on a device
    (after ``used``), on the policy's grid; None when no such allocation fits at all."""
    capacity = (device_capacities or {}).get(name)
    if capacity is None:
        return None
    candidate = capacity.value - used.get(name, 0)
    if capacity.maximum is not None:
        candidate = min(candidate, capacity.maximum)
    if capacity.minimum is not None:
        if candidate < capacity.minimum:
            return None
        if capacity.step:
            candidate = capacity.minimum + ((candidate - capacity.minimum) // capacity.step) * capacity.step
    elif capacity.values:
        below = [v for v in capacity.values if v <= candidate]
        if not below:
            return None
        candidate = below[-1]
    consumed = consumption(device_capacities, {name: candidate})
    if consumed is None or room(device_capacities, used, consumed) == 0:
        return None
    return candidate
