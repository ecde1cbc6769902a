# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which container images NVIDIA's charts make a cluster pull, and how a mirror replaces them (pure logic).

An air-gapped site mirrors exactly the images the planned releases will pull; this module
names them (repository and tag, as mirroring tools take them) and writes the chart values that
point every one of them at the mirror. The tables are facts read in NVIDIA's released charts
(gpu-operator v25.10.0 to v26.7.0 values.yaml and its vendored node-feature-discovery chart;
DRA driver charts v25.12.0, v0.4.0, v0.4.1, and 0.5.0 as its repository's main branch has it);
``tests/integration/real_charts.py`` renders the real charts with these values and compares the
images it finds with this list.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ansible_collections.dra.gpu.plugins.module_utils.nvidia.chart_values import lookup, truthy

Image = collections.namedtuple("Image", "key repository image switches layouts")

ALL_LAYOUTS = ("standalone", "device_plugin", "gpucluster")
# Operands the operator deploys from a ClusterPolicy; a GPUCluster (v26.7) deploys only the DRA
# driver, DCGM and its exporter, and the driver through an NVIDIADriver resource.
CLUSTER_POLICY = ("standalone", "device_plugin")
# What turns an image on: every (value, default, wanted) must hold; wanted True means "is true".
SANDBOX = ("sandboxWorkloads.enabled", False, True)
KUBEVIRT = ("sandboxWorkloads.mode", "kubevirt", "kubevirt")
KATA = ("sandboxWorkloads.mode", "kubevirt", "kata")
DRIVER = ("driver.enabled", True, True)


def _on(key, default=True):
    return (key + ".enabled", default, True)


# Every image of the gpu-operator chart: the value key holding repository/image/version,
# NVIDIA's default repository and image name, what turns it on (read in the operator's
# state_manager.go: the sandbox operands need sandboxWorkloads.enabled, and some a sandbox mode)
# and the layouts that deploy it. A version pulls only the images its tag table (OPERATOR_TAGS)
# lists: operator.initContainer exists only in v25.10, kataManager only before v26.3,
# kataSandboxDevicePlugin from v26.3, draDriver from v26.7. Off by default, so listed only when
# turned on, but mirrored always, so that turning one on later pulls from the mirror too: DCGM,
# the node status exporter, GDS, GDRCopy and the sandbox operands. vgpuManager's own image is
# one the user builds (no default repository): neither listed nor mirrored.
OPERATOR_IMAGES = (
    Image("operator", "nvcr.io/nvidia", "gpu-operator", (), ALL_LAYOUTS),
    # The validator and the node status exporter run the operator's own image.
    Image("validator", "nvcr.io/nvidia", "gpu-operator", (), ALL_LAYOUTS),
    Image("operator.initContainer", "nvcr.io/nvidia", "cuda", (), CLUSTER_POLICY),
    Image("driver", "nvcr.io/nvidia", "driver", (DRIVER,), ALL_LAYOUTS),
    Image("driver.manager", "nvcr.io/nvidia/cloud-native", "k8s-driver-manager", (DRIVER,), ALL_LAYOUTS),
    Image("toolkit", "nvcr.io/nvidia/k8s", "container-toolkit", (_on("toolkit"),), CLUSTER_POLICY),
    Image("devicePlugin", "nvcr.io/nvidia", "k8s-device-plugin", (_on("devicePlugin"),), CLUSTER_POLICY),
    # GPU Feature Discovery ships in the device plugin's image.
    Image("gfd", "nvcr.io/nvidia", "k8s-device-plugin", (_on("gfd"),), CLUSTER_POLICY),
    Image("migManager", "nvcr.io/nvidia/cloud-native", "k8s-mig-manager", (_on("migManager"),), CLUSTER_POLICY),
    Image("dcgm", "nvcr.io/nvidia/cloud-native", "dcgm", (_on("dcgm", False),), ALL_LAYOUTS),
    Image("dcgmExporter", "nvcr.io/nvidia/k8s", "dcgm-exporter", (_on("dcgmExporter"),), ALL_LAYOUTS),
    Image("nodeStatusExporter", "nvcr.io/nvidia", "gpu-operator", (_on("nodeStatusExporter", False),),
          CLUSTER_POLICY),
    Image("draDriver", "nvcr.io/nvidia", "dra-driver-nvidia-gpu", (), ("gpucluster",)),
    Image("gds", "nvcr.io/nvidia/cloud-native", "nvidia-fs", (DRIVER, _on("gds", False)), ALL_LAYOUTS),
    Image("gdrcopy", "nvcr.io/nvidia/cloud-native", "gdrdrv", (DRIVER, _on("gdrcopy", False)), ALL_LAYOUTS),
    Image("vgpuManager.driverManager", "nvcr.io/nvidia/cloud-native", "k8s-driver-manager",
          (SANDBOX, _on("vgpuManager", False)), CLUSTER_POLICY),
    Image("vgpuDeviceManager", "nvcr.io/nvidia/cloud-native", "vgpu-device-manager", (SANDBOX, _on("vgpuDeviceManager")),
          CLUSTER_POLICY),
    Image("vfioManager", "nvcr.io/nvidia/cloud-native", "k8s-driver-manager", (SANDBOX, _on("vfioManager")),
          CLUSTER_POLICY),
    Image("vfioManager.driverManager", "nvcr.io/nvidia/cloud-native", "k8s-driver-manager",
          (SANDBOX, _on("vfioManager")), CLUSTER_POLICY),
    Image("sandboxDevicePlugin", "nvcr.io/nvidia", "kubevirt-gpu-device-plugin",
          (SANDBOX, KUBEVIRT, _on("sandboxDevicePlugin")), CLUSTER_POLICY),
    Image("kataSandboxDevicePlugin", "nvcr.io/nvidia/cloud-native", "nvidia-sandbox-device-plugin",
          (SANDBOX, KATA, _on("kataSandboxDevicePlugin")), CLUSTER_POLICY),
    Image("kataManager", "nvcr.io/nvidia/cloud-native", "k8s-kata-manager", (SANDBOX, _on("kataManager", False)),
          CLUSTER_POLICY),
    Image("ccManager", "nvcr.io/nvidia/cloud-native", "k8s-cc-manager", (SANDBOX, KATA, _on("ccManager")),
          CLUSTER_POLICY),
)
# Node Feature Discovery, a subchart: its repository value holds the image name too, and its
# tag defaults to the subchart's appVersion.
NFD_KEY = "node-feature-discovery.image"
NFD_REPOSITORY = "registry.k8s.io/nfd/node-feature-discovery"
NFD_SWITCH = "nfd.enabled"
# These take the chart's own version as their tag unless a version value is set.
CHART_VERSION_TAGGED = ("operator", "validator", "nodeStatusExporter")

# Default tags per gpu-operator chart tag (values.yaml, and the NFD subchart's appVersion); a
# (repository, image, tag) where a version's default repository or image differs from the
# table above. The driver's tag gets the node's OS appended by the operator (driver_os_tag).
_V25_10_0 = {"operator.initContainer": "13.0.1-base-ubi9", "driver": "580.95.05", "driver.manager": "v0.9.0",
             "toolkit": "v1.18.0", "devicePlugin": "v0.18.0", "gfd": "v0.18.0", "migManager": "v0.13.0",
             "dcgm": "4.4.1-2-ubuntu22.04", "dcgmExporter": "4.4.1-4.6.0-distroless", "nfd": "v0.18.2",
             "gds": "2.26.6", "gdrcopy": "v2.5.1", "vgpuManager.driverManager": "v0.9.0", "vgpuDeviceManager": "v0.4.1",
             "vfioManager": ("nvcr.io/nvidia", "cuda", "13.0.1-base-ubi9"), "vfioManager.driverManager": "v0.9.0",
             "sandboxDevicePlugin": "v1.4.0", "kataManager": "v0.2.3", "ccManager": "v0.1.1"}
_V26_3_0 = {"driver": "580.126.20", "driver.manager": "v0.10.0", "toolkit": "v1.19.0", "devicePlugin": "v0.19.0",
            "gfd": "v0.19.0", "migManager": "v0.14.0", "dcgm": "4.5.2-1-ubuntu22.04",
            "dcgmExporter": "4.5.1-4.8.0-distroless", "nfd": "v0.18.3", "gds": "2.27.3", "gdrcopy": "v2.5.1",
            "vgpuManager.driverManager": "v0.10.0", "vgpuDeviceManager": "v0.4.2", "vfioManager": "v0.10.0",
            "vfioManager.driverManager": "v0.10.0", "sandboxDevicePlugin": "v1.5.0", "kataSandboxDevicePlugin": "v0.0.2",
            "ccManager": "v0.3.0"}
_V26_3_1 = dict(_V26_3_0, **{"gdrcopy": "v2.5.2", "kataSandboxDevicePlugin": "v0.0.3", "ccManager": "v0.4.0"})
_V26_3_2 = dict(_V26_3_1, **{"driver.manager": "v0.11.0", "toolkit": "v1.19.1", "devicePlugin": "v0.19.2",
                             "gfd": "v0.19.2", "migManager": "v0.14.2", "dcgmExporter": "4.5.3-4.8.2-distroless",
                             "vgpuManager.driverManager": "v0.11.0", "vfioManager": "v0.11.0",
                             "vfioManager.driverManager": "v0.11.0"})
OPERATOR_TAGS = {
    (25, 10, 0): _V25_10_0,
    (25, 10, 1): dict(_V25_10_0, **{"driver": "580.105.08", "driver.manager": "v0.9.1", "toolkit": "v1.18.1",
                                    "devicePlugin": "v0.18.1", "gfd": "v0.18.1", "migManager": "v0.13.1",
                                    "dcgm": "4.4.2-1-ubuntu22.04", "dcgmExporter": "4.4.2-4.7.0-distroless",
                                    "vgpuManager.driverManager": "v0.9.1", "vfioManager.driverManager": "v0.9.1"}),
    (26, 3, 0): _V26_3_0,
    (26, 3, 1): _V26_3_1,
    (26, 3, 2): _V26_3_2,
    (26, 3, 3): dict(_V26_3_2, **{"devicePlugin": "v0.19.3", "gfd": "v0.19.3"}),
    (26, 7, 0): {"driver": "595.91.07", "driver.manager": "v0.12.0", "toolkit": "v1.20.0", "devicePlugin": "v0.20.0",
                 "gfd": "v0.20.0", "migManager": "v0.15.0", "dcgm": "4.6.0-1-ubuntu24.04",
                 "dcgmExporter": "4.6.0-4.8.3-distroless", "draDriver": "v0.5.0", "nfd": "v0.19.0", "gds": "2.29.4",
                 "gdrcopy": "v2.6", "vgpuManager.driverManager": "v0.12.0", "vgpuDeviceManager": "v0.5.0",
                 "vfioManager": "v0.12.0", "vfioManager.driverManager": "v0.12.0", "sandboxDevicePlugin": "v1.6.0",
                 "kataSandboxDevicePlugin": "v0.0.5", "ccManager": "v0.4.3"},
}

# NVIDIA's DRA driver chart: its image repository per chart name (the chart and the image moved
# to registry.k8s.io with the rename at v0.4 and stay there at 0.5.0; NVIDIA's own build of v0.4+
# is nvcr.io/nvidia/dra-driver-nvidia-gpu). The tag is "v" + the chart's appVersion.
DRA_DRIVER_REPOSITORIES = {
    "nvidia-dra-driver-gpu": "nvcr.io/nvidia/k8s-dra-driver-gpu",
    "dra-driver-nvidia-gpu": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu",
}

# The NFD labels the operator reads on a GPU node to pick the driver image's OS suffix.
OS_ID_LABEL = "feature.node.kubernetes.io/system-os_release.ID"
OS_VERSION_LABEL = "feature.node.kubernetes.io/system-os_release.VERSION_ID"


def mirrored(repository, registry):
    """NVIDIA's repository on a mirror: the registry host replaced, the path kept
    (nvcr.io/nvidia/k8s -> registry.example.com/nvidia/k8s)."""
    path = repository.split("/", 1)[1] if "/" in repository else repository
    return "%s/%s" % (registry.rstrip("/"), path)


def _default(item, tags):
    """(repository, image, tag) NVIDIA's values give an image at one version (tag None for the
    chart's own version)."""
    entry = tags.get(item.key)
    if isinstance(entry, tuple):
        return entry
    return item.repository, item.image, entry


def _present(item, tags):
    return item.key in tags or item.key in CHART_VERSION_TAGGED


def _switched_on(values, switches):
    for key, default, wanted in switches:
        value = lookup(values, key, default)
        if (wanted is True and not truthy(value)) or (wanted is not True and value != wanted):
            return False
    return True


def operator_mirror_values(tags, registry, layout):
    """{dotted key: repository} pointing each image of one gpu-operator version and layout at the
    mirror (a layout's images only: a GPUCluster reads no ClusterPolicy operand's value)."""
    values = {}
    for item in OPERATOR_IMAGES:
        if _present(item, tags) and layout in item.layouts:
            values[item.key + ".repository"] = mirrored(_default(item, tags)[0], registry)
    if "nfd" in tags:
        values[NFD_KEY + ".repository"] = mirrored(NFD_REPOSITORY, registry)
    return values


def dra_driver_mirror_values(chart, registry):
    return {"image.repository": mirrored(DRA_DRIVER_REPOSITORIES[chart], registry)}


def driver_os_tag(labels):
    """The suffix the operator appends to the driver's tag, from a GPU node's NFD labels
    (ubuntu + 22.04 -> ubuntu22.04; Rocky and RHEL 10+ keep only the major version);
    None when the labels are missing (NFD has not labelled the node yet)."""
    os_id, version = (labels or {}).get(OS_ID_LABEL), (labels or {}).get(OS_VERSION_LABEL)
    if not os_id or not version:
        return None
    major = version.split(".")[0]
    if os_id == "rocky" or (os_id == "rhel" and major.isdigit() and int(major) >= 10):
        version = major
    return "%s%s" % (os_id, version)


def _entry(release, component, repository, tag):
    return {"release": release, "component": component, "repository": repository, "tag": tag,
            "ref": "%s:%s" % (repository, tag)}


def operator_images(release, chart_version, tags, layout, values, os_tags=()):
    """The images one gpu-operator release makes the cluster pull, from its planned values.

    ``tags``: OPERATOR_TAGS for the version; ``values``: the planned values (mirror and the
    user's values included); ``os_tags``: the GPU nodes' OS suffixes for the driver's tag (the
    driver is listed once per OS; without any, its tag is left without suffix and a caller
    says so)."""
    images = []
    for item in OPERATOR_IMAGES:
        if layout not in item.layouts or not _present(item, tags) or not _switched_on(values, item.switches):
            continue
        default_repository, default_image, default_tag = _default(item, tags)
        repository = "%s/%s" % (lookup(values, item.key + ".repository") or default_repository,
                                lookup(values, item.key + ".image") or default_image)
        tag = str(lookup(values, item.key + ".version") or default_tag or chart_version)
        if item.key == "driver":
            for os_tag in sorted(set(os_tags)) or [None]:
                images.append(_entry(release, item.key, repository, "%s-%s" % (tag, os_tag) if os_tag else tag))
            continue
        images.append(_entry(release, item.key, repository, tag))
    if "nfd" in tags and truthy(lookup(values, NFD_SWITCH, True)):
        images.append(_entry(release, "node-feature-discovery", lookup(values, NFD_KEY + ".repository") or NFD_REPOSITORY,
                             str(lookup(values, NFD_KEY + ".tag") or tags["nfd"])))
    return images


def dra_driver_images(release, chart, chart_version, values):
    """The DRA driver chart's one image (kubelet plugin, controller and webhook share it)."""
    repository = lookup(values, "image.repository") or DRA_DRIVER_REPOSITORIES[chart]
    tag = lookup(values, "image.tag") or "v" + str(chart_version).lstrip("v")
    return [_entry(release, "draDriver", repository, str(tag))]


def unique_refs(images):
    """One line per image, in the order first met: the form mirroring tools read."""
    seen = []
    for image in images:
        if image["ref"] not in seen:
            seen.append(image["ref"])
    return seen
