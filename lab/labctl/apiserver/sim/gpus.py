"""SIMULATED: the devices NVIDIA's DRA driver (gpu.nvidia.com, v0.4+) would publish.

No GPU exists here. This module builds ResourceSlice device entries with the names,
attribute keys, attribute types and capacities the real kubelet plugin publishes
(see shared/reference/dra-facts.md): full GPUs as ``gpu-<minor>``, MIG devices as
``gpu-<minor>-mig-<profile without dots>-<GI profile id>-<placement start>`` (v25.12+/v0.4),
e.g. ``gpu-0-mig-1g5gb-19-0``. Values such as UUIDs and PCI addresses are
derived deterministically from the node name, so they are stable across lab restarts and
unique across nodes, like real serial-derived UUIDs.
"""

import copy
import json
import re
import uuid

from labctl.apiserver.sim import pool

DRIVER = "gpu.nvidia.com"
MAX_DEVICES_PER_SLICE = pool.MAX_DEVICES_PER_SLICE
_UUID_NAMESPACE = uuid.UUID("6f1c1a52-3b0e-4b8e-9a7e-5c1d2f0a9e11")

# Model catalogue: what the driver reports for each product. Compute capability and
# architecture as NVML reports them. ``memory`` is the whole device's capacity as the driver
# publishes it: NVML's total in bytes (nvmlDeviceGetMemoryInfo), never the marketing figure.
# The totals below are the typical ones `nvidia-smi` shows for each product (its "MiB" column
# is that byte total / 2**20); they are NOT measured here (no GPU), and a real card can differ
# by driver version, ECC mode and board. A10 and L4 are about 22.5Gi, so a `>= 24Gi` selector
# matches neither; a T4 (sold as 16 GB) has 15Gi, under `>= 16Gi`; an H100 80GB about 79.6Gi.
_MIB = 1024 * 1024
MODELS = {
    "A10": {"productName": "NVIDIA A10", "architecture": "Ampere", "cc": "8.6.0",
            "memory": 23028 * _MIB},
    "L4": {"productName": "NVIDIA L4", "architecture": "Ada Lovelace", "cc": "8.9.0",
           "memory": 23034 * _MIB},
    "T4": {"productName": "Tesla T4", "architecture": "Turing", "cc": "7.5.0",
           "memory": 15360 * _MIB},
    # The T4 (15360 MiB) and the A100s report whole GiB: 15, 40 and 80 (shown as 15Gi, 40Gi, 80Gi).
    "A100-40GB": {"productName": "NVIDIA A100-PCIE-40GB", "architecture": "Ampere", "cc": "8.0.0",
                  "memory": 40960 * _MIB, "mig": "a100-40"},
    "A100-80GB": {"productName": "NVIDIA A100-SXM4-80GB", "architecture": "Ampere", "cc": "8.0.0",
                  "memory": 81920 * _MIB, "mig": "a100-80"},
    "H100-80GB": {"productName": "NVIDIA H100 80GB HBM3", "architecture": "Hopper", "cc": "9.0.0",
                  "memory": 81559 * _MIB, "mig": "h100-80"},
    # Sold as 141 GB.
    "H200": {"productName": "NVIDIA H200", "architecture": "Hopper", "cc": "9.0.0",
             "memory": 143771 * _MIB, "mig": "h100-80"},
}

