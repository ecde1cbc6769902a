# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What to install for NVIDIA GPUs with DRA: charts, values, node labels, refusals (pure logic).

One place decides, for a GPU Operator chart version and a DRA mode, which Helm releases to
install with which values, which node labels make the migration node by node, and which
combinations NVIDIA's charts would refuse to render. Nothing here talks to a cluster.

Layouts:
  * ``standalone``: the GPU Operator without the device plugin on the DRA nodes, plus NVIDIA's
    separate DRA driver chart whose kubelet plugin runs on the nodes labelled
    ``nvidia.com/dra-kubelet-plugin=true``: NVIDIA's supported path at every version, and what
    mode ``auto`` picks.
  * ``gpucluster``: v26.7+ only, and only when asked for: the operator deploys the DRA driver
    itself through a GPUCluster resource (``clusterPolicy.deployCR=false``,
    ``gpuCluster.deployCR=true``), which NVIDIA calls a Technology Preview, supported for new
    installs only.
  * ``device_plugin``: DRA disabled, the classic operator with its device plugin.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_images as images
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.chart_values import deep_merge, lookup, set_value, truthy
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions
from ansible_collections.dra.gpu.plugins.module_utils.sharing.sharing_config import SHARES_COMBINE, SHARES_ENFORCE, shares_mode_words
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.nvidia import DEVICE_PLUGIN_NODE_LABEL, DRA_NODE_LABEL, OLD_DRA_CHART

# Marks the device-plugin label as ours, so that removing it never touches someone else's.
OWNER_ANNOTATION = "dra.gpu/device-plugin-disabled-by"
OWNER = "dra.gpu.gpu_operator"
EVICTION_ENV = "NODE_LABEL_FOR_GPU_POD_EVICTION"

OPERATOR_CHART = "gpu-operator"
# The DRA driver's feature gates GPU sharing needs (off by default in NVIDIA's driver): set where
# dra_driver_settings() puts gates, rendered FEATURE_GATES on the kubelet plugin.
SHARING_GATES = {"TimeSlicingSettings": True, "MPSSupport": True}
# NVIDIA's NVML health check (driver v0.4.0+, alpha, off by default): XIDs and lost GPUs become
# device taints on the published devices. The driver refuses it beside these gates
# (cmd/gpu-kubelet-plugin, main at 95932046 taken as 0.5.0).
HEALTH_GATE = "NVMLDeviceHealthCheck"
HEALTH_EXCLUSIVE_GATES = ("DynamicMIG", "PassthroughSupport")


def driver_gates(sharing=False, health=False):
    """The feature gates the collection sets on NVIDIA's DRA driver; None when none."""
    gates = dict(SHARING_GATES) if sharing else {}
    if health:
        gates[HEALTH_GATE] = True
    return gates or None


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


# The options of module gpu_operator_plan (documented in gpu_operator_plan.yml).
ARGUMENT_SPEC = dict(
    state=dict(type="str", choices=["present", "absent"], default="present"),
    version=dict(type="str", required=True),
    dra_enabled=dict(type="bool", default=True),
    dra_mode=dict(type="str", choices=list(MODES), default="auto"),
    driver_enabled=dict(type="bool", default=True),
    toolkit_enabled=dict(type="bool", default=True),
    gpu_node_selector=dict(type="str", default=nvidia.GPU_NODE_SELECTOR),
    dra_nodes=dict(type="list", elements="str", default=[]),
    values=dict(type="dict", default={}),
    dra_driver_values=dict(type="dict", default={}),
    dra_driver_version=dict(type="str"),
    image_registry=dict(type="str"),
    dra_sharing=dict(type="bool", default=False),
    dra_health_check=dict(type="bool", default=False),
    dra_consumable_shares=dict(type="str", default=""),
    namespace=dict(type="str", default="gpu-operator"),
    dra_driver_namespace=dict(type="str", default="nvidia-dra-driver-gpu"),
    release_name=dict(type="str", default="gpu-operator"),
    dra_driver_release_name=dict(type="str", default="nvidia-dra-driver-gpu"),
    min_kubernetes_version=dict(type="str", default="1.35"),
    chart_source=dict(type="str", choices=["repo", "oci", "local"], default="repo"),
    chart_repo_url=dict(type="str", default=DEFAULT_REPO_URL),
    dra_driver_chart_repo_url=dict(type="str"),
    oci_repository=dict(type="str"),
    dra_driver_oci_repository=dict(type="str"),
    chart_dir=dict(type="path"),
    check_charts=dict(type="bool", default=True),
    binary_path=dict(type="path"),
    helm_timeout=dict(type="int", default=60),
    force_removal=dict(type="bool", default=False),
    evict_device_plugin_pods=dict(type="bool", default=False),
)


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


