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
    ``nvidia.com/dra-kubelet-plugin=true`` (NVIDIA's supported path for v25.10 and v26.3,
    still possible on v26.7).
  * ``gpucluster``: v26.7+ only, the operator deploys the DRA driver itself through a
    GPUCluster resource (``clusterPolicy.deployCR=false``, ``gpuCluster.deployCR=true``).
  * ``device_plugin``: DRA disabled, the classic operator with its device plugin.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.dra.gpu.plugins.module_utils import inputs, versions

DRA_NODE_LABEL = "nvidia.com/dra-kubelet-plugin"
DEVICE_PLUGIN_NODE_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# Marks the device-plugin label as ours, so that removing it never touches someone else's.
OWNER_ANNOTATION = "dra.gpu/device-plugin-disabled-by"
OWNER = "dra.gpu.gpu_operator"
EVICTION_ENV = "NODE_LABEL_FOR_GPU_POD_EVICTION"

OPERATOR_CHART = "gpu-operator"
# The DRA driver's feature gates GPU sharing needs (off by default in NVIDIA's driver): set as
# featureGates (DRA chart) or draDriver.featureGates (v26.7 GPUCluster), rendered FEATURE_GATES.
SHARING_GATES = {"TimeSlicingSettings": True, "MPSSupport": True}
DEFAULT_REPO_URL = "https://helm.ngc.nvidia.com/nvidia"

# GPU Operator chart tags (dra-facts.md), per minor: known patches and possible layouts.
OPERATOR_VERSIONS = {
    (25, 10): {"patches": (0, 1), "layouts": ("standalone",), "dra_driver": "v25.12.0"},
    (26, 3): {"patches": (0, 1, 2, 3), "layouts": ("standalone",), "dra_driver": "v0.4.1"},
    (26, 7): {"patches": (0,), "layouts": ("gpucluster", "standalone"), "dra_driver": "v0.4.1"},
}
MODES = ("auto", "standalone", "gpucluster")
# DRA driver chart tags: (major, minor) -> chart name (renamed at v0.4).
DRA_DRIVER_MINORS = {(25, 3): "nvidia-dra-driver-gpu", (25, 8): "nvidia-dra-driver-gpu",
                     (25, 12): "nvidia-dra-driver-gpu", (0, 4): "dra-driver-nvidia-gpu",
                     (0, 5): "dra-driver-nvidia-gpu"}

# Image repositories per chart value, as a path under the registry (NVIDIA's defaults use
# nvcr.io/<path>); a mirror keeps the paths and changes the host.
OPERATOR_IMAGE_PATHS = {
    "operator": "nvidia", "validator": "nvidia/cloud-native", "driver": "nvidia",
    "driver.manager": "nvidia/cloud-native", "toolkit": "nvidia/k8s", "devicePlugin": "nvidia",
    "dcgm": "nvidia/cloud-native", "dcgmExporter": "nvidia/k8s", "gfd": "nvidia",
    "migManager": "nvidia/cloud-native", "nodeStatusExporter": "nvidia/cloud-native",
}
DRA_DRIVER_IMAGE_PATH = "nvidia/k8s-dra-driver-gpu"


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


def supported_operator_versions():
    return ["v%d.%d.%d" % (minor[0], minor[1], patch)
            for minor, info in sorted(OPERATOR_VERSIONS.items()) for patch in info["patches"]]


def operator_info(version_string):
    version = parse_version(version_string)
    info = OPERATOR_VERSIONS.get(version[:2])
    if info is None or version[2] not in info["patches"]:
        raise PlanError("GPU Operator chart %s is not one this collection knows (%s); pin one of those "
                        "with gpu_operator_version" % (version_string, ", ".join(supported_operator_versions())))
    return version, info


def dra_driver_chart(version_string):
    """The DRA driver chart's name for one of its versions ('v0.4.1' -> 'dra-driver-nvidia-gpu')."""
    version = parse_version(version_string)
    name = DRA_DRIVER_MINORS.get(version[:2])
    if name is None:
        raise PlanError("DRA driver chart %s is not one this collection knows (v25.3.x, v25.8.x, v25.12.x, "
                        "v0.4.x, v0.5.x)" % version_string)
    return name


def resolve_layout(version_string, dra_enabled, mode):
    """Which layout a version and mode give: standalone, gpucluster or device_plugin."""
    if mode not in MODES:
        raise PlanError("gpu_operator_dra_mode must be one of %s, not %r" % (", ".join(MODES), mode))
    _version, info = operator_info(version_string)
    if not dra_enabled:
        return "device_plugin"
    if mode == "auto":
        return info["layouts"][0]
    if mode not in info["layouts"]:
        raise PlanError("gpu_operator_dra_mode %s needs GPU Operator v26.7 or later (%s offers: %s)"
                        % (mode, version_string, ", ".join(info["layouts"])))
    return mode


def deep_merge(base, extra):
    """A copy of ``base`` with ``extra`` merged in; dicts merge, anything else replaces."""
    result = copy.deepcopy(base)
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def lookup(values, dotted, default=None):
    node = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def _set(values, dotted, value):
    node = values
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _truthy(value):
    return value is True or str(value).lower() == "true"


def operator_values(version, layout, dra_covers_all_gpu_nodes, driver_enabled, toolkit_enabled,
                    image_registry=None, sharing=False):
    """The GPU Operator chart's values for a layout (before the user's extra values)."""
    values = {"driver": {"enabled": driver_enabled}, "toolkit": {"enabled": toolkit_enabled}}
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
        if sharing:
            values["draDriver"] = {"featureGates": dict(SHARING_GATES)}
    else:
        values["devicePlugin"] = {"enabled": True}
    if has_gpucluster and layout != "gpucluster":
        values["clusterPolicy"] = {"deployCR": True}
        values["gpuCluster"] = {"deployCR": False}
    if image_registry:
        for key, path in sorted(OPERATOR_IMAGE_PATHS.items()):
            _set(values, key + ".repository", "%s/%s" % (image_registry.rstrip("/"), path))
    return values


