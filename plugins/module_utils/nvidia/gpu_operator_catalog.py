# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU Operator and DRA driver chart versions this collection knows, and what each offers (pure logic).

The GPU Operator minors with their known patches, the layouts each can lay out and the DRA
driver charts each was checked with; the DRA driver minors with the chart name each carries
(renamed at v0.4); the feature gates that driver takes and from which version. Here chart
versions ("v26.3.1", "0.4.1") are read and written (parse_version is their one parser), a
requested version is matched to its minor, a version and DRA mode become a layout, and moving
a live DRA release across the chart's rename is worked out. PlanError, the refusal the whole
plan raises, is defined here, where a version is first refused.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.nvidia import OLD_DRA_CHART

OPERATOR_CHART = "gpu-operator"
DEFAULT_REPO_URL = "https://helm.ngc.nvidia.com/nvidia"

# GPU Operator chart tags (dra-facts.md), per minor: known patches, possible layouts (the first
# is what mode auto picks: NVIDIA's supported path) and the DRA driver charts the standalone
# layout was checked with, the first its default. The default is the one NVIDIA pairs with the
# minor: v26.7's own GPUCluster runs DRA driver v0.5.0 (released 2026-08-19), v26.3 came out
# with 0.4.1. Each minor also takes the other of the two: in the standalone layout the operator
# and the DRA chart meet only through the node label and the driver root, which 0.5.0 keeps, and
# both pairs were rendered and installed (tests/integration/real_charts.py, docs/testing.md).
OPERATOR_VERSIONS = {
    (25, 10): {"patches": (0, 1), "layouts": ("standalone",), "dra_drivers": ("25.12.0",)},
    (26, 3): {"patches": (0, 1, 2, 3), "layouts": ("standalone",), "dra_drivers": ("0.4.1", "0.5.0")},
    (26, 7): {"patches": (0,), "layouts": ("standalone", "gpucluster"), "dra_drivers": ("0.5.0", "0.4.1")},
}
MODES = ("auto", "standalone", "gpucluster")
# DRA driver chart tags: (major, minor) -> chart name (renamed at v0.4).
DRA_DRIVER_MINORS = {(25, 3): OLD_DRA_CHART, (25, 8): OLD_DRA_CHART, (25, 12): OLD_DRA_CHART,
                     (0, 4): nvidia.DRA_CHART, (0, 5): nvidia.DRA_CHART}
# The kubelet plugin NVIDIA's v26.7 operator deploys for a GPUCluster (read in its source).
GPUCLUSTER_PLUGIN = {"pod_selector": "app=nvidia-dra-driver-kubelet-plugin",
                     "daemonset": "nvidia-dra-driver-kubelet-plugin"}

# The DRA driver's feature gates GPU sharing needs (off by default in NVIDIA's driver): set where
# gpu_operator_values.dra_driver_settings() puts gates, rendered FEATURE_GATES on the kubelet plugin.
SHARING_GATES = {"TimeSlicingSettings": True, "MPSSupport": True}
# NVIDIA's NVML health check (driver v0.4.0+, alpha, off by default): XIDs and lost GPUs become
# device taints on the published devices. The driver refuses it beside these gates
# (cmd/gpu-kubelet-plugin, main at 95932046 taken as 0.5.0).
HEALTH_GATE = "NVMLDeviceHealthCheck"
HEALTH_EXCLUSIVE_GATES = ("DynamicMIG", "PassthroughSupport")
# ConsumableShares (DRA driver 0.5.0, alpha gate, off by default): the kubelet plugin publishes
# each GPU's memory as capacity that several claims consume, in the mode its CONSUMABLE_SHARES
# setting names: "memory", "unlimited" or a positive whole number (read on the driver's main
# branch at its 0.5.0 features, cmd/gpu-kubelet-plugin/main.go). A 0.4.x plugin knows no such
# gate and stops at start on an unknown one, so the mode needs a 0.5.0 chart or later.
CONSUMABLE_SHARES_GATE = "ConsumableShares"
CONSUMABLE_SHARES_ENV = "CONSUMABLE_SHARES"
CONSUMABLE_SHARES_MODES = ("memory", "unlimited")
CONSUMABLE_SHARES_SINCE = (0, 5, 0)


class PlanError(ValueError):
    """A combination we refuse before touching the cluster; the message says what to change."""


