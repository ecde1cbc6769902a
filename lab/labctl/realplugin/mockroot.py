"""A driver root per plugin process for NVIDIA's mock NVML (NVIDIA/k8s-test-infra), with the
simulator's own figures, and the fake sysfs the plugin reads pcieRoot and numaNode from.

The mock takes one device profile per config (device_defaults: name, architecture, compute
capability, memory); only UUID, bus ID and minor are per device. So a node whose GPUs are of
one model is one plugin process under the node's own name; a node with several models is one
process per model, each under its own Node ("<node>-<model>", see processes()), since two
processes cannot share one pool. MIG partitions are not rendered (the mock's MIG profiles do not
take the simulator's placements): processes() names such nodes as skipped."""

import os
import re
import shutil

import yaml

from labctl.apiserver.sim import gpus

# Mock profile each simulated model is derived from, NVML's architecture name and PCI device id.
MOCK_MODELS = {
    "A10": ("t4", "ampere", 0x2236),
    "L4": ("t4", "ada", 0x27B8),
    "T4": ("t4", "turing", 0x1EB8),
    "H100-80GB": ("h100", "hopper", 0x2330),
    "H200": ("h100", "hopper", 0x2335),
    "A100-40GB": ("a100", "ampere", 0x20F1),
    "A100-80GB": ("a100", "ampere", 0x20B2),
}
NVIDIA_VENDOR = 0x10DE


class RenderError(ValueError):
    pass


def _process_name(node, model, models):
    if len(models) == 1:
        return node
    return "%s-%s" % (node, re.sub(r"[^a-z0-9-]", "-", model.lower()))


def processes(node):
    """[(process node name, model, [minor...])], [reason a group is skipped] for one topology node."""
    groups, skipped, minor = {}, [], 0
    for group in node["gpus"] or []:
        count = int(group.get("count", 1))
        minors = list(range(minor, minor + count))
        minor += count
        if group.get("mig"):
            skipped.append("%s: GPUs %s (%s) are split into MIG devices; the mock is not given MIG layouts"
                           % (node["name"], minors, group["model"]))
            continue
        if group["model"] not in MOCK_MODELS:
            raise RenderError("node %s: no mock profile for model %s; known: %s"
                              % (node["name"], group["model"], ", ".join(sorted(MOCK_MODELS))))
        if set(group) - {"model", "count", "numa_node"}:
            skipped.append("%s: GPUs %s carry overrides %s the mock profile does not render"
                           % (node["name"], minors, sorted(set(group) - {"model", "count", "numa_node"})))
            continue
        groups.setdefault(group["model"], []).extend(minors)
    return [(_process_name(node["name"], model, groups), model, minors) for model, minors in groups.items()], skipped


def bus_id(minor):
    """The simulator's bus ID for a minor (gpus._common_attributes) and its root bus."""
    bus = (0x10 + minor * 0x10) & 0xFF
    return "0000:%02x:00.0" % bus, (bus - 1) & 0xFF


def mock_config(profile_text, node, model, minors):
    """The mock's config for one process: the profile's system and device_defaults with the
    simulator's driver/CUDA versions and the model's name, architecture, compute capability,
    memory (no reserve: the simulator publishes the whole figure) and PCI id; one device per
    minor with the simulator's UUID and bus ID. NVLink and PCIe topology sections are dropped."""
    figures = gpus.MODELS[model]
    _base, architecture, device_id = MOCK_MODELS[model]
    data = yaml.safe_load(profile_text)
    major, minor_version = gpus.CUDA_DRIVER_VERSION.split(".")[:2]
    data["system"].update({
        "driver_version": gpus.DRIVER_VERSION,
        "nvml_version": "%s.%s" % (major, gpus.DRIVER_VERSION),
        "cuda_version": "%s.%s" % (major, minor_version),
        "cuda_version_major": int(major), "cuda_version_minor": int(minor_version)})
    defaults = data["device_defaults"]
    cc_major, cc_minor = figures["cc"].split(".")[:2]
    defaults.update({"name": figures["productName"], "architecture": architecture,
                     "compute_capability": {"major": int(cc_major), "minor": int(cc_minor)}})
    defaults["memory"].update({"total_bytes": figures["memory"], "free_bytes": figures["memory"],
                               "reserved_bytes": 0, "used_bytes": 0})
    defaults["pci"]["device_id"] = (device_id << 16) | NVIDIA_VENDOR
    data["devices"] = [{"index": i, "uuid": gpus.gpu_uuid(node, m), "pci": {"bus_id": bus_id(m)[0]},
                        "minor_number": m} for i, m in enumerate(minors)]
    for section in ("nvlink", "pcie_topology"):
        data.pop(section, None)
    return data


def _write(path, text, mode=0o644):
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


def render_root(root, libnvidia_ml, profile_text, node, model, minors, numa):
    """Lay out ``root``: usr/lib64/libnvidia-ml.so.1 (the mock), a stub nvidia-smi, config/config.yaml,
    work/{cdi,plugins,registry}, and sys/{devices,bus} for the fake sysfs (numa: {minor: node or None})."""
    for sub in ("usr/lib64", "usr/bin", "config", "work/cdi", "work/plugins", "work/registry", "sys/bus", "sys/devices"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    # A copy, not a link out of the root: prepare resolves the driver's libraries inside the root.
    lib = os.path.join(root, "usr/lib64", "libnvidia-ml.so." + gpus.DRIVER_VERSION)
    shutil.copyfile(libnvidia_ml, lib)
    link = os.path.join(root, "usr/lib64/libnvidia-ml.so.1")
    if not os.path.lexists(link):
        os.symlink(os.path.basename(lib), link)
    # The plugin looks for nvidia-smi to recognise a driver root; publishing never runs it.
    _write(os.path.join(root, "usr/bin/nvidia-smi"), "#!/bin/sh\nexit 0\n", 0o755)
    with open(os.path.join(root, "config/config.yaml"), "w") as handle:
        yaml.safe_dump(mock_config(profile_text, node, model, minors), handle, sort_keys=False)
    _base, _arch, device_id = MOCK_MODELS[model]
    for m in minors:
        bus, root_bus = bus_id(m)
        parent = "pci0000:%02x/0000:%02x:00.0" % (root_bus, root_bus)
        device = os.path.join(root, "sys/devices", parent, bus)
        os.makedirs(device, exist_ok=True)
        value = numa.get(m)
        for name, text in (("vendor", "0x%04x" % NVIDIA_VENDOR), ("device", "0x%04x" % device_id),
                           ("class", "0x030200"), ("numa_node", str(-1 if value is None else value)),
                           ("subsystem_vendor", "0x%04x" % NVIDIA_VENDOR), ("subsystem_device", "0x1234"),
                           ("resource", "0x0000000000000000 0x0000000000000000 0x0000000000000000")):
            _write(os.path.join(device, name), text + "\n")
        link = os.path.join(root, "sys/bus", bus)
        if not os.path.lexists(link):
            os.symlink("../../../devices/%s/%s" % (parent, bus), link)
