# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the GPU Operator plan refuses, and what it warns about (pure logic).

Before anything is installed: the options of module gpu_operator_plan (their argument spec, and
the checks that need no cluster), the cluster's Kubernetes version and DRA API, and the chart
values NVIDIA's charts would refuse to render or its DRA driver to run; then, for what works
but surprises, the cautions that go into the plan's notes. gpu_operator_values calls these
while it plans; the versions they name are gpu_operator_catalog's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.chart_values import lookup, truthy
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.gpu_operator_catalog import (
    CONSUMABLE_SHARES_MODES, DEFAULT_REPO_URL, HEALTH_EXCLUSIVE_GATES, HEALTH_GATE, MODES, PlanError, parse_version,
    version_text)
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.nvidia import OLD_DRA_CHART
from ansible_collections.dra.gpu.plugins.module_utils.sharing.sharing_config import SHARES_COMBINE, SHARES_ENFORCE, shares_mode_words
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions

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
    back_to_device_plugin=dict(type="list", elements="str", default=[]),
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


def input_problems(params, name=lambda option: option):
    """The problems with the plan's options that need no cluster: versions, names Helm and
    Kubernetes accept, the selector's syntax, counts. ``name`` spells an option as the user wrote
    it (the role's ``gpu_operator_namespace`` for ``namespace``)."""
    def chart_version(option, value):
        try:
            parse_version(value)
        except PlanError:
            raise inputs.InputError("%s is %r, which is not a chart version; write it like v26.3.1"
                                    % (name(option), value))

    problems = inputs.Problems()
    problems.check(chart_version, "version", params.get("version"))
    if params.get("dra_driver_version"):
        problems.check(chart_version, "dra_driver_version", params["dra_driver_version"])
    problems.check(inputs.version, name("min_kubernetes_version"), params.get("min_kubernetes_version"))
    problems.check(inputs.dns_label, name("namespace"), params.get("namespace"))
    problems.check(inputs.dns_label, name("dra_driver_namespace"), params.get("dra_driver_namespace"))
    problems.check(inputs.helm_release, name("release_name"), params.get("release_name"))
    problems.check(inputs.helm_release, name("dra_driver_release_name"), params.get("dra_driver_release_name"))
    problems.check(inputs.label_selector, name("gpu_node_selector"), params.get("gpu_node_selector"))
    problems.check(inputs.strings, name("dra_nodes"), params.get("dra_nodes"))
    problems.check(inputs.unique, name("dra_nodes"), params.get("dra_nodes") or [], "node")
    problems.check(inputs.strings, name("back_to_device_plugin"), params.get("back_to_device_plugin"))
    problems.check(inputs.unique, name("back_to_device_plugin"), params.get("back_to_device_plugin") or [], "node")
    if params.get("dra_consumable_shares"):
        problems.check(_shares_mode, name, params["dra_consumable_shares"])
    if params.get("namespace") == params.get("dra_driver_namespace") and \
            params.get("release_name") == params.get("dra_driver_release_name"):
        problems.add("%s and %s name the same release in the same namespace; give the DRA driver's release "
                     "another name" % (name("release_name"), name("dra_driver_release_name")))
    registry = str(params.get("image_registry") or "")
    if "://" in registry:
        problems.add("%s is %r; write the registry host and path without a scheme, e.g. registry.example.com"
                     % (name("image_registry"), registry))
    if params.get("chart_source") == "oci" and not str(params.get("oci_repository") or "").startswith("oci://"):
        problems.add("%s oci needs %s starting with oci:// (got %r), e.g. oci://registry.example.com/charts"
                     % (name("chart_source"), name("oci_repository"), params.get("oci_repository")))
    if params.get("chart_source") == "local" and not params.get("chart_dir"):
        problems.add("%s local needs %s, a directory with the charts" % (name("chart_source"), name("chart_dir")))
    return problems.found


def _shares_mode(name, mode):
    try:
        consumable_shares_mode(mode)
    except PlanError as exc:
        raise inputs.InputError(str(exc).replace("gpu_operator_dra_consumable_shares", name("dra_consumable_shares")))


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


def consumable_shares_mode(mode):
    """``mode`` as the DRA driver reads CONSUMABLE_SHARES ("memory", "unlimited", "4"); PlanError
    for anything else, which the kubelet plugin would refuse at start."""
    text = str(mode).strip()
    if text in CONSUMABLE_SHARES_MODES or (text.isdigit() and int(text) > 0):
        return text
    off = " (leave it empty to keep the mode off)" if text in ("disabled", "0", "false", "off") else ""
    raise PlanError("gpu_operator_dra_consumable_shares is %r; NVIDIA's DRA driver takes %s or a positive whole "
                    "number of shares per GPU%s" % (mode, ", ".join(CONSUMABLE_SHARES_MODES), off))


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


# ----- cautions: what works but surprises, for the plan's notes -------------------------------


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