def image_tags(version):
    """OPERATOR_TAGS for a version; a newer patch uses its minor's newest known patch."""
    known = [v for v in images.OPERATOR_TAGS if v[:2] == version[:2] and v <= version]
    return images.OPERATOR_TAGS[max(known)]


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


def operator_values(version, layout, dra_covers_all_gpu_nodes, driver_enabled, toolkit_enabled,
                    image_registry=None, sharing=False, consumable_shares=None, health=False):
    """The GPU Operator chart's values for a layout (before the user's extra values)."""
    values = {"driver": {"enabled": driver_enabled}}
    # v26.7 reads toolkit.enabled only for a ClusterPolicy: a GPUCluster deploys no toolkit.
    if layout != "gpucluster":
        values["toolkit"] = {"enabled": toolkit_enabled}
    has_gpucluster = version[:2] >= (26, 7)
    if layout == "standalone":
        values["driver"]["manager"] = {"env": [{"name": EVICTION_ENV, "value": DRA_NODE_LABEL}]}
        # NVIDIA documents devicePlugin.enabled=false; during a node-by-node migration the
        # device plugin stays on and is kept off the DRA nodes by a per-node label instead.
        values["devicePlugin"] = {"enabled": not dra_covers_all_gpu_nodes}
    elif layout == "gpucluster":
        values["clusterPolicy"] = {"deployCR": False}
        values["gpuCluster"] = {"deployCR": True}
        if driver_enabled:
            values["driver"]["nvidiaDriverCRD"] = {"enabled": True}
        values.update(dra_driver_settings(layout, driver_gates(sharing, health), consumable_shares))
    else:
        values["devicePlugin"] = {"enabled": True}
    if has_gpucluster and layout != "gpucluster":
        values["clusterPolicy"] = {"deployCR": True}
        values["gpuCluster"] = {"deployCR": False}
    if image_registry:
        for key, repository in sorted(images.operator_mirror_values(image_tags(version), image_registry, layout).items()):
            set_value(values, key, repository)
    return values


def dra_driver_values(chart, driver_enabled, image_registry=None, sharing=False, consumable_shares=None,
                      dra_version=None, health=False):
    """NVIDIA's DRA driver chart values for the standalone layout (``dra_version`` the chart's,
    which decides whether it takes ``consumable_shares``)."""
    values = {
        # Where the driver's files are: the operator's driver container, or the host.
        "nvidiaDriverRoot": "/run/nvidia/driver" if driver_enabled else "/",
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}},
        "kubeletPlugin": {"nodeSelector": {DRA_NODE_LABEL: "true"}},
    }
    if image_registry:
        for key, repository in images.dra_driver_mirror_values(chart, image_registry).items():
            set_value(values, key, repository)
    values.update(dra_driver_settings("standalone", driver_gates(sharing, health), consumable_shares,
                                      dra_version))
    return values


def consumable_shares_mode(mode):
    """``mode`` as the DRA driver reads CONSUMABLE_SHARES ("memory", "unlimited", "4"); PlanError
    for anything else, which the kubelet plugin would refuse at start."""
    text = str(mode).strip()
    if text in CONSUMABLE_SHARES_MODES or (text.isdigit() and int(text) > 0):
        return text
    off = " (leave it empty to keep the mode off)" if text in ("disabled", "0", "false", "off") else ""
    raise PlanError("gpu_operator_dra_consumable_shares is %r; NVIDIA's DRA driver takes %s or a positive whole "
                    "number of shares per GPU%s" % (mode, ", ".join(CONSUMABLE_SHARES_MODES), off))


