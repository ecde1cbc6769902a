# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What to install for NVIDIA GPUs with DRA: releases, chart values, node labels, images (pure logic).

One place decides, for a GPU Operator chart version and a DRA mode, which Helm releases to
install with which values, which node labels make the migration node by node, and which images
the releases will pull. The versions it knows are gpu_operator_catalog's; what it refuses and
warns about, gpu_operator_checks'. Nothing here talks to a cluster.

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

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_images as images
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.chart_values import deep_merge, lookup, set_value, truthy
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.gpu_operator_catalog import (
    CONSUMABLE_SHARES_ENV, CONSUMABLE_SHARES_GATE, CONSUMABLE_SHARES_SINCE, DRA_DRIVER_MINORS, GPUCLUSTER_PLUGIN,
    HEALTH_GATE, OPERATOR_CHART, SHARING_GATES, PlanError, dra_chart_upgrade, dra_driver_chart, dra_version_text,
    operator_info, parse_version, resolve_layout, version_text)
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.gpu_operator_checks import (
    consumable_shares_mode, consumable_shares_notes, health_refusals, layout_notes, partial_migration_notes,
    refusals)
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.nvidia import DEVICE_PLUGIN_NODE_LABEL, DRA_NODE_LABEL

# Marks the device-plugin label as ours, so that removing it never touches someone else's.
OWNER_ANNOTATION = "dra.gpu/device-plugin-disabled-by"
OWNER = "dra.gpu.gpu_operator"
EVICTION_ENV = "NODE_LABEL_FOR_GPU_POD_EVICTION"


def driver_gates(sharing=False, health=False):
    """The feature gates the collection sets on NVIDIA's DRA driver; None when none."""
    gates = dict(SHARING_GATES) if sharing else {}
    if health:
        gates[HEALTH_GATE] = True
    return gates or None


def image_tags(version):
    """OPERATOR_TAGS for a version; a newer patch uses its minor's newest known patch."""
    known = [v for v in images.OPERATOR_TAGS if v[:2] == version[:2] and v <= version]
    return images.OPERATOR_TAGS[max(known)]


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


def nodes_on_dra(nodes):
    """The names of the nodes labelled for the DRA kubelet plugin now (``nodes``: [{name, labels}])."""
    return sorted(n["name"] for n in nodes if (n.get("labels") or {}).get(DRA_NODE_LABEL) == "true")


def select_nodes(gpu_nodes, requested, on_dra=(), back=()):
    """The DRA nodes after this run, node by node: the named ones (``requested``; every GPU node when
    neither it nor ``back`` names any) plus those already on DRA (``on_dra``), less those taken back
    to the device plugin (``back``). A node moved by an earlier run stays on DRA when a later run
    names only the next node: it goes back only when named in ``back``."""
    gpu_nodes = sorted(gpu_nodes)
    for option, named in (("gpu_operator_dra_nodes", requested), ("gpu_operator_back_to_device_plugin", back)):
        unknown = sorted(set(named) - set(gpu_nodes))
        if unknown:
            raise PlanError("%s names %s, which %s not a GPU node (GPU nodes: %s)"
                            % (option, ", ".join(unknown), "is" if len(unknown) == 1 else "are",
                               ", ".join(gpu_nodes) or "none"))
    both = sorted(set(requested) & set(back))
    if both:
        raise PlanError("gpu_operator_dra_nodes and gpu_operator_back_to_device_plugin both name %s: a node goes "
                        "either to DRA or back to the device plugin; name it in one of them" % ", ".join(both))
    wanted = requested or ([] if back else gpu_nodes)
    return sorted((set(wanted) | (set(on_dra) & set(gpu_nodes))) - set(back))


def moving_nodes(patches):
    """The nodes this run moves to DRA: those whose device plugin it takes off or that it labels for
    DRA (a node fully on DRA already gets neither), where pods holding nvidia.com/gpu must be gone."""
    return sorted(set(p["node"] for p in patches if p["step"] == DRA_ON or (
        p["step"] == DEVICE_PLUGIN_OFF and p["patch"]["metadata"].get("labels", {}).get(DEVICE_PLUGIN_NODE_LABEL))))


def returning_nodes(patches):
    """The nodes this run takes off DRA and gives back to the device plugin (their patches' nodes)."""
    return sorted(set(p["node"] for p in patches if p["step"] in (DRA_OFF, DEVICE_PLUGIN_ON)))


