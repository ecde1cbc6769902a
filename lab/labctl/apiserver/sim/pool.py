"""SIMULATED: how a kubelet plugin's ResourceSlices change, as NVIDIA's driver changes them.

The driver (v0.4.1) hands its devices to the ResourceSlice controller of
k8s.io/dynamic-resource-allocation (v0.36, vendored by the driver); this module plans the same
API calls for one pool, read from that controller's sync of a pool:

- a new slice is created with ``generateName`` ``<index as 5+ hex digits>-<driver>-<node>-``,
  so the API server names it e.g. ``00000-gpu.nvidia.com-node-a-x7k2p`` (the v25.12 driver's
  older controller used ``<node>-<driver>-`` instead; the lab follows v0.4);
- a slice whose name does not decode to a wanted index, or whose generation is behind the
  pool's, is deleted;
- when at most one existing slice has to change and none has to be created, that slice is
  updated in place and the pool keeps its generation; otherwise the generation goes up by one
  (a first publication starts at 1) and every kept slice is updated to it.

The driver builds its one slice from Go maps, so its devices come in no fixed order:
``shuffled`` gives the simulator the same habit, so that nothing downstream can depend on it.
Unlike the driver, the simulator does not republish a pool whose devices are unchanged in
another order (the driver publishes once per start; the lab's republications are its own).
"""

import json
import math
import random

MAX_DEVICES_PER_SLICE = 128
INDEX_MIN_LENGTH = 5


def index_length(slice_count):
    return max(INDEX_MIN_LENGTH, len("%x" % max(slice_count - 1, 0)))


def generate_name(index, slice_count, driver, node):
    """The name prefix the controller asks the API server to complete (a Node owns the slices)."""
    return "%0*x-%s-%s-" % (index_length(slice_count), index, driver, node)


def decode_index(name, slice_count):
    """The slice index at the start of ``name``; None when it is not in the expected form."""
    prefix, sep, _rest = name.partition("-")
    if not sep or len(prefix) != index_length(slice_count):
        return None
    try:
        return int(prefix, 16)
    except ValueError:
        return None


def shuffled(devices):
    return random.sample(list(devices), len(devices))


def chunks(devices):
    """The devices of one pool in slices of at most MAX_DEVICES_PER_SLICE (at least one slice).
    The driver itself puts all of a node's devices into one slice; the lab splits only
    topologies with more than 128 devices on a node, which the API server would refuse."""
    count = max(1, math.ceil(len(devices) / MAX_DEVICES_PER_SLICE))
    return [devices[i * MAX_DEVICES_PER_SLICE:(i + 1) * MAX_DEVICES_PER_SLICE] for i in range(count)]


def _same_devices(a, b):
    return sorted((a or []), key=json.dumps) == sorted((b or []), key=json.dumps)


def plan(existing, wanted):
    """What to do to make ``existing`` slices (as listed) publish ``wanted`` (a list of device
    lists, one per slice). Returns {"generation", "delete": [names], "update": [(slice, index)],
    "create": [index]}; nothing in delete/update/create when the pool is already as wanted."""
    count = len(wanted)
    generation = max([s["spec"]["pool"]["generation"] for s in existing] + [0])
    matched, obsolete = {}, []
    for item in existing:
        index = decode_index(item["metadata"]["name"], count)
        if item["spec"]["pool"]["generation"] < generation or index is None or index >= count or index in matched:
            obsolete.append(item)
        else:
            matched[index] = item
    changed = [i for i, item in matched.items()
               if item["spec"]["pool"].get("resourceSliceCount") != count
               or not _same_devices(item["spec"].get("devices"), wanted[i])]
    new = [i for i in range(count) if i not in matched]
    if new or len(changed) > 1:
        generation += 1
        update = sorted(matched)
    else:
        update = changed
    if not obsolete and not update and not new:
        return {"generation": generation, "delete": [], "update": [], "create": []}
    return {"generation": generation, "delete": [s["metadata"]["name"] for s in obsolete],
            "update": [(matched[i], i) for i in update], "create": new}