def dra_driver_settings(layout, gates=None, consumable_shares=None, dra_version=None):
    """The chart values that give NVIDIA's DRA driver feature ``gates`` ({name: bool}) and, with
    ``consumable_shares``, the ConsumableShares mode (its gate included), where each layout takes
    them; {} when neither is asked for. The one place that knows where they go:

    * standalone (the DRA chart, ``dra_version`` its version): ``featureGates`` and, from 0.5.0,
      ``consumableShares``, which the chart renders as FEATURE_GATES and CONSUMABLE_SHARES on the
      kubelet plugin's gpus container;
    * gpucluster (v26.7, DRA driver 0.5.0): ``draDriver.featureGates``; its GPUCluster has no
      consumableShares key, but the operator adds ``draDriver.gpus.kubeletPlugin.env`` to that same
      container, so the mode goes there under the chart's name (read in gpu-operator v26.7.0's
      GPUCluster type and its kubelet-plugin DaemonSet manifest).

    The driver publishes shares only where the cluster has DRAConsumableCapacity (on from
    Kubernetes 1.36, checked by consumable_capacity), and refuses MPS while the mode is on."""
    gates = dict(gates or {})
    env = []
    if consumable_shares is not None:
        # The calendar versions before the chart's rename (25.x) are older than 0.5.0 despite their numbers.
        renamed = dra_version is not None and DRA_DRIVER_MINORS.get(tuple(dra_version[:2])) == nvidia.DRA_CHART
        if layout == "standalone" and not (renamed and tuple(dra_version) >= CONSUMABLE_SHARES_SINCE):
            raise PlanError("gpu_operator_dra_consumable_shares needs DRA driver chart %s or later, the first with "
                            "ConsumableShares (this plan installs %s): set gpu_operator_dra_driver_version to %s"
                            % (dra_version_text(CONSUMABLE_SHARES_SINCE),
                               dra_version_text(dra_version) if dra_version else "no DRA chart",
                               dra_version_text(CONSUMABLE_SHARES_SINCE)))
        gates[CONSUMABLE_SHARES_GATE] = True
        env = [{"name": CONSUMABLE_SHARES_ENV, "value": consumable_shares_mode(consumable_shares)}]
    if not gates:
        return {}
    if layout == "gpucluster":
        driver = {"featureGates": gates}
        if env:
            driver["gpus"] = {"kubeletPlugin": {"env": env}}
        return {"draDriver": driver}
    values = {"featureGates": gates}
    if env:
        values["consumableShares"] = env[0]["value"]
    return values


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


def refusals(version, operator, dra_driver):
    """What NVIDIA's charts (or NVIDIA's guidance) would refuse, in words; [] when fine."""
    problems = []
    cluster_policy = truthy(lookup(operator, "clusterPolicy.deployCR", True))
    gpu_cluster = truthy(lookup(operator, "gpuCluster.deployCR", False))
    if gpu_cluster and version[:2] < (26, 7):
        problems.append("gpuCluster.deployCR needs GPU Operator v26.7 or later (this is %s)" % version_text(version))
    if cluster_policy and gpu_cluster:
        problems.append("clusterPolicy.deployCR and gpuCluster.deployCR are both true: the gpu-operator chart "
                        "refuses a ClusterPolicy and a GPUCluster together")
    if gpu_cluster and truthy(lookup(operator, "driver.enabled", True)) \
            and not truthy(lookup(operator, "driver.nvidiaDriverCRD.enabled", False)):
        problems.append("with a GPUCluster the operator-managed driver needs driver.nvidiaDriverCRD.enabled=true "
                        "(or driver.enabled=false for a host driver); the chart refuses otherwise")
    if gpu_cluster and dra_driver is not None:
        problems.append("the standalone DRA driver chart must not be installed beside the operator-managed "
                        "DRA driver (gpuCluster.deployCR=true); choose gpu_operator_dra_mode gpucluster or standalone")
    if dra_driver is not None and truthy(lookup(dra_driver, "resources.gpus.enabled", True)) \
            and not truthy(lookup(dra_driver, "gpuResourcesEnabledOverride", False)):
        problems.append("the DRA driver chart refuses resources.gpus.enabled=true without "
                        "gpuResourcesEnabledOverride=true")
    return problems


