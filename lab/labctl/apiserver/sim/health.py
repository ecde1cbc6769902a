"""SIMULATED: the device taints NVIDIA's DRA driver publishes from its NVML health checks.

Read from NVIDIA's driver at main 95932046 (treated as v0.5.0; the check exists since v0.4.0)
behind the gate NVMLDeviceHealthCheck, cmd/gpu-kubelet-plugin/device_health.go and
allocatable.go (AddOrUpdateTaint):

- an XID critical error on a device taints that device ``gpu.nvidia.com/xid`` with the XID
  number as the value; effect ``NoSchedule``, or ``None`` for the XIDs NVIDIA counts as
  application errors (13, 31, 43, 45, 68, 109, plus the plugin's additional-XIDs-to-ignore);
- a lost GPU (NVML_ERROR_GPU_IS_LOST while waiting for events, or an XID whose UUID NVML
  cannot resolve) taints every device of the node ``gpu.nvidia.com/gpu-lost``, no value,
  ``NoSchedule``;
- a GPU whose events cannot be registered taints its devices (the full GPU and its MIG
  devices) ``gpu.nvidia.com/unmonitored``, no value, ``None``;
- one taint per key and device: a later event of the same key overwrites value and effect
  and drops ``timeAdded`` so that the API server stamps it again; the same event again
  changes nothing. The plugin never sends ``timeAdded`` itself;
- nothing removes a taint: the taints live in the plugin's memory, so they go only when the
  kubelet plugin restarts (after the GPU was repaired or replaced).

The lab injects faults through a node annotation (``lab.py fault``), which stands for NVML's
event stream: a JSON list of events in the order they happened.
"""

import json

DRIVER = "gpu.nvidia.com"
TAINT_XID = DRIVER + "/xid"
TAINT_GPU_LOST = DRIVER + "/gpu-lost"
TAINT_UNMONITORED = DRIVER + "/unmonitored"
GATE = "NVMLDeviceHealthCheck"
# device_health.go xidsToSkip: application errors, the GPU stays healthy.
IGNORED_XIDS = frozenset((13, 31, 43, 45, 68, 109))
EVENTS = ("xid", "gpu-lost", "unmonitored")
# The node annotation holding the injected events (the lab's stand-in for NVML's events).
FAULTS_ANNOTATION = "lab.dra.gpu/gpu-health-events"


class FaultError(ValueError):
    pass


def parse_event(text, device=None):
    """A fault as `lab.py fault` takes it: ``xid=48``, ``gpu-lost`` or ``unmonitored``."""
    kind, _sep, value = str(text).partition("=")
    if kind not in EVENTS:
        raise FaultError("fault %r: expected xid=<number>, gpu-lost or unmonitored" % (text,))
    event = {"event": kind}
    if kind == "xid":
        if not value.isdigit():
            raise FaultError("fault %r: an XID is a number, e.g. xid=48 (a double-bit ECC error)" % (text,))
        event["xid"] = int(value)
    elif value:
        raise FaultError("fault %r: %s takes no value" % (text, kind))
    if kind != "gpu-lost":
        if not device:
            raise FaultError("fault %s needs the device it happened on (gpu-2, or a MIG device's name)" % kind)
        event["device"] = device
    return event


def read_events(annotations):
    """The events injected on a node (its annotations); [] when none or unreadable."""
    text = (annotations or {}).get(FAULTS_ANNOTATION)
    if not text:
        return []
    try:
        events = json.loads(text)
    except ValueError:
        return []
    return [e for e in events if isinstance(e, dict) and e.get("event") in EVENTS] if isinstance(events, list) else []


def _parent(name):
    """gpu-2 for gpu-2 and for its MIG devices (gpu-2-mig-1g10gb-19-0)."""
    return "-".join(name.split("-")[:2])


def taint_for(event, ignored_xids=IGNORED_XIDS):
    """healthEventToTaint: the taint one event gives its devices."""
    if event["event"] == "xid":
        return {"key": TAINT_XID, "value": str(event["xid"]),
                "effect": "None" if event["xid"] in ignored_xids else "NoSchedule"}
    if event["event"] == "gpu-lost":
        return {"key": TAINT_GPU_LOST, "effect": "NoSchedule"}
    return {"key": TAINT_UNMONITORED, "effect": "None"}


def affected(event, device_names):
    """The devices an event taints: the one device of an XID (an event for a device the plugin
    does not know is ignored), every device of the node for a lost GPU, a GPU and its MIG
    devices for an unmonitored one."""
    if event["event"] == "gpu-lost":
        return list(device_names)
    if event["event"] == "xid":
        return [event["device"]] if event["device"] in device_names else []
    return [n for n in device_names if _parent(n) == _parent(event["device"])]


def _add_or_update(taints, taint):
    """AddOrUpdateTaint: one taint per key; a changed value or effect drops timeAdded."""
    for existing in taints:
        if existing["key"] == taint["key"]:
            if existing.get("value") == taint.get("value") and existing["effect"] == taint["effect"]:
                return
            existing.clear()
            existing.update(taint)
            return
    taints.append(dict(taint))


def device_taints(events, device_names):
    """{device name: [taints]} after the events, in order (devices without taints left out)."""
    taints = {}
    for event in events:
        taint = taint_for(event)
        for name in affected(event, device_names):
            _add_or_update(taints.setdefault(name, []), taint)
    return taints


def with_taints(devices, events):
    """The device entries with the taints the events give them (``taints`` only where any)."""
    taints = device_taints(events, [d["name"] for d in devices])
    published = []
    for device in devices:
        if device["name"] in taints:
            device = dict(device, taints=[dict(t) for t in taints[device["name"]]])
        published.append(device)
    return published


def copy_time_added(devices, existing_slices):
    """As the ResourceSlice controller does (copyTaintTimeAdded): a taint sent without
    timeAdded keeps the one the API server stamped on the same taint of the same device, so
    an unchanged taint is not republished and keeps its time."""
    stored = {}
    for item in existing_slices or []:
        for device in (item.get("spec") or {}).get("devices") or []:
            for taint in device.get("taints") or []:
                if taint.get("timeAdded"):
                    stored[(device["name"], taint["key"], taint.get("value"), taint["effect"])] = taint["timeAdded"]
    result = []
    for device in devices:
        if device.get("taints"):
            taints = []
            for taint in device["taints"]:
                when = stored.get((device["name"], taint["key"], taint.get("value"), taint["effect"]))
                taints.append(dict(taint, timeAdded=when) if when and not taint.get("timeAdded") else taint)
            device = dict(device, taints=taints)
        result.append(device)
    return result


def without_time_added(device):
    """A device entry with its taints' timeAdded left out (the one field the API server adds)."""
    if not device.get("taints"):
        return device
    return dict(device, taints=[{k: v for k, v in t.items() if k != "timeAdded"} for t in device["taints"]])