def dra_driver_values(driver_enabled, image_registry=None, sharing=False):
    """NVIDIA's DRA driver chart values for the standalone layout."""
    values = {
        # Where the driver's files are: the operator's driver container, or the host.
        "nvidiaDriverRoot": "/run/nvidia/driver" if driver_enabled else "/",
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}},
        "kubeletPlugin": {"nodeSelector": {DRA_NODE_LABEL: "true"}},
    }
    if image_registry:
        values["image"] = {"repository": "%s/%s" % (image_registry.rstrip("/"), DRA_DRIVER_IMAGE_PATH)}
    if sharing:
        values["featureGates"] = dict(SHARING_GATES)
    return values


def refusals(version, operator, dra_driver):
    """What NVIDIA's charts (or NVIDIA's guidance) would refuse, in words; [] when fine."""
    problems = []
    cluster_policy = _truthy(lookup(operator, "clusterPolicy.deployCR", True))
    gpu_cluster = _truthy(lookup(operator, "gpuCluster.deployCR", False))
    if gpu_cluster and version[:2] < (26, 7):
        problems.append("gpuCluster.deployCR needs GPU Operator v26.7 or later (this is %s)" % version_text(version))
    if cluster_policy and gpu_cluster:
        problems.append("clusterPolicy.deployCR and gpuCluster.deployCR are both true: the gpu-operator chart "
                        "refuses a ClusterPolicy and a GPUCluster together")
    if gpu_cluster and _truthy(lookup(operator, "driver.enabled", True)) \
            and not _truthy(lookup(operator, "driver.nvidiaDriverCRD.enabled", False)):
        problems.append("with a GPUCluster the operator-managed driver needs driver.nvidiaDriverCRD.enabled=true "
                        "(or driver.enabled=false for a host driver); the chart refuses otherwise")
    if gpu_cluster and dra_driver is not None:
        problems.append("the standalone DRA driver chart must not be installed beside the operator-managed "
                        "DRA driver (gpuCluster.deployCR=true); choose gpu_operator_dra_mode gpucluster or standalone")
    if dra_driver is not None and _truthy(lookup(dra_driver, "resources.gpus.enabled", True)) \
            and not _truthy(lookup(dra_driver, "gpuResourcesEnabledOverride", False)):
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
         dra_driver_release_name="nvidia-dra-driver-gpu", sharing=False):
    """Releases, values and the DRA node set for one request; raises PlanError on a refusal."""
    parsed, info = operator_info(version)
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
    operator = deep_merge(operator_values(parsed, layout, covers_all, driver_enabled, toolkit_enabled,
                                          image_registry, sharing), operator_extra_values)
    releases = [{"name": release_name, "namespace": namespace, "chart": OPERATOR_CHART,
                 "chart_version": version_text(parsed), "values": operator}]
    dra_values = None
    if layout == "standalone":
        dra_version = dra_driver_version or info["dra_driver"]
        chart = dra_driver_chart(dra_version)
        dra_values = deep_merge(dra_driver_values(driver_enabled, image_registry, sharing), dra_driver_extra_values)
        releases.append({"name": dra_driver_release_name, "namespace": dra_driver_namespace, "chart": chart,
                         "chart_version": version_text(parse_version(dra_version)), "values": dra_values})
    elif dra_driver_extra_values:
        raise PlanError("gpu_operator_dra_driver_values only apply to the standalone DRA driver chart; with %s "
                        "put DRA settings under draDriver in gpu_operator_values" % layout)
    problems = refusals(parsed, operator, dra_values)
    if problems:
        raise PlanError("refused before installing anything: " + "; ".join(problems))
    device_plugin_on = _truthy(lookup(operator, "devicePlugin.enabled", True)) and \
        _truthy(lookup(operator, "clusterPolicy.deployCR", True))
    if layout == "standalone":
        chart = releases[1]["chart"]
        plugin = {"namespace": dra_driver_namespace, "pod_selector": "%s-component=kubelet-plugin" % chart,
                  "daemonset": "%s-kubelet-plugin" % chart}
    elif layout == "gpucluster":
        plugin = {"namespace": namespace, "pod_selector": "dra-driver-nvidia-gpu-component=kubelet-plugin",
                  "daemonset": None}
    else:
        plugin = None
    return {"layout": layout, "releases": releases, "dra_nodes": selected,
            "device_plugin_nodes": sorted(set(gpu_nodes) - set(selected)) if device_plugin_on else [],
            "device_plugin_enabled": device_plugin_on, "plugin": plugin,
            "notes": partial_migration_notes(layout, device_plugin_on, selected, driver_enabled)}


def check_cluster(server_version, serves_resource_v1, minimum, dra_enabled=True):
    """Refusals about the cluster itself: too old, or no resource.k8s.io/v1."""
    problems = []
    current = parse_kubernetes(server_version)
    wanted = parse_minimum(minimum)
    if current[:2] < wanted[:2] or (wanted[2] is not None and current[:2] == wanted[:2] and
                                    (current[2] or 0) < wanted[2]):
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


def parse_minimum(text):
    """A minimum version a person wrote: the whole text is the version ('1.3x' is refused)."""
    try:
        return versions.parse_input(text)
    except versions.VersionError as exc:
        raise PlanError(str(exc))


def parse_kubernetes(text):
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(text or "").strip())
    if not match:
        raise PlanError("%r is not a Kubernetes version" % (text,))
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch) if patch is not None else None
