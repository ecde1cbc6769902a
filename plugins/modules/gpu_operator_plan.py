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
  - Read-only. Checks the live cluster (Kubernetes version, C(resource.k8s.io/v1) served, GPU nodes) and returns the
    Helm releases to install with their values, and the node label changes that move the selected GPU nodes to DRA
    while the others keep the device plugin.
  - By default (NVIDIA's supported path at every version) the operator runs without the device plugin on the DRA nodes
    and NVIDIA's DRA driver chart runs its kubelet plugin on the nodes labelled C(nvidia.com/dra-kubelet-plugin=true).
    With v26.7 and O(dra_mode=gpucluster) the operator deploys the DRA driver itself through a GPUCluster, which NVIDIA
    calls a Technology Preview for new installs only.
  - Returns every image the planned releases pull (RV(images), RV(image_refs)), Node Feature Discovery's and the DRA
    driver's included, so that an air-gapped site can mirror exactly that list.
  - When the DRA driver release runs the chart under its old name (C(nvidia-dra-driver-gpu), up to v25.12) and the
    plan moves it to the renamed chart (C(dra-driver-nvidia-gpu), 0.4 and later), plans
    C(nameOverride=nvidia-dra-driver-gpu) and returns the new chart's CRDs to apply first, as NVIDIA's upgrade notes
    say; going back across the rename is refused.
  - Fails, before anything is read, on names Kubernetes or Helm would refuse (O(namespace), O(release_name) and the DRA
    driver's), malformed versions and selectors. Fails, before anything is installed, on a cluster below
    O(min_kubernetes_version), without C(resource.k8s.io/v1), on an unknown chart version, and on value combinations
    NVIDIA's charts refuse to render (both ClusterPolicy and GPUCluster, the standalone chart beside the
    operator-managed driver, GPU resources without C(gpuResourcesEnabledOverride)).
  - Never two GPU managers on one node - with O(state=present) it fails, naming them, when pods on a node that would
    run DRA still hold C(nvidia.com/gpu) from the device plugin (DRA would hand out the same GPUs again), unless
    O(evict_device_plugin_pods=true) returns them for M(dra.gpu.device_plugin_drain) to evict first. With
    O(state=absent) it fails, naming the claims and their pods, while ResourceClaims hold devices of C(gpu.nvidia.com)
    (without the driver the kubelet cannot release them, and their pods stay Terminating), unless
    O(force_removal=true).
  - With O(check_charts=true) it also asks Helm for each chart (C(helm show chart)), so an unreachable repository or a
    chart version that does not exist fails here with Helm's message.
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
    description:
      - GPU Operator chart version, for example V(v26.3.1). Known are v25.10.0-1, v26.3.0-3 and v26.7.0; a newer
        patch of those minors (V(v26.3.4)) is accepted with a caution in RV(notes), an unknown minor refused.
    type: str
    required: true
  dra_enabled:
    description: Use DRA for GPUs; V(false) plans the classic operator with its device plugin everywhere.
    type: bool
    default: true
  dra_mode:
    description:
      - V(auto) and V(standalone) install NVIDIA's separate DRA driver chart beside the operator (NVIDIA's
        supported path at every version). V(gpucluster) (v26.7 and later, every GPU node at once) lets the
        operator deploy the DRA driver through a GPUCluster, a Technology Preview that NVIDIA supports for new
        installs only; it deploys no container toolkit, so O(toolkit_enabled) has no effect there.
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
    description:
      - DRA driver chart version, for example V(0.4.1) (NVIDIA spells these without C(v)); by default the one
        paired with the operator version (25.12.0 with v25.10, 0.4.1 with v26.3 and v26.7).
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
      - Registry host (and optional path prefix) of mirrored images; sets the C(repository) of every image the
        planned releases pull, Node Feature Discovery's and the DRA driver's included, to this registry plus the
        path it has upstream (for example V(registry.example.com) gives V(registry.example.com/nvidia) for the
        validator, V(registry.example.com/nfd/node-feature-discovery) for Node Feature Discovery).
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
cluster:
  description:
    - Which distribution runs the cluster, read from the nodes (C(distribution), C(title), C(managed), C(cloud),
      C(evidence)). On V(k3s) and V(rke2) the operator's values carry C(toolkit.env) with that distribution's
      containerd socket (and, on k3s, its config and drop-in paths) unless O(values) sets C(toolkit.env) itself.
  returned: with state present
  type: dict
