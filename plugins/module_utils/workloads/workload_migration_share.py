# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A share of one card's memory, as a migrated workload's pods (or a smoke test's) ask for it:
the quantity checked, and whether the devices a DeviceClass selects can give that much.

Pure functions over published devices; the share is counted as the scheduler counts it
(:mod:`capacity_shares`).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes


def check_memory(option, value):
    """The bytes of ``value``, a memory quantity above zero (what each pod's share asks for);
    inputs.InputError naming ``option`` otherwise."""
    try:
        amount = to_bytes(str(value).strip())
    except (QuantityError, ValueError):
        raise inputs.InputError("%s is %r, which is not a quantity; write what each pod needs of a GPU's memory, "
                                "like 8Gi or 8192Mi" % (option, value))
    if amount <= 0:
        raise inputs.InputError("%s is %r; a share must ask for some memory, like 8Gi" % (option, value))
    return amount


def share_fits(device, wanted):
    """Whether one published device can give a share of ``wanted`` bytes of memory at all
    (whatever others hold now): it takes several allocations, and the share, rounded by the
    device's request policy as the allocator rounds it, is within the policy and its memory."""
    if not device.get("allowMultipleAllocations"):
        return False
    published = capacity_shares.capacities(device)
    consumed = capacity_shares.consumption(published, {"memory": wanted}) if published else None
    return consumed is not None and capacity_shares.room(published, {}, consumed) != 0


def share_refusal(device_class, matched, memory):
    """None when a device that ``device_class`` selects can give a share of ``memory``; else
    why not and what to do. ``matched``: [(node or pool, device)] of the published devices the
    class selects."""
    wanted = to_bytes(memory)
    if not matched:
        return ("DeviceClass %s selects no published device, so no pod could get a share of it; check that the "
                "DRA driver runs and that the class's selectors match its devices (dra.gpu.resource_slice_info)"
                % device_class)
    shareable = [(where, d) for where, d in matched if d.get("allowMultipleAllocations")]
    if not shareable:
        return ("no device DeviceClass %s selects takes more than one allocation (allowMultipleAllocations), so "
                "each pod would hold a whole card: the driver does not publish shares. Turn on NVIDIA's "
                "ConsumableShares (DRA driver 0.5.0: featureGates.ConsumableShares and consumableShares: memory, "
                "e.g. through the gpu_sharing role), or migrate with whole cards (leave memory unset)" % device_class)
    if any(share_fits(d, wanted) for _where, d in shareable):
        return None
    limit, name, where = max((_largest_share(d), d.get("name"), where) for where, d in shareable)
    return ("no device DeviceClass %s selects can give a share of %s: the most one allows is %s (%s on %s). Ask for "
            "at most that, or use a class with larger GPUs" % (device_class, memory, human_bytes(limit), name, where))


def _largest_share(device):
    """The largest share one device allows: its memory, or its request policy's maximum below that."""
    memory = (device.get("capacity") or {}).get("memory") or {}
    total = to_bytes(memory.get("value") or 0)
    most = ((memory.get("requestPolicy") or {}).get("validRange") or {}).get("max")
    return min(total, to_bytes(most)) if most is not None else total