def select_nodes(gpu_nodes, requested):
    """The DRA nodes: every GPU node when ``requested`` is empty, else the named ones (all GPU nodes)."""
    gpu_nodes = sorted(gpu_nodes)
    if not requested:
        return gpu_nodes
    unknown = sorted(set(requested) - set(gpu_nodes))
    if unknown:
        raise PlanError("gpu_operator_dra_nodes names %s, which %s not a GPU node (GPU nodes: %s)"
                        % (", ".join(unknown), "is" if len(unknown) == 1 else "are", ", ".join(gpu_nodes) or "none"))
    return sorted(set(requested))


# The order in which a node's labels change, as data: the device plugin leaves a node going to
# DRA before the DRA kubelet plugin arrives, so the node is never served by both.
DEVICE_PLUGIN_OFF = "device-plugin-off"
DRA_ON = "dra"


def _patch(node, step, labels, annotations):
    metadata = {"name": node}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return {"node": node, "step": step, "patch": {"metadata": metadata}}


def node_patches(nodes, dra_nodes, device_plugin_label=True):
    """Label changes per node, only where the live labels differ (so a second run patches nothing).

    ``nodes``: [{name, labels, annotations}] for every node that may carry our labels.
    Step DEVICE_PLUGIN_OFF: a DRA node gets ``nvidia.com/gpu.deploy.device-plugin=false`` with
    our owner annotation (the operator honours an existing value and takes its device plugin
    off the node); it keeps it while it is on DRA, also once the chart no longer deploys the
    device plugin, so that turning the plugin back on never lands it on a DRA node. Step DRA_ON,
    applied once the device plugin has left: ``nvidia.com/dra-kubelet-plugin=true``. Other
    nodes lose what we set, and only that. ``device_plugin_label`` False (the operator-managed
    GPUCluster layout, whose operator removes the device plugin's labels from every node
    itself): no such label, and ours goes.
    """
    patches = []
    for node in sorted(nodes, key=lambda n: n["name"]):
        name, labels = node["name"], node.get("labels") or {}
        ours = (node.get("annotations") or {}).get(OWNER_ANNOTATION) == OWNER
        if name in dra_nodes:
            if not device_plugin_label and ours:
                patches.append(_patch(name, DEVICE_PLUGIN_OFF, {DEVICE_PLUGIN_NODE_LABEL: None},
                                      {OWNER_ANNOTATION: None}))
            # A "false" someone else set stays theirs: we claim only the label we set.
            elif device_plugin_label and labels.get(DEVICE_PLUGIN_NODE_LABEL) != "false":
                patches.append(_patch(name, DEVICE_PLUGIN_OFF, {DEVICE_PLUGIN_NODE_LABEL: "false"},
                                      {OWNER_ANNOTATION: OWNER} if not ours else {}))
            if labels.get(DRA_NODE_LABEL) != "true":
                patches.append(_patch(name, DRA_ON, {DRA_NODE_LABEL: "true"}, {}))
            continue
        want_labels, want_annotations = {}, {}
        if DRA_NODE_LABEL in labels:
            want_labels[DRA_NODE_LABEL] = None
        if ours:
            if labels.get(DEVICE_PLUGIN_NODE_LABEL) == "false":
                want_labels[DEVICE_PLUGIN_NODE_LABEL] = None
            want_annotations[OWNER_ANNOTATION] = None
        if want_labels or want_annotations:
            patches.append(_patch(name, DRA_ON, want_labels, want_annotations))
    return patches


def partial_migration_notes(layout, device_plugin_on, dra_nodes, driver_enabled):
    """What NVIDIA's operator does, expectedly, while some GPU nodes are on DRA and others keep the
    device plugin (read in gpu-operator v25.10.1, v26.3.3 and v26.7.0): its validator's
    plugin-validation init container waits for nvidia.com/gpu capacity on its node, which a DRA
    node never has, and crash-loops there; the operator drops that step only when the device
    plugin is off cluster-wide. No label or value skips it per node, and labelling DRA nodes
    nvidia.com/gpu.deploy.operator-validator=false would stop the toolkit-ready file that other
    operands wait for, so the role leaves the validator alone, does not wait for the
    ClusterPolicy to be ready, and says so."""
    if layout != "standalone" or not device_plugin_on or not dra_nodes:
        return []
    notes = ["While the device plugin still serves other GPU nodes, the GPU Operator's validator fails its "
             "plugin-validation step on the DRA nodes (%s): it waits for nvidia.com/gpu capacity, which a DRA node "
             "never has, so its pod there crash-loops (Init:CrashLoopBackOff) and the ClusterPolicy reports "
             "notReady (OperandNotReady). This is expected and harmless to DRA; it ends when every GPU node is on "
             "DRA and the device plugin is turned off. This role does not wait for the ClusterPolicy."
             % ", ".join(dra_nodes)]
    if driver_enabled:
        notes.append("The operator's driver upgrades wait for the validator to be Ready on each node, so they "
                     "stall on the DRA nodes until the migration is finished: finish it before upgrading the "
                     "GPU driver, or upgrade those nodes' driver by hand.")
    return notes