notes:
  description:
    - What to expect from NVIDIA's operator with this plan, for a person - a newer patch than the collection knows,
      what the image list cannot know (the driver's OS suffix), the GPUCluster layout's limits, a DRA chart upgraded
      under its old name, during a partial migration, that the validator's plugin-validation fails on the DRA
      nodes and the ClusterPolicy reports notReady, and what the distribution (k3s, RKE2, EKS, GKE, AKS) means for
      the operator.
  returned: with state present
  type: list
  elements: str
images:
  description:
    - Every image the planned releases will pull (C(release), C(component), C(repository), C(tag), C(ref)), with the
      mirror of O(image_registry) and any version set in O(values) applied. The driver's tag carries the GPU nodes'
      OS suffix where Node Feature Discovery has labelled them (RV(notes) says when it has not).
  returned: with state present
  type: list
  elements: dict
  sample: [{release: gpu-operator, component: toolkit, repository: nvcr.io/nvidia/k8s/container-toolkit, tag: v1.19.1,
            ref: "nvcr.io/nvidia/k8s/container-toolkit:v1.19.1"}]
image_refs:
  description: The same images as C(repository:tag) lines, each once, the form mirroring tools read.
  returned: with state present
  type: list
  elements: str
dra_driver_upgrade:
  description:
    - What moving the live DRA driver release to the planned chart needs - C(name_override) (the old chart name, kept
      as C(nameOverride)), C(apply_crds) (the chart's CRDs are applied before the upgrade), C(from) (the version it
      runs now, or null).
  returned: with state present
  type: dict
dra_driver_crds:
  description: The DRA driver chart's CustomResourceDefinitions to apply before the upgrade (when C(apply_crds)).
  returned: with state present
  type: list
  elements: dict
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dra.gpu.plugins.module_utils import client, cluster_identity, gpu_handover, helm_charts, inputs
from ansible_collections.dra.gpu.plugins.module_utils import gpu_operator_reading as reading
from ansible_collections.dra.gpu.plugins.module_utils import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils import nvidia


def main():
    spec = client.auth_argument_spec()
    spec.update(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        version=dict(type="str", required=True),
        dra_enabled=dict(type="bool", default=True),
        dra_mode=dict(type="str", choices=list(gov.MODES), default="auto"),
        driver_enabled=dict(type="bool", default=True),
        toolkit_enabled=dict(type="bool", default=True),
        gpu_node_selector=dict(type="str", default=nvidia.GPU_NODE_SELECTOR),
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
        read = reading.cluster_nodes(kube, params["gpu_node_selector"])
        if params["state"] == "absent":
            held, refusal = reading.driver_claims(kube)
            if refusal and not params["force_removal"]:
                module.fail_json(msg=refusal, allocated_claims=held)
            module.exit_json(changed=False, server_version=server_version,
                             **gov.removal(params, read["gpu_nodes"], read["nodes"]))
        problems = gov.check_cluster(server_version, kube.serves_resource_v1(), params["min_kubernetes_version"],
                                     params["dra_enabled"])
        if problems:
            raise gov.PlanError("refused before installing anything: " + "; ".join(problems))
        cluster, values = reading.distribution(server_version, read["summaries"], params)
        installed = reading.installed_dra_driver(kube, params["dra_driver_namespace"], params["dra_driver_release_name"])
        result = gov.plan_for(params, read["gpu_nodes"], values, installed, read["gpu_node_labels"])
        holders = reading.device_plugin_holders(kube, result["dra_nodes"])
        refusal = gpu_handover.move_refusal(holders)
        if refusal and not params["evict_device_plugin_pods"]:
            module.fail_json(msg=refusal, device_plugin_holders=holders)
        helm = params["binary_path"] or module.get_bin_path("helm", required=params["check_charts"])
        checked, crds = helm_charts.check_planned(module.run_command, module.get_bin_path("timeout"), helm, params,
                                                  result, gov.OPERATOR_CHART)
        result["notes"] += [note for note in [cluster_identity.operator_note(cluster)] if note]
    except (gov.PlanError, helm_charts.ChartError) as exc:
        module.fail_json(msg=str(exc))
    except client.ApiException as exc:
        module.fail_json(msg="could not read the cluster: %s" % client.api_error_message(exc))
    module.exit_json(changed=False, server_version=server_version, gpu_nodes=read["gpu_nodes"], charts_checked=checked,
                     device_plugin_holders=holders, dra_driver_crds=crds, cluster=cluster,
                     node_patches=gov.node_patches(read["nodes"], result["dra_nodes"], result["layout"] != "gpucluster"),
                     **result)


if __name__ == "__main__":
    main()
