"""SIMULATED: the devices NVIDIA's DRA driver (gpu.nvidia.com, v0.4+) would publish.

No GPU exists here. This module builds ResourceSlice device entries with the names,
attribute keys, attribute types and capacities the real kubelet plugin publishes
(see shared/reference/dra-facts.md): full GPUs as ``gpu-<minor>``, MIG devices as
``gpu-<minor>-mig-<profile>-<gi>-<start>``. Values such as UUIDs and PCI addresses are
derived deterministically from the node name, so they are stable across lab restarts and
unique across nodes, like real serial-derived UUIDs.
"""

import math
import uuid

DRIVER = "gpu.nvidia.com"
MAX_DEVICES_PER_SLICE = 128
_UUID_NAMESPACE = uuid.UUID("6f1c1a52-3b0e-4b8e-9a7e-5c1d2f0a9e11")

# Model catalogue: what the driver reports for each product. Memory is the capacity
# published for the whole device; compute capability and architecture as NVML reports them.
MODELS = {
    "A10": {"productName": "NVIDIA A10", "architecture": "Ampere", "cc": "8.6.0", "memory": "24Gi"},
    "L4": {"productName": "NVIDIA L4", "architecture": "Ada Lovelace", "cc": "8.9.0", "memory": "24Gi"},
    "T4": {"productName": "Tesla T4", "architecture": "Turing", "cc": "7.5.0", "memory": "16Gi"},
    "A100-40GB": {"productName": "NVIDIA A100-PCIE-40GB", "architecture": "Ampere", "cc": "8.0.0",
                  "memory": "40Gi", "mig": "a100-40"},
    "A100-80GB": {"productName": "NVIDIA A100-SXM4-80GB", "architecture": "Ampere", "cc": "8.0.0",
                  "memory": "80Gi", "mig": "a100-80"},
    "H100-80GB": {"productName": "NVIDIA H100 80GB HBM3", "architecture": "Hopper", "cc": "9.0.0",
                  "memory": "80Gi", "mig": "h100-80"},
    "H200": {"productName": "NVIDIA H200", "architecture": "Hopper", "cc": "9.0.0",
             "memory": "141Gi", "mig": "h100-80"},
}

# MIG profiles: usable memory and engine counts per slice (approximate NVML figures).
# multiprocessors, copyEngines, decoders, encoders, jpegEngines, ofaEngines, memory
_MIG_PROFILES = {
    "a100-40": {"1g.5gb": (14, 1, 0, 0, 0, 0, "4864Mi"), "2g.10gb": (28, 2, 1, 0, 0, 0, "9856Mi"),
                "3g.20gb": (42, 3, 2, 0, 0, 0, "19968Mi"), "4g.20gb": (56, 4, 2, 0, 0, 0, "19968Mi"),
                "7g.40gb": (98, 7, 5, 0, 1, 1, "40192Mi")},
    "a100-80": {"1g.10gb": (14, 1, 0, 0, 0, 0, "9728Mi"), "2g.20gb": (28, 2, 1, 0, 0, 0, "19968Mi"),
                "3g.40gb": (42, 3, 2, 0, 0, 0, "40192Mi"), "7g.80gb": (98, 7, 5, 0, 1, 1, "80384Mi")},
    "h100-80": {"1g.10gb": (16, 1, 1, 0, 1, 0, "9984Mi"), "2g.20gb": (32, 2, 2, 0, 2, 0, "20096Mi"),
                "3g.40gb": (60, 3, 3, 0, 3, 0, "40320Mi"), "7g.80gb": (132, 8, 7, 0, 7, 1, "80896Mi")},
}
_SLOTS = {"1g": 1, "2g": 2, "3g": 4, "4g": 4, "7g": 8}

DRIVER_VERSION = "580.126.20"
CUDA_DRIVER_VERSION = "13.0.0"


class TopologyError(ValueError):
    pass


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
        "resource.kubernetes.io/numaNode": {"int": 0 if minor < 4 else 1},
    }
    return attrs


def node_devices(node, gpus):
    """Device entries for one node. ``gpus`` is the topology's list of GPU groups."""
    devices = []
    minor = 0
    for group in gpus:
        model = _model(group["model"])
        for _copy in range(int(group.get("count", 1))):
            common = _common_attributes(node, minor, model, group)
            memory = group.get("memory", model["memory"])
            mig = group.get("mig") or []
            if not mig:
                attrs = {"type": {"string": "gpu"}, "uuid": {"string": gpu_uuid(node, minor)}}
                attrs.update(common)
                attrs["addressingMode"] = {"string": "HMM"} if group.get("hmm") else None
                attrs = {k: v for k, v in attrs.items() if v is not None}
                devices.append({"name": "gpu-%d" % minor, "attributes": attrs,
                                "capacity": {"memory": {"value": memory}}})
            else:
                devices.extend(_mig_devices(node, minor, group["model"], model, mig, common))
            minor += 1
    return devices


def _mig_devices(node, minor, model_name, model, profiles, common):
    table = _MIG_PROFILES.get(model.get("mig", ""))
    if table is None:
        raise TopologyError("GPU model %s does not support MIG" % model_name)
    devices = []
    start = 0
    for gi, profile in enumerate(profiles):
        if profile not in table:
            raise TopologyError("MIG profile %r is not valid for %s; valid: %s"
                                % (profile, model_name, ", ".join(table)))
        slots = _SLOTS[profile.split(".")[0]]
        if start + slots > 8:
            raise TopologyError("MIG profiles %s do not fit on one %s" % (profiles, model_name))
        sms, ce, dec, enc, jpeg, ofa, memory = table[profile]
        name = "gpu-%d-mig-%s-%d-%d" % (minor, profile, gi, start)
        attrs = {"type": {"string": "mig"}, "uuid": {"string": mig_uuid(node, minor, name)},
                 "parentUUID": {"string": gpu_uuid(node, minor)}, "profile": {"string": profile}}
        attrs.update(common)
        devices.append({"name": name, "attributes": attrs, "capacity": {
            "multiprocessors": {"value": str(sms)}, "copyEngines": {"value": str(ce)},
            "decoders": {"value": str(dec)}, "encoders": {"value": str(enc)},
            "jpegEngines": {"value": str(jpeg)}, "ofaEngines": {"value": str(ofa)},
            "memory": {"value": memory}}})
        start += slots
    return devices


def slice_specs(node, devices, generation):
    """Split a node's devices into slices of one pool, as the driver's publisher does."""
    count = max(1, math.ceil(len(devices) / MAX_DEVICES_PER_SLICE))
    specs = []
    for index in range(count):
        chunk = devices[index * MAX_DEVICES_PER_SLICE:(index + 1) * MAX_DEVICES_PER_SLICE]
        specs.append({"driver": DRIVER, "nodeName": node,
                      "pool": {"name": node, "generation": generation, "resourceSliceCount": count},
                      "devices": chunk})
    return specs