def plan(version, mode="auto", dra_enabled=True, driver_enabled=True, toolkit_enabled=True,
         gpu_nodes=(), dra_nodes=(), operator_extra_values=None, dra_driver_extra_values=None,
         dra_driver_version=None, image_registry=None, namespace="gpu-operator",
         dra_driver_namespace="nvidia-dra-driver-gpu", release_name="gpu-operator",
         dra_driver_release_name="nvidia-dra-driver-gpu", sharing=False, installed_dra_driver=None,
         gpu_node_labels=None, consumable_shares=None, health=False):
    """Releases, values, the DRA node set and the images to pull for one request; raises
    PlanError on a refusal. ``installed_dra_driver``: the live DRA release's kubelet plugin
    ({name, version}, see dra_chart_upgrade); ``gpu_node_labels``: {node: labels} of the GPU
    nodes, for the driver image's OS suffix; ``consumable_shares``: the ConsumableShares mode, or
    None (off)."""
    parsed, info, notes = operator_info(version)
    layout = resolve_layout(version, dra_enabled, mode)
    selected = select_nodes(gpu_nodes, dra_nodes) if layout != "device_plugin" else []
    if layout != "device_plugin" and not selected:
        raise PlanError("no GPU node to run DRA on: no node carries the GPU node label (is Node Feature "
                        "Discovery / GPU Feature Discovery running?)")
    covers_all = set(selected) == set(gpu_nodes)
    if layout == "gpucluster" and not covers_all:
        raise PlanError("the operator-managed GPUCluster (gpu_operator_dra_mode gpucluster) replaces the device "
                        "plugin on every GPU node, so it cannot migrate node by node; select all GPU nodes (%s) or "
                        "use gpu_operator_dra_mode standalone" % ", ".join(sorted(gpu_nodes)))
    if sharing and layout == "device_plugin":
        raise PlanError("gpu_operator_dra_sharing turns on the DRA driver's sharing gates, but DRA is off "
                        "(gpu_operator_dra_enabled false or an operator version without DRA); turn DRA on or "
                        "set gpu_operator_dra_sharing false")
    if consumable_shares and layout == "device_plugin":
        raise PlanError("gpu_operator_dra_consumable_shares turns on the DRA driver's memory shares, but DRA is off "
                        "(gpu_operator_dra_enabled false); turn DRA on or leave gpu_operator_dra_consumable_shares "
                        "empty")
    if health and layout == "device_plugin":
        raise PlanError("gpu_operator_dra_health_check turns on the DRA driver's NVML health check, but DRA is off "
                        "(gpu_operator_dra_enabled false or an operator version without DRA); turn DRA on or set "
                        "gpu_operator_dra_health_check false")
    consumable_shares = consumable_shares or None
    operator = deep_merge(operator_values(parsed, layout, covers_all, driver_enabled, toolkit_enabled,
                                          image_registry, sharing, consumable_shares, health), operator_extra_values)
    releases = [{"name": release_name, "namespace": namespace, "chart": OPERATOR_CHART,
                 "chart_version": version_text(parsed), "values": operator}]
    dra_values, upgrade = None, dra_chart_upgrade(None, None, None)
    if layout == "standalone":
        dra_version = parse_version(dra_driver_version or info["dra_drivers"][0])
        chart = dra_driver_chart(dra_version_text(dra_version))
        upgrade = dra_chart_upgrade(chart, dra_version, installed_dra_driver)
        if health and DRA_DRIVER_MINORS.get(tuple(dra_version[:2])) != nvidia.DRA_CHART:
            raise PlanError("gpu_operator_dra_health_check needs NVIDIA's DRA driver v0.4.0 or later, the first with "
                            "the gate %s (this plan installs %s): set gpu_operator_dra_driver_version to 0.4.1 or "
                            "later, or gpu_operator_dra_health_check false" % (HEALTH_GATE, dra_version_text(dra_version)))
        planned = dra_driver_values(chart, driver_enabled, image_registry, sharing, consumable_shares, dra_version,
                                    health)
        if upgrade["name_override"]:
            planned["nameOverride"] = upgrade["name_override"]
        dra_values = deep_merge(planned, dra_driver_extra_values)
        releases.append({"name": dra_driver_release_name, "namespace": dra_driver_namespace, "chart": chart,
                         "chart_version": dra_version_text(dra_version), "values": dra_values})
    elif dra_driver_extra_values:
        raise PlanError("gpu_operator_dra_driver_values only apply to the standalone DRA driver chart; with %s "
                        "put DRA settings under draDriver in gpu_operator_values" % layout)
    problems = refusals(parsed, operator, dra_values) + health_refusals(health, operator, dra_values)
    if problems:
        raise PlanError("refused before installing anything: " + "; ".join(problems))
    device_plugin_on = truthy(lookup(operator, "devicePlugin.enabled", True)) and \
        truthy(lookup(operator, "clusterPolicy.deployCR", True))
    pulled = planned_images(releases, parsed, layout, gpu_node_labels or {})
    notes += pulled["notes"] + layout_notes(layout, upgrade, info, releases) + \
        partial_migration_notes(layout, device_plugin_on, selected, driver_enabled) + \
        consumable_shares_notes(consumable_shares, sharing)
    return {"layout": layout, "releases": releases, "dra_nodes": selected,
            "device_plugin_nodes": sorted(set(gpu_nodes) - set(selected)) if device_plugin_on else [],
            "device_plugin_enabled": device_plugin_on, "plugin": plugin_location(releases, layout),
            "dra_driver_upgrade": upgrade, "images": pulled["images"],
            "image_refs": images.unique_refs(pulled["images"]), "notes": notes}