# MIG profiles: NVML's GPU-instance profile id, then usable memory and engine counts per
# partition (approximate NVML figures).
# gi, multiprocessors, copyEngines, decoders, encoders, jpegEngines, ofaEngines, memory
_MIG_PROFILES = {
    "a100-40": {"1g.5gb": (19, 14, 1, 0, 0, 0, 0, "4864Mi"), "2g.10gb": (14, 28, 2, 1, 0, 0, 0, "9856Mi"),
                "3g.20gb": (9, 42, 3, 2, 0, 0, 0, "19968Mi"), "4g.20gb": (5, 56, 4, 2, 0, 0, 0, "19968Mi"),
                "7g.40gb": (0, 98, 7, 5, 0, 1, 1, "40192Mi")},
    "a100-80": {"1g.10gb": (19, 14, 1, 0, 0, 0, 0, "9728Mi"), "2g.20gb": (14, 28, 2, 1, 0, 0, 0, "19968Mi"),
                "3g.40gb": (9, 42, 3, 2, 0, 0, 0, "40192Mi"), "7g.80gb": (0, 98, 7, 5, 0, 1, 1, "80384Mi")},
    "h100-80": {"1g.10gb": (19, 16, 1, 1, 0, 1, 0, "9984Mi"), "2g.20gb": (14, 32, 2, 2, 0, 2, 0, "20096Mi"),
                "3g.40gb": (9, 60, 3, 3, 0, 3, 0, "40320Mi"), "7g.80gb": (0, 132, 8, 7, 0, 7, 1, "80896Mi")},
}
# Where NVML lets each GPU-instance profile sit on the 8 memory slots of an A100 or H100
# (`nvidia-smi mig -lgipp`): slots it occupies, allowed start slots. A 1g never starts on
# slot 7: the GPU has only 7 compute slices.
_PLACEMENTS = {19: (1, range(7)), 20: (1, range(7)), 15: (2, (0, 2, 4, 6)), 14: (2, (0, 2, 4)),
               9: (4, (0, 4)), 5: (4, (0,)), 0: (8, (0,))}
_MEMORY_SLOTS = 8
_COMPUTE_SLICES = 7

DRIVER_VERSION = "580.126.20"
CUDA_DRIVER_VERSION = "13.0.0"


class TopologyError(ValueError):
    pass