# The order in which a node's labels change, as data: the device plugin leaves a node going to
# DRA before the DRA kubelet plugin arrives, so the node is never served by both.
DEVICE_PLUGIN_OFF = "device-plugin-off"
DRA_ON = "dra"
# And back, the other way round: DRA leaves the node (its slices gone) before the device plugin returns.
DRA_OFF = "dra-off"
DEVICE_PLUGIN_ON = "device-plugin-on"


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
    nodes lose what we set, and only that, in the reverse order: step DRA_OFF drops the DRA
    label (the kubelet plugin leaves, its slices go), step DEVICE_PLUGIN_ON, applied once they
    are gone, drops our "false" and our annotation. ``device_plugin_label`` False (the operator-managed
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
        if DRA_NODE_LABEL in labels:
            patches.append(_patch(name, DRA_OFF, {DRA_NODE_LABEL: None}, {}))
        if ours:
            patches.append(_patch(name, DEVICE_PLUGIN_ON, {DEVICE_PLUGIN_NODE_LABEL: None}
                                  if labels.get(DEVICE_PLUGIN_NODE_LABEL) == "false" else {}, {OWNER_ANNOTATION: None}))
    return patches


def plan(version, mode="auto", dra_enabled=True, driver_enabled=True, toolkit_enabled=True,
         gpu_nodes=(), dra_nodes=(), operator_extra_values=None, dra_driver_extra_values=None,
         dra_driver_version=None, image_registry=None, namespace="gpu-operator",
         dra_driver_namespace="nvidia-dra-driver-gpu", release_name="gpu-operator",
         dra_driver_release_name="nvidia-dra-driver-gpu", sharing=False, installed_dra_driver=None,
         gpu_node_labels=None, consumable_shares=None, health=False, on_dra=(), back_to_device_plugin=()):
    """Releases, values, the DRA node set and the images to pull for one request; raises
    PlanError on a refusal. ``installed_dra_driver``: the live DRA release's kubelet plugin
    ({name, version}, see dra_chart_upgrade); ``gpu_node_labels``: {node: labels} of the GPU
    nodes, for the driver image's OS suffix; ``consumable_shares``: the ConsumableShares mode, or
    None (off); ``on_dra``: the GPU nodes labelled for DRA now, which stay on DRA unless named in
    ``back_to_device_plugin`` (see select_nodes)."""
    parsed, info, notes = operator_info(version)
    layout = resolve_layout(version, dra_enabled, mode)
    selected = select_nodes(gpu_nodes, dra_nodes, on_dra, back_to_device_plugin) \
        if layout != "device_plugin" else []
    if layout != "device_plugin" and not gpu_nodes:
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
    DRA release's kubelet plugin and the GPU nodes' labels (which tell the nodes on DRA now)."""
    labels = gpu_node_labels or {}
    return plan(params["version"], params["dra_mode"], params["dra_enabled"], params["driver_enabled"],
                params["toolkit_enabled"], gpu_nodes, params["dra_nodes"], operator_extra_values,
                params["dra_driver_values"], params["dra_driver_version"], params["image_registry"],
                sharing=params["dra_sharing"], installed_dra_driver=installed_dra_driver,
                gpu_node_labels=gpu_node_labels, consumable_shares=params.get("dra_consumable_shares") or None,
                health=bool(params.get("dra_health_check")), on_dra=nodes_on_dra(
                    [{"name": name, "labels": labels[name]} for name in labels]),
                back_to_device_plugin=params.get("back_to_device_plugin") or [],
                **{key: params[key] for key in RELEASE_OPTIONS})


def removal(params, gpu_nodes, nodes):
    """The plan for state absent: both releases, in the order they are uninstalled (the DRA
    driver, then the operator), and removing the node labels this collection set; nothing else."""
    releases = [{"name": params["dra_driver_release_name"], "namespace": params["dra_driver_namespace"]},
                {"name": params["release_name"], "namespace": params["namespace"]}]
    patches = node_patches(nodes, [])
    return {"layout": None, "releases": releases, "gpu_nodes": gpu_nodes, "dra_nodes": [], "device_plugin_nodes": [],
            "moving_to_dra": [], "moving_to_device_plugin": returning_nodes(patches),
            "plugin": None, "charts_checked": [], "node_patches": patches}


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