# The options naming where the releases go, as gpu_operator_plan and plan() both spell them.
RELEASE_OPTIONS = ("namespace", "dra_driver_namespace", "release_name", "dra_driver_release_name")


def plan_for(params, gpu_nodes, operator_extra_values, installed_dra_driver=None, gpu_node_labels=None):
    """plan() for gpu_operator_plan's options (``params``), with what was read from the cluster:
    the GPU nodes, the operator values over the distribution's (gpu_operator_reading), the live
    DRA release's kubelet plugin and the GPU nodes' labels."""
    return plan(params["version"], params["dra_mode"], params["dra_enabled"], params["driver_enabled"],
                params["toolkit_enabled"], gpu_nodes, params["dra_nodes"], operator_extra_values,
                params["dra_driver_values"], params["dra_driver_version"], params["image_registry"],
                sharing=params["dra_sharing"], installed_dra_driver=installed_dra_driver,
                gpu_node_labels=gpu_node_labels, consumable_shares=params.get("dra_consumable_shares") or None,
                health=bool(params.get("dra_health_check")), **{key: params[key] for key in RELEASE_OPTIONS})


def removal(params, gpu_nodes, nodes):
    """The plan for state absent: both releases, in the order they are uninstalled (the DRA
    driver, then the operator), and removing the node labels this collection set; nothing else."""
    releases = [{"name": params["dra_driver_release_name"], "namespace": params["dra_driver_namespace"]},
                {"name": params["release_name"], "namespace": params["namespace"]}]
    return {"layout": None, "releases": releases, "gpu_nodes": gpu_nodes, "dra_nodes": [], "device_plugin_nodes": [],
            "plugin": None, "charts_checked": [], "node_patches": node_patches(nodes, [])}


def plugin_location(releases, layout):
    """Where the DRA kubelet-plugin pods run: their namespace, pod selector and DaemonSet."""
    if layout == "standalone":
        dra = releases[1]
        # The chart names its objects and selector label after nameOverride, else itself.
        name = dra["values"].get("nameOverride") or dra["chart"]
        return {"namespace": dra["namespace"], "pod_selector": nvidia.kubelet_plugin_pod_selector(name),
                "daemonset": nvidia.kubelet_plugin_daemonset(name)}
    if layout == "gpucluster":
        return dict(GPUCLUSTER_PLUGIN, namespace=releases[0]["namespace"])
    return None