def parse_version(text):
    """'v26.3.1' or '26.3.1' -> (26, 3, 1)."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", str(text or "").strip())
    if not match:
        raise PlanError("%r is not a chart version (write it like v26.3.1)" % (text,))
    return tuple(int(part) for part in match.groups())


def version_text(version):
    return "v%d.%d.%d" % version


def dra_version_text(version):
    """The DRA driver chart spells its versions without "v" (0.4.1, 25.12.0)."""
    return "%d.%d.%d" % version


def supported_operator_versions():
    return ["v%d.%d.%d" % (minor[0], minor[1], patch)
            for minor, info in sorted(OPERATOR_VERSIONS.items()) for patch in info["patches"]]


def operator_info(version_string):
    """(version, the minor's facts, cautions) for a GPU Operator chart version.

    A newer patch of a known minor (v26.3.4) is accepted, with a caution: sites pin what their
    mirror has, and a patch keeps the minor's values. An unknown minor is refused."""
    version = parse_version(version_string)
    info = OPERATOR_VERSIONS.get(version[:2])
    if info is None or version[2] < min(info["patches"]):
        raise PlanError("GPU Operator chart %s is not one this collection knows (%s); pin one of those with "
                        "gpu_operator_version, or a newer patch of one of those minors"
                        % (version_string, ", ".join(supported_operator_versions())))
    cautions = []
    if version[2] not in info["patches"]:
        newest = (version[0], version[1], max(info["patches"]))
        cautions.append("GPU Operator %s is a newer patch than this collection was checked against (%s): its "
                        "values are taken to be %s's, and the image list below uses %s's tags; compare with "
                        "`helm show values gpu-operator --version %s` before mirroring"
                        % (version_text(version), version_text(newest), version_text(newest),
                           version_text(newest), version_text(version)))
    return version, info, cautions


def dra_driver_chart(version_string):
    """The DRA driver chart's name for one of its versions ('0.4.1' -> 'dra-driver-nvidia-gpu')."""
    version = parse_version(version_string)
    name = DRA_DRIVER_MINORS.get(version[:2])
    if name is None:
        raise PlanError("DRA driver chart %s is not one this collection knows (25.3.x, 25.8.x, 25.12.x, "
                        "0.4.x, 0.5.x)" % version_string)
    return name


def resolve_layout(version_string, dra_enabled, mode):
    """Which layout a version and mode give: standalone, gpucluster or device_plugin."""
    if mode not in MODES:
        raise PlanError("gpu_operator_dra_mode must be one of %s, not %r" % (", ".join(MODES), mode))
    _version, info, _cautions = operator_info(version_string)
    if not dra_enabled:
        return "device_plugin"
    if mode == "auto":
        return info["layouts"][0]
    if mode not in info["layouts"]:
        raise PlanError("gpu_operator_dra_mode %s needs GPU Operator v26.7 or later (%s offers: %s)"
                        % (mode, version_string, ", ".join(info["layouts"])))
    return mode


def dra_chart_upgrade(chart, version, installed):
    """What moving the live DRA driver release to ``chart`` ``version`` needs (NVIDIA's upgrade
    notes for v25.12 -> v0.4, read at v0.4.1): nameOverride and CRDs. Raises PlanError on a
    downgrade across the rename, which NVIDIA does not support.

    ``installed``: None, or {name, version} of the kubelet plugin DaemonSet the release runs
    now (its name is "<chart name or nameOverride>-kubelet-plugin", its label
    app.kubernetes.io/version the chart's appVersion). Returns {name_override, apply_crds, from}:
    ``name_override`` keeps the objects' names when the renamed chart replaces the old one (and
    on every later run, so that a second run renames nothing); ``apply_crds`` because Helm
    installs a chart's CRDs on first install only."""
    if not installed:
        return {"name_override": None, "apply_crds": False, "from": None}
    old_names = installed["name"] == nvidia.kubelet_plugin_daemonset(OLD_DRA_CHART)
    try:
        installed_version = parse_version(installed.get("version"))
    except PlanError:
        installed_version = None
    if installed_version and installed_version[0] < 25 <= version[0]:
        raise PlanError("the DRA driver release runs chart %s; going back to %s is not supported by NVIDIA "
                        "(the kubelet plugin's checkpoint format changed at 0.4): pin "
                        "gpu_operator_dra_driver_version to %s or later"
                        % (dra_version_text(installed_version), dra_version_text(version),
                           dra_version_text(installed_version)))
    return {"name_override": OLD_DRA_CHART if old_names and chart != OLD_DRA_CHART else None,
            "apply_crds": installed_version != version,
            "from": dra_version_text(installed_version) if installed_version else installed.get("version")}
