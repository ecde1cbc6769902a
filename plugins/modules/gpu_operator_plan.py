#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_operator_plan
short_description: Decide how to install NVIDIA's GPU Operator and DRA driver, and refuse what would not work
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Read-only. Checks the live cluster (Kubernetes version, C(resource.k8s.io/v1) served, GPU nodes) and
    returns the Helm releases to install with their values, and the node label changes that move the
    selected GPU nodes to DRA while the others keep the device plugin.
  - For GPU Operator v25.10 and v26.3, and for v26.7 with O(dra_mode=standalone), the operator runs without
    the device plugin on the DRA nodes and NVIDIA's separate DRA driver chart runs its kubelet plugin on the
    nodes labelled C(nvidia.com/dra-kubelet-plugin=true). For v26.7 with O(dra_mode=auto) or
    O(dra_mode=gpucluster), the operator deploys the DRA driver itself through a GPUCluster.
  - Fails, before anything is read, on names Kubernetes or Helm would refuse (O(namespace),
    O(release_name) and the DRA driver's), malformed versions and selectors.
  - Fails, before anything is installed, on a cluster below O(min_kubernetes_version), without
    C(resource.k8s.io/v1), on an unknown chart version, and on value combinations NVIDIA's charts refuse to
    render (both ClusterPolicy and GPUCluster, the standalone chart beside the operator-managed driver, GPU
    resources without C(gpuResourcesEnabledOverride)).
  - Never two GPU managers on one node - with O(state=present) it fails, naming them, when pods bound to a node
    that would run DRA still hold C(nvidia.com/gpu) from the device plugin, since DRA would hand out the same
    GPUs again. With O(state=absent) it fails, naming the claims and their pods, while ResourceClaims hold
    devices of C(gpu.nvidia.com) (without the driver the kubelet cannot release them, and their pods stay
    Terminating), unless O(force_removal=true). With O(evict_device_plugin_pods=true) the holders are returned
    instead of refused, for M(dra.gpu.device_plugin_drain) to evict before any node label changes.
  - With O(check_charts=true) it also asks Helm for each chart (C(helm show chart)), so an unreachable
    repository or a chart version that does not exist fails here with Helm's message.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  state:
    description:
      - V(present) plans an install; V(absent) plans the removal of the releases and of the node labels this
        collection set, and nothing else.
    type: str
    choices: [present, absent]
    default: present
  version:
    description: GPU Operator chart version, for example V(v26.3.1).
    type: str
    required: true
  dra_enabled:
    description: Use DRA for GPUs; V(false) plans the classic operator with its device plugin everywhere.
    type: bool
    default: true
  dra_mode:
    description:
      - V(auto) picks NVIDIA's supported layout for the version (standalone DRA chart before v26.7, GPUCluster
        from v26.7); V(standalone) or V(gpucluster) force one.
    type: str
    choices: [auto, standalone, gpucluster]
    default: auto
  driver_enabled:
    description: Let the operator install the NVIDIA driver (C(driver.enabled)); V(false) for a host driver.
    type: bool
    default: true
  toolkit_enabled:
    description: Let the operator install the NVIDIA Container Toolkit (C(toolkit.enabled)).
    type: bool
    default: true
  gpu_node_selector:
    description: Label selector of the GPU nodes.
    type: str
    default: nvidia.com/gpu.present=true
  dra_nodes:
    description:
      - GPU nodes to move to DRA; empty means all of them. The others keep the device plugin.
    type: list
    elements: str
    default: []
  values:
    description: Extra values for the gpu-operator chart, merged over the planned ones.
    type: dict
    default: {}
  dra_driver_values:
    description: Extra values for the DRA driver chart (standalone layout), merged over the planned ones.
    type: dict
    default: {}
  dra_driver_version:
    description: DRA driver chart version; by default the one paired with the operator version.
    type: str
  dra_sharing:
    description:
      - Turn on the DRA driver's feature gates C(TimeSlicingSettings) and C(MPSSupport) (off by default), which
        GPU sharing classes (dra.gpu.gpu_sharing) need. It sets the chart value C(featureGates) of the DRA driver
        chart, or C(draDriver.featureGates) with the operator-managed GPUCluster.
    type: bool
    default: false
  image_registry:
    description:
      - Registry host (and optional path prefix) of mirrored images; sets each component's C(repository)
        to this registry plus NVIDIA's path (for example V(registry.example.com) gives
        V(registry.example.com/nvidia/cloud-native) for the validator).
    type: str
  namespace:
    description: Namespace of the gpu-operator release.
    type: str
    default: gpu-operator
  dra_driver_namespace:
    description: Namespace of the DRA driver release.
    type: str
    default: nvidia-dra-driver-gpu
  release_name:
    description: Release name of the gpu-operator chart.
    type: str
    default: gpu-operator
  dra_driver_release_name:
    description: Release name of the DRA driver chart.
    type: str
    default: nvidia-dra-driver-gpu
  min_kubernetes_version:
    description: Refuse clusters older than this.
    type: str
    default: "1.35"
  chart_source:
    description:
      - Where the charts come from. V(repo) a Helm repository (O(chart_repo_url)), V(oci) an OCI registry
        (O(oci_repository)), V(local) a directory of chart directories or C(.tgz) files (O(chart_dir)).
    type: str
    choices: [repo, oci, local]
    default: repo
  chart_repo_url:
    description: Helm repository of both charts.
    type: str
    default: https://helm.ngc.nvidia.com/nvidia
  dra_driver_chart_repo_url:
    description: Helm repository of the DRA driver chart, when it differs from O(chart_repo_url).
    type: str
  oci_repository:
    description: OCI prefix of the charts, for example V(oci://registry.example.com/charts); the chart name is appended.
    type: str
  dra_driver_oci_repository:
    description: OCI prefix of the DRA driver chart, when it differs from O(oci_repository).
    type: str
  chart_dir:
    description:
      - Directory with the charts for air-gapped sites, as C(<chart>-<version>.tgz) files or C(<chart>/)
        directories; the chart's own version must equal the planned one.
    type: path
  check_charts:
    description: Ask Helm for every planned chart and version before returning.
    type: bool
    default: true
  binary_path:
    description: The Helm binary; by default C(helm) from E(PATH).
    type: path
  helm_timeout:
    description: Seconds one C(helm show chart) may take.
    type: int
    default: 60
  force_removal:
    description:
      - With O(state=absent), plan the removal even while ResourceClaims hold the driver's devices. No pod is
        deleted; their pods stay Terminating until the driver is back.
    type: bool
    default: false
  evict_device_plugin_pods:
    description:
      - With O(state=present), plan the move even while pods hold C(nvidia.com/gpu) on nodes going to DRA, returning
        them in RV(device_plugin_holders) to be evicted first (the gpu_operator role does so with
        M(dra.gpu.device_plugin_drain), honouring PodDisruptionBudgets).
    type: bool
    default: false
requirements:
  - helm >= 3.10 (with O(check_charts=true))
"""

EXAMPLES = r"""
- name: Plan DRA on node-b only, the device plugin staying on the other GPU nodes
  dra.gpu.gpu_operator_plan:
    version: v26.3.1
    dra_nodes: [node-b]
  register: plan

- name: Show the releases and values
  ansible.builtin.debug:
    var: plan.releases

- name: Air-gapped site, charts from a directory and images from a mirror
  dra.gpu.gpu_operator_plan:
    version: v25.10.1
    chart_source: local
    chart_dir: /srv/charts
    image_registry: registry.example.com
"""

RETURN = r"""
layout:
  description: V(standalone), V(gpucluster) or V(device_plugin) (DRA disabled).
  returned: success
  type: str
  sample: standalone
releases:
  description:
    - The Helm releases in install order, each with C(name), C(namespace), C(chart), C(chart_ref),
      C(chart_repo_url) (null unless the source is a repository), C(chart_version) and C(values).
    - With O(state=absent), the releases to remove (C(name), C(namespace)).
  returned: success
  type: list
  elements: dict
node_patches:
  description:
    - Label and annotation changes per node (C(node), C(step), C(patch)); only nodes whose labels must change.
    - C(step) V(device-plugin-off) (C(nvidia.com/gpu.deploy.device-plugin=false) on a node going to DRA) comes
      first; V(dra) (the DRA kubelet plugin's label, and removing what this collection set on other nodes) is
      applied once the device plugin has left the node.
  returned: success
  type: list
  elements: dict
  sample: [{node: node-b, step: dra, patch: {metadata: {name: node-b, labels: {nvidia.com/dra-kubelet-plugin: "true"}}}}]
gpu_nodes:
  description: Nodes matching O(gpu_node_selector).
  returned: success
  type: list
  elements: str
dra_nodes:
  description: GPU nodes that will run the DRA kubelet plugin.
  returned: success
  type: list
  elements: str
device_plugin_enabled:
  description: Whether the operator still deploys the device plugin (on the nodes not moved to DRA).
  returned: success
  type: bool
device_plugin_nodes:
  description: GPU nodes that keep the device plugin.
  returned: success
  type: list
  elements: str
plugin:
  description: Where the DRA kubelet-plugin pods run (C(namespace), C(pod_selector), C(daemonset)); null without DRA.
  returned: success
  type: dict
server_version:
  description: The API server's version.
  returned: success
  type: str
charts_checked:
  description: What C(helm show chart) reported for each release (C(chart), C(version), C(ref)).
  returned: success
  type: list
  elements: dict
notes:
  description: What to expect from NVIDIA's operator with this plan, for a person (during a partial migration, its
    validator's plugin-validation fails on the DRA nodes and the ClusterPolicy reports notReady).
  returned: with state present
  type: list
  elements: str
device_plugin_holders:
  description: Pods that hold C(nvidia.com/gpu) on nodes the plan would move to DRA (C(namespace), C(name), C(node),
    C(gpus)).
  returned: with state present
  type: list
  elements: dict
allocated_claims:
  description: ResourceClaims holding the driver's devices (C(namespace), C(name), C(devices), C(pods)).
  returned: when the removal is refused
  type: list
  elements: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dra.gpu.plugins.module_utils import client, gpu_handover, inputs
from ansible_collections.dra.gpu.plugins.module_utils import gpu_operator_values as gov

DRA_DRIVER = "gpu.nvidia.com"


def chart_location(params, release):
    """(chart_ref, chart_repo_url) for one release and the chosen source."""
    chart = release["chart"]
    is_dra = chart != gov.OPERATOR_CHART
    source = params["chart_source"]
    if source == "repo":
        url = params["dra_driver_chart_repo_url"] if is_dra and params["dra_driver_chart_repo_url"] \
            else params["chart_repo_url"]
        return chart, url
    if source == "oci":
        prefix = params["dra_driver_oci_repository"] if is_dra and params["dra_driver_oci_repository"] \
            else params["oci_repository"]
        if not prefix:
            raise gov.PlanError("chart_source oci needs oci_repository (for example oci://registry.example.com/charts)")
        return "%s/%s" % (prefix.rstrip("/"), chart), None
    directory = params["chart_dir"]
    if not directory or not os.path.isdir(directory):
        raise gov.PlanError("chart_source local needs chart_dir, a directory with the charts (got %r)" % (directory,))
    bare = release["chart_version"].lstrip("v")
    for name in ("%s-%s.tgz" % (chart, release["chart_version"]), "%s-%s.tgz" % (chart, bare), chart):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return path, None
    raise gov.PlanError("no %s chart for version %s in %s (looked for %s-%s.tgz and %s/)"
                        % (chart, release["chart_version"], directory, chart, release["chart_version"], chart))


def show_chart(module, helm, timeout, ref, repo_url, version, local):
    import yaml
    cmd = [helm, "show", "chart", ref]
    if repo_url:
        cmd += ["--repo", repo_url]
    if not local:
        cmd += ["--version", version]
    timeout_bin = module.get_bin_path("timeout")
    if timeout_bin:
        cmd = [timeout_bin, str(timeout)] + cmd
    rc, out, err = module.run_command(cmd)
    if rc != 0:
        where = repo_url or ref
        reason = (err or out or "").strip().splitlines()
        reason = reason[-1] if reason else "exit code %d" % rc
        if rc == 124:
            reason = "no answer within %ds" % timeout
        raise gov.PlanError("chart %s version %s is not available from %s: %s"
                            % (ref if not repo_url else ref, version, where, reason))
    try:
        meta = yaml.safe_load(out) or {}
    except yaml.YAMLError:
        meta = {}
    return meta


def main():
    spec = client.auth_argument_spec()
    spec.update(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        version=dict(type="str", required=True),
        dra_enabled=dict(type="bool", default=True),
        dra_mode=dict(type="str", choices=list(gov.MODES), default="auto"),
        driver_enabled=dict(type="bool", default=True),
        toolkit_enabled=dict(type="bool", default=True),
        gpu_node_selector=dict(type="str", default="nvidia.com/gpu.present=true"),
        dra_nodes=dict(type="list", elements="str", default=[]),
        values=dict(type="dict", default={}),
        dra_driver_values=dict(type="dict", default={}),
        dra_driver_version=dict(type="str"),
        image_registry=dict(type="str"),
        dra_sharing=dict(type="bool", default=False),
        namespace=dict(type="str", default="gpu-operator"),
        dra_driver_namespace=dict(type="str", default="nvidia-dra-driver-gpu"),
        release_name=dict(type="str", default="gpu-operator"),
        dra_driver_release_name=dict(type="str", default="nvidia-dra-driver-gpu"),
        min_kubernetes_version=dict(type="str", default="1.35"),
        chart_source=dict(type="str", choices=["repo", "oci", "local"], default="repo"),
        chart_repo_url=dict(type="str", default=gov.DEFAULT_REPO_URL),
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
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    client.check_libraries(module)
    params = module.params
    inputs.refuse(module, gov.input_checks(params) + [lambda: inputs.seconds("helm_timeout", params["helm_timeout"])])
    try:
        kube = client.Kube(client.api_client(module))
        server_version = kube.server_version()
        gpu_node_items, _rv = kube.list_all(kube.core.list_node, label_selector=params["gpu_node_selector"])
        all_nodes, _rv = kube.list_all(kube.core.list_node)
        nodes = [{"name": n["metadata"]["name"], "labels": n["metadata"].get("labels") or {},
                  "annotations": n["metadata"].get("annotations") or {}} for n in all_nodes]
        gpu_nodes = sorted(n["metadata"]["name"] for n in gpu_node_items)
        names = {"namespace": params["namespace"], "dra_driver_namespace": params["dra_driver_namespace"],
                 "release_name": params["release_name"], "dra_driver_release_name": params["dra_driver_release_name"]}
        if params["state"] == "absent":
            held = gpu_handover.allocated_claims(kube.claims(), DRA_DRIVER)
            refusal = gpu_handover.removal_refusal(held, DRA_DRIVER)
            if refusal and not params["force_removal"]:
                module.fail_json(msg=refusal, allocated_claims=held)
            releases = [{"name": params["dra_driver_release_name"], "namespace": params["dra_driver_namespace"]},
                        {"name": params["release_name"], "namespace": params["namespace"]}]
            module.exit_json(changed=False, layout=None, releases=releases, gpu_nodes=gpu_nodes, dra_nodes=[],
                             device_plugin_nodes=[], plugin=None, server_version=server_version, charts_checked=[],
                             node_patches=gov.node_patches(nodes, []))
        problems = gov.check_cluster(server_version, kube.serves_resource_v1(), params["min_kubernetes_version"],
                                     params["dra_enabled"])
        if problems:
            raise gov.PlanError("refused before installing anything: " + "; ".join(problems))
        result = gov.plan(params["version"], params["dra_mode"], params["dra_enabled"], params["driver_enabled"],
                          params["toolkit_enabled"], gpu_nodes, params["dra_nodes"], params["values"],
                          params["dra_driver_values"], params["dra_driver_version"], params["image_registry"],
                          sharing=params["dra_sharing"], **names)
        holders = []
        for node in result["dra_nodes"]:
            pods, _rv = kube.list_all(kube.core.list_pod_for_all_namespaces, field_selector="spec.nodeName=" + node)
            holders += gpu_handover.device_plugin_holders(pods, [node])
        refusal = gpu_handover.move_refusal(holders)
        if refusal and not params["evict_device_plugin_pods"]:
            module.fail_json(msg=refusal, device_plugin_holders=holders)
        helm = params["binary_path"] or module.get_bin_path("helm", required=params["check_charts"])
        checked = []
        for release in result["releases"]:
            ref, repo_url = chart_location(params, release)
            release["chart_ref"], release["chart_repo_url"] = ref, repo_url
            if not params["check_charts"]:
                continue
            local = params["chart_source"] == "local"
            meta = show_chart(module, helm, params["helm_timeout"], ref, repo_url, release["chart_version"], local)
            found = str(meta.get("version", ""))
            if meta.get("name") != release["chart"] or found.lstrip("v") != release["chart_version"].lstrip("v"):
                raise gov.PlanError("%s holds chart %s %s, but the plan needs %s %s"
                                    % (ref, meta.get("name"), found, release["chart"], release["chart_version"]))
            # Helm compares the release's chart with "<name>-<version>" as the chart spells it.
            release["chart_version"] = found
            checked.append({"chart": release["chart"], "version": found, "ref": ref})
    except gov.PlanError as exc:
        module.fail_json(msg=str(exc))
    except client.ApiException as exc:
        module.fail_json(msg="could not read the cluster: %s" % client.api_error_message(exc))
    module.exit_json(changed=False, server_version=server_version, gpu_nodes=gpu_nodes, charts_checked=checked,
                     device_plugin_holders=holders,
                     node_patches=gov.node_patches(nodes, result["dra_nodes"], result["layout"] != "gpucluster"),
                     **result)


if __name__ == "__main__":
    main()