def planned_images(releases, version, layout, gpu_node_labels):
    """{images, notes}: every image the releases will pull, and what the list cannot know."""
    operator, notes = releases[0], []
    os_tags = {node: images.driver_os_tag(labels) for node, labels in sorted(gpu_node_labels.items())}
    pulled = images.operator_images(operator["name"], operator["chart_version"], image_tags(version), layout,
                                    operator["values"], [tag for tag in os_tags.values() if tag])
    unlabelled = [node for node, tag in os_tags.items() if not tag]
    if any(image["component"] == "driver" for image in pulled) and (unlabelled or not os_tags):
        notes.append("The operator appends the GPU nodes' OS to the driver image's tag (e.g. -ubuntu22.04), read "
                     "from Node Feature Discovery's labels %s and %s, which %s: add the suffix by hand before "
                     "mirroring" % (images.OS_ID_LABEL, images.OS_VERSION_LABEL,
                                    "no GPU node carries yet" if not os_tags or len(unlabelled) == len(os_tags)
                                    else "%s lack%s" % (", ".join(unlabelled), "s" if len(unlabelled) == 1 else "")))
    for release in releases[1:]:
        pulled += images.dra_driver_images(release["name"], release["chart"], release["chart_version"],
                                           release["values"])
    return {"images": pulled, "notes": notes}


def layout_notes(layout, upgrade, info, releases):
    notes = []
    if layout == "standalone" and releases[1]["chart_version"] not in info["dra_drivers"]:
        notes.append("DRA driver chart %s was not checked with GPU Operator %s (checked with it: %s); the plan sets "
                     "it the same values as those."
                     % (releases[1]["chart_version"], releases[0]["chart_version"], ", ".join(info["dra_drivers"])))
    if layout == "gpucluster":
        notes.append("The GPUCluster layout is what NVIDIA calls a Technology Preview, supported for new installs "
                     "only; it deploys no NVIDIA Container Toolkit (the DRA driver hands devices to containers "
                     "through CDI, which the container runtime must have on: containerd 2.0+ or CRI-O 1.27+), so "
                     "gpu_operator_toolkit_enabled has no effect.")
    if upgrade["name_override"]:
        notes.append("The DRA driver release runs the chart under its old name (%s, %s): it is upgraded with "
                     "nameOverride=%s, as NVIDIA's upgrade notes say, so that its DaemonSet, Deployment and RBAC "
                     "keep their names." % (OLD_DRA_CHART, upgrade["from"], upgrade["name_override"]))
    return notes


def health_refusals(health, operator, dra_values):
    """With the health check on: the gates NVIDIA's driver refuses beside it, wherever the values
    (the user's extra values included) turn them on."""
    if not health:
        return []
    gates = dict(lookup(operator, "draDriver.featureGates", None) or {})
    gates.update(lookup(dra_values or {}, "featureGates", None) or {})
    clash = [g for g in HEALTH_EXCLUSIVE_GATES if truthy(gates.get(g))]
    if not clash:
        return []
    return ["gpu_operator_dra_health_check turns on %s, which NVIDIA's DRA driver does not run together with %s "
            "(set in the DRA driver's featureGates by gpu_operator_values or gpu_operator_dra_driver_values): turn "
            "%s off there, or set gpu_operator_dra_health_check false"
            % (HEALTH_GATE, " and ".join(clash), " and ".join(clash))]


def consumable_shares_notes(mode, sharing):
    """The plan's notes for a ConsumableShares mode."""
    if not mode:
        return []
    notes = ["ConsumableShares %s: NVIDIA's DRA driver publishes every GPU (and MIG device) as shareable, claims ask "
             "for capacity.requests.memory, and %s. It works only where Kubernetes has DRAConsumableCapacity on "
             "kube-apiserver, kube-scheduler, kube-controller-manager and every kubelet (on by default from 1.36): "
             "the plan checked the API server with a dry run and cannot see the others. Note that %s; %s."
             % (mode, shares_mode_words(mode), SHARES_ENFORCE, SHARES_COMBINE)]
    if sharing:
        notes.append("gpu_operator_dra_sharing also turns on MPSSupport, which NVIDIA's driver refuses to use while "
                     "ConsumableShares is on: use time-slicing classes only (dra.gpu.gpu_sharing refuses mps classes "
                     "on this driver)")
    return notes