_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_SUFFIX_BYTES = {"": 1, "k": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4,
                 "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4}


def binary_si(count):
    """An integer as Kubernetes writes a quantity made with resource.NewQuantity(n, BinarySI),
    which is how the driver sends capacities: the largest power-of-1024 suffix that divides it
    exactly, else the plain number (23028 MiB -> "23028Mi", 1 -> "1", 1025 -> "1025")."""
    count = int(count)
    if -1024 < count < 1024:
        return str(count)
    exponent = 0
    while count % 1024 == 0 and exponent < len(_BINARY_SUFFIXES) - 1:
        count //= 1024
        exponent += 1
    return "%d%s" % (count, _BINARY_SUFFIXES[exponent])


def to_bytes(quantity):
    """A topology's memory override ("24Gi", "24000Mi", "25769803776") in bytes."""
    match = re.match(r"^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$", str(quantity).strip())
    if not match:
        raise TopologyError("memory %r is not a whole quantity such as 23034Mi or 24152899584" % (quantity,))
    return int(match.group(1)) * _SUFFIX_BYTES[match.group(2) or ""]


def gpu_uuid(node, minor):
    return "GPU-" + str(uuid.uuid5(_UUID_NAMESPACE, "%s/gpu/%d" % (node, minor)))


def mig_uuid(node, minor, name):
    return "MIG-" + str(uuid.uuid5(_UUID_NAMESPACE, "%s/mig/%d/%s" % (node, minor, name)))


def _model(name):
    try:
        return MODELS[name]
    except KeyError:
        raise TopologyError("unknown GPU model %r; known models: %s" % (name, ", ".join(sorted(MODELS))))


def _common_attributes(node, minor, model, overrides):
    bus = 0x10 + minor * 0x10
    attrs = {
        "productName": {"string": overrides.get("productName", model["productName"])},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": model["architecture"]},
        "cudaComputeCapability": {"version": model["cc"]},
        "driverVersion": {"version": overrides.get("driverVersion", DRIVER_VERSION)},
        "cudaDriverVersion": {"version": CUDA_DRIVER_VERSION},
        "resource.kubernetes.io/pciBusID": {"string": "0000:%02x:00.0" % (bus & 0xFF)},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:%02x" % ((bus - 1) & 0xFF)},
    }
    # No resource.kubernetes.io/numaNode here: 0.4.x has none. A 0.5.0 plugin adds it
    # (driver_devices, from the topology's numa_node).
    return attrs


def node_devices(node, gpus):
    """Device entries for one node. ``gpus`` is the topology's list of GPU groups."""
    devices = []
    minor = 0
    for group in gpus:
        model = _model(group["model"])
        for _copy in range(int(group.get("count", 1))):
            common = _common_attributes(node, minor, model, group)
            if group.get("hmm"):
                # A property of the parent GPU, which its MIG devices repeat like the others.
                common["addressingMode"] = {"string": "HMM"}
            memory = binary_si(to_bytes(group["memory"]) if group.get("memory") else model["memory"])
            mig = group.get("mig") or []
            if not mig:
                attrs = {"type": {"string": "gpu"}, "uuid": {"string": gpu_uuid(node, minor)}}
                attrs.update(common)
                devices.append({"name": "gpu-%d" % minor, "attributes": attrs,
                                "capacity": {"memory": {"value": memory}}})
            else:
                devices.extend(_mig_devices(node, minor, group["model"], model, mig, common))
            minor += 1
    return devices


def numa_nodes(gpus):
    """{minor: NUMA node or None} for a node's GPU groups: what sysfs's numa_node says.

    A GPU server's PCI devices sit on a NUMA node (0 unless the group says ``numa_node: N``);
    ``numa_node: null`` stands for a machine whose sysfs says -1 (a VM like the lab's host),
    where NVIDIA's 0.5.0 plugin publishes no numaNode."""
    found, minor = {}, 0
    for group in gpus or []:
        value = group.get("numa_node", 0)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise TopologyError("numa_node %r is not a NUMA node number (0, 1, ...) or null" % (value,))
        for _copy in range(int(group.get("count", 1))):
            found[minor] = value
            minor += 1
    return found


def mig_device_name(minor, profile, gi_profile_id, start):
    """The name NVIDIA's driver (v25.12+/v0.4) gives a MIG device.

    Device names must be DNS labels without dots, so the driver drops the profile's dots
    and turns anything else outside [a-z0-9-] (the ``+`` of ``1g.5gb+me``) into a hyphen."""
    profile = re.sub(r"[^a-z0-9-]", "-", profile.lower().replace(".", "")).strip("-")
    return "gpu-%d-mig-%s-%d-%d" % (minor, profile, gi_profile_id, start)


def _place(sizes_and_starts):
    """Start slots for partitions, in the order listed, that NVML would accept: each at an
    allowed start, none overlapping. Lowest starts first, so a layout packed in order keeps
    the starts it would have by counting slots. None when no placement exists."""
    def search(index, used):
        if index == len(sizes_and_starts):
            return []
        size, starts = sizes_and_starts[index]
        for start in starts:
            slots = set(range(start, start + size))
            if start + size <= _MEMORY_SLOTS and not slots & used:
                rest = search(index + 1, used | slots)
                if rest is not None:
                    return [start] + rest
        return None
    return search(0, frozenset())


def _mig_devices(node, minor, model_name, model, profiles, common):
    table = _MIG_PROFILES.get(model.get("mig", ""))
    if table is None:
        raise TopologyError("GPU model %s does not support MIG" % model_name)
    for profile in profiles:
        if profile not in table:
            raise TopologyError("MIG profile %r is not valid for %s; valid: %s"
                                % (profile, model_name, ", ".join(table)))
    starts = None
    if sum(int(profile.split("g", 1)[0]) for profile in profiles) <= _COMPUTE_SLICES:
        starts = _place([_PLACEMENTS[table[profile][0]] for profile in profiles])
    if starts is None:
        raise TopologyError("MIG profiles %s do not fit on one %s (no placement NVML would allow)"
                            % (profiles, model_name))
    devices = []
    for profile, start in zip(profiles, starts):
        gi, sms, ce, dec, enc, jpeg, ofa, memory = table[profile]
        name = mig_device_name(minor, profile, gi, start)
        attrs = {"type": {"string": "mig"}, "uuid": {"string": mig_uuid(node, minor, name)},
                 "parentUUID": {"string": gpu_uuid(node, minor)}, "profile": {"string": profile}}
        attrs.update(common)
        capacity = {
            "multiprocessors": {"value": str(sms)}, "copyEngines": {"value": str(ce)},
            "decoders": {"value": str(dec)}, "encoders": {"value": str(enc)},
            "jpegEngines": {"value": str(jpeg)}, "ofaEngines": {"value": str(ofa)},
            "memory": {"value": memory}}
        # As the driver publishes them: one capacity of 1 per memory slot the partition
        # occupies, which is how its placement shows in the slice.
        for slot in range(start, start + _PLACEMENTS[gi][0]):
            capacity["memorySlice%d" % slot] = {"value": "1"}
        devices.append({"name": name, "attributes": attrs, "capacity": capacity})
    return devices


def slice_spec(node, devices, generation, slice_count, driver=DRIVER):
    """One slice of a node's pool as the driver publishes it: spec.nodeName set, pool named
    after the node."""
    return {"driver": driver, "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": slice_count},
            "devices": devices}