def check_cluster(server_version, serves_resource_v1, minimum, dra_enabled=True):
    """Refusals about the cluster itself: too old, or no resource.k8s.io/v1."""
    problems = []
    try:
        current, wanted = versions.parse(server_version), versions.parse_input(minimum)
    except versions.VersionError as exc:
        raise PlanError(str(exc))
    if not versions.meets(current, wanted):
        problems.append("the cluster runs Kubernetes %s, below the minimum %s for DRA with these charts; "
                        "upgrade first (dra.gpu.cluster_upgrade)" % (server_version, minimum))
    if dra_enabled and not serves_resource_v1:
        problems.append("the API server does not serve resource.k8s.io/v1 (DRA), so the charts would refuse to "
                        "render; DRA is GA from Kubernetes 1.34 and cannot be turned off from 1.35")
    return problems


def input_checks(params, name=lambda option: option):
    """Checks of the plan's options that need no cluster: versions, names Helm and Kubernetes
    accept, the selector's syntax, counts. ``name`` spells an option as the user wrote it
    (the role's ``gpu_operator_namespace`` for ``namespace``)."""
    def chart_version(option, value):
        try:
            parse_version(value)
        except PlanError:
            raise inputs.InputError("%s is %r, which is not a chart version; write it like v26.3.1"
                                    % (name(option), value))

    checks = [
        lambda: chart_version("version", params.get("version")),
        lambda: params.get("dra_driver_version") and chart_version("dra_driver_version", params["dra_driver_version"]),
        lambda: inputs.version(name("min_kubernetes_version"), params.get("min_kubernetes_version")),
        lambda: inputs.dns_label(name("namespace"), params.get("namespace")),
        lambda: inputs.dns_label(name("dra_driver_namespace"), params.get("dra_driver_namespace")),
        lambda: inputs.helm_release(name("release_name"), params.get("release_name")),
        lambda: inputs.helm_release(name("dra_driver_release_name"), params.get("dra_driver_release_name")),
        lambda: inputs.label_selector(name("gpu_node_selector"), params.get("gpu_node_selector")),
        lambda: inputs.strings(name("dra_nodes"), params.get("dra_nodes")),
        lambda: inputs.unique(name("dra_nodes"), params.get("dra_nodes") or [], "node"),
        lambda: params.get("dra_consumable_shares") and _shares_mode(name, params["dra_consumable_shares"]),
    ]
    if params.get("namespace") == params.get("dra_driver_namespace") and \
            params.get("release_name") == params.get("dra_driver_release_name"):
        checks.append(lambda: _same_release(name))
    registry = str(params.get("image_registry") or "")
    if "://" in registry:
        checks.append(lambda: _registry(name("image_registry"), registry))
    if params.get("chart_source") == "oci" and not str(params.get("oci_repository") or "").startswith("oci://"):
        checks.append(lambda: _oci(name("oci_repository"), params.get("oci_repository"), name("chart_source")))
    if params.get("chart_source") == "local" and not params.get("chart_dir"):
        checks.append(lambda: _raise("%s local needs %s, a directory with the charts"
                                     % (name("chart_source"), name("chart_dir"))))
    return checks


def _shares_mode(name, mode):
    try:
        consumable_shares_mode(mode)
    except PlanError as exc:
        raise inputs.InputError(str(exc).replace("gpu_operator_dra_consumable_shares", name("dra_consumable_shares")))


def _raise(message):
    raise inputs.InputError(message)


def _same_release(name):
    raise inputs.InputError("%s and %s name the same release in the same namespace; give the DRA driver's release "
                            "another name" % (name("release_name"), name("dra_driver_release_name")))


def _registry(option, registry):
    raise inputs.InputError("%s is %r; write the registry host and path without a scheme, e.g. registry.example.com"
                            % (option, registry))


def _oci(option, value, source):
    raise inputs.InputError("%s oci needs %s starting with oci:// (got %r), e.g. oci://registry.example.com/charts"
                            % (source, option, value))