def slice_specs(node, devices, generation, driver=DRIVER):
    """A node's devices as the slices of one pool (split at MAX_DEVICES_PER_SLICE)."""
    parts = pool.chunks(devices)
    return [slice_spec(node, part, generation, len(parts), driver) for part in parts]


def mig_capable(groups):
    """Whether any GPU of the node supports MIG (what GPU Feature Discovery labels)."""
    return any(_model(group["model"]).get("mig") for group in groups or [])


def _most_of(profile, table):
    """How many partitions of one profile fit on one GPU, as NVIDIA's all-<profile> layouts
    carve it (for example 7 of 1g.10gb, 2 of 3g.40gb on an H100)."""
    count = 0
    while True:
        profiles = [profile] * (count + 1)
        if sum(int(p.split("g", 1)[0]) for p in profiles) > _COMPUTE_SLICES or \
                _place([_PLACEMENTS[table[p][0]] for p in profiles]) is None:
            return count
        count += 1


def apply_mig_layout(groups, layout):
    """The node's GPU groups after the MIG manager applied ``layout`` (a name from NVIDIA's
    default-mig-parted-config: all-disabled, all-enabled or all-<profile>). Raises
    TopologyError when the layout names a profile none of the node's MIG GPUs has."""
    changed, applied = [], False
    for group in groups:
        table = _MIG_PROFILES.get(_model(group["model"]).get("mig", ""))
        entry = {k: v for k, v in group.items() if k != "mig"}
        if table is not None:
            if layout == "all-disabled":
                applied = True
            elif layout == "all-enabled":
                entry["mig"] = list(group.get("mig") or [])
                applied = True
            elif layout.startswith("all-") and layout[4:] in table:
                entry["mig"] = [layout[4:]] * _most_of(layout[4:], table)
                applied = True
            elif group.get("mig"):
                entry["mig"] = group["mig"]
        elif group.get("mig"):
            entry["mig"] = group["mig"]
        changed.append(entry)
    if not applied:
        raise TopologyError("MIG configuration %r is not in the default mig-parted config for this node's GPUs"
                            % layout)
    return changed


# ----- What NVIDIA's kubelet plugin 0.5.0 adds -------------------------------------------------
# Read on the driver's main branch at 95932046 (2026-08-07, 0.5.0-dev, treated as 0.5.0):
# cmd/gpu-kubelet-plugin/consumable_shares.go (the shapes), main.go (the flag, its env
# CONSUMABLE_SHARES, default "disabled", and validateFlags), deviceinfo.go (numaNode), and
# pkg/featuregates (ConsumableShares: alpha, off, since 0.5).

SHARES_GATE = "ConsumableShares"
SHARES_DISABLED = "disabled"
SHARES_MODES = ("disabled", "memory", "unlimited", "<N>")
NUMA_NODE_ATTRIBUTE = "resource.kubernetes.io/numaNode"
_DECIMAL_SUFFIXES = ("", "k", "M", "G", "T", "P", "E")


def decimal_si(count):
    """An integer as a quantity made with resource.NewQuantity(n, DecimalSI) is written (4 -> "4",
    1000 -> "1k"), as the driver writes ``shares``."""
    count = int(count)
    exponent = 0
    while count and count % 1000 == 0 and exponent < len(_DECIMAL_SUFFIXES) - 1:
        count //= 1000
        exponent += 1
    return "%d%s" % (count, _DECIMAL_SUFFIXES[exponent])


def consumable_shares_error(mode, gates):
    """Why the 0.5.0 plugin refuses to start with --consumable-shares ``mode`` (None: it starts).

    As main.go's validateFlags: any value but "disabled" needs the gate; a value must be
    disabled, memory, unlimited or a positive integer, compared untrimmed."""
    if mode != SHARES_DISABLED and not gates.get(SHARES_GATE):
        return "--consumable-shares requires feature gate %s to be enabled" % SHARES_GATE
    if mode not in (SHARES_DISABLED, "memory", "unlimited"):
        number = _atoi(mode)
        if number is None or number <= 0:
            return ("invalid value for --consumable-shares: %s (must be 'disabled', 'memory', 'unlimited', "
                    "or a positive integer)" % json.dumps(mode))
    return None


def _atoi(text):
    """Go's strconv.Atoi: an optional sign and decimal digits, within int64; None otherwise."""
    if not re.match(r"^[+-]?[0-9]+$", text or ""):
        return None
    number = int(text)
    return number if -2 ** 63 <= number < 2 ** 63 else None


def shares_mode(mode, gates):
    """The mode the plugin publishes with: None where it publishes no consumable shares (the
    gate off, or "disabled"), as isConsumableSharesEnabled decides."""
    if not gates.get(SHARES_GATE) or mode is None:
        return None
    mode = mode.strip()
    return None if mode in ("", SHARES_DISABLED) else mode


def with_consumable_shares(device, mode):
    """A copy of ``device`` as applyConsumableShares publishes it in ``mode`` (memory, unlimited
    or a positive integer as text): allowMultipleAllocations, memory rounded down to a multiple
    of 1Mi with a requestPolicy, and for <N> a ``shares`` capacity of N."""
    device = copy.deepcopy(device)
    device["allowMultipleAllocations"] = True
    capacity = device.setdefault("capacity", {})
    if "memory" not in capacity:
        return device
    whole = binary_si(to_bytes(capacity["memory"]["value"]) // _MIB * _MIB)
    capacity["memory"]["value"] = whole
    if mode == "memory":
        policy = {"default": whole, "validRange": {"min": "1Mi", "max": whole, "step": "1Mi"}}
    elif mode == "unlimited" or (_atoi(mode) or 0) > 0:
        policy = {"default": "0", "validRange": {"min": "0", "max": whole, "step": "1Mi"}}
    else:
        # The driver's switch has no branch for anything else (validateFlags refused it).
        return device
    capacity["memory"]["requestPolicy"] = policy
    if mode not in ("memory", "unlimited"):
        shares = decimal_si(_atoi(mode))
        capacity["shares"] = {"value": shares, "requestPolicy": {
            "default": "1", "validRange": {"min": "1", "max": shares, "step": "1"}}}
    return device


def plugin_release(image):
    """(major, minor) of a DRA driver image's tag (``...:v0.5.0``, ``:0.5.0-dev``), None when the
    tag says nothing (``latest``, a digest only) or the image is none of NVIDIA's DRA driver
    images (``k8s-dra-driver-gpu``, ``dra-driver-nvidia-gpu``; a test's pause image stands for an
    unknown release). Calendar tags (v25.12.0) are older than 0.4."""
    name = (image or "").split("@", 1)[0]
    repository, _sep, tag = name.rsplit("/", 1)[-1].partition(":")
    if "dra-driver" not in repository:
        return None
    match = re.match(r"^v?(\d+)\.(\d+)", tag)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def has_release_05(release):
    """Whether a plugin of that release is 0.5.0 or newer (a calendar release, 25.x, is not)."""
    return release is not None and (release >= (0, 5)) and release[0] < 25


def driver_devices(devices, gpus, shares=None, numa=False):
    """The device entries a plugin publishes for a node: ``devices`` (node_devices, as 0.4.x
    publishes them), plus for 0.5.0 (``numa``) each GPU's and MIG device's numaNode where
    sysfs gives one, and with ConsumableShares on (``shares``, a mode) its shapes."""
    nodes = numa_nodes(gpus) if numa else {}
    published = []
    for device in devices:
        device = copy.deepcopy(device)
        minor = int(re.match(r"^gpu-(\d+)", device["name"]).group(1))
        if nodes.get(minor) is not None:
            device["attributes"][NUMA_NODE_ATTRIBUTE] = {"int": nodes[minor]}
        if shares:
            device = with_consumable_shares(device, shares)
        published.append(device)
    return published
