#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_sharing_plan
short_description: Turn GPU sharing classes into DeviceClasses with NVIDIA's opaque config, refusing what the driver would
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Validates a list of sharing classes (time-slicing, MPS, MIG, memory) and renders each as a DeviceClass whose
    C(spec.config) carries NVIDIA's opaque config (C(resource.nvidia.com/v1beta1) C(GpuConfig) or C(MigDeviceConfig)).
  - A V(memory) class selects the GPUs NVIDIA's DRA driver 0.5.0 shares by memory (ConsumableShares, which publishes
    them with C(allowMultipleAllocations)); every pod keeps its own claim asking for C(capacity.requests.memory), and
    O(claim_templates) renders ResourceClaimTemplates that do so. Memory classes and templates are refused, before
    anything is applied, where the API server drops consumable capacity (a server-side dry run of a ResourceClaim
    asking for memory; C(DRAConsumableCapacity), on by default from Kubernetes 1.36 - the dry run cannot see the
    scheduler's, controller-manager's and kubelets' gate) and where the driver's kubelet plugin does not run
    ConsumableShares (C(CONSUMABLE_SHARES) with the C(ConsumableShares) gate). MPS classes are refused while it does,
    as the driver refuses MPS then.
  - Checks every config against the schema NVIDIA's DRA kubelet plugin (v0.4.x) decodes strictly, which it does only
    when a pod starts; an unknown field, a wrong interval or an active-thread percentage above 100 is refused here.
  - Reads the cluster, changing nothing - the feature gates of the DRA kubelet plugin (C(FEATURE_GATES) on its C(gpus)
    container; time-slicing needs C(TimeSlicingSettings), MPS needs C(MPSSupport)), and the published devices, so an MPS
    pinned-memory limit above every GPU's memory is refused.
  - Every problem is reported at once, so a role applies all classes or none.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  classes:
    description:
      - The sharing classes. Each has C(name) (the DeviceClass), C(strategy) (V(time_slicing), V(mps) or V(mig)) and
        optionally C(interval) (time_slicing - V(Default), V(Short), V(Medium), V(Long)), C(mps) (a map with
        C(active_thread_percentage), C(pinned_memory_limit), C(per_device_pinned_memory_limit); for mps, and for mig to
        run MPS inside a partition), C(profile) (mig - the MIG profile, for example V(1g.10gb)), C(selectors) (extra CEL
        selectors) and C(labels).
    type: list
    elements: dict
    required: true
  managed_labels:
    description: Labels added to every class, so that the role can find (and prune) the classes it created.
    type: dict
    default: {}
  mig_layout:
    description:
      - The MIG manager layout the MIG classes rely on; returned as RV(mig_layout). Empty for C(all-<profile>) when
        the mig classes select exactly one profile.
    type: str
    default: ""
  check_gates:
    description: Refuse time-slicing and MPS classes when no DRA kubelet plugin runs with their feature gate.
    type: bool
    default: true
  variable_name:
    description: How to name O(classes) in messages (the role passes its variable's name).
    type: str
    default: classes
  claim_templates:
    description:
      - Example ResourceClaimTemplates for the memory classes, each with C(name), C(namespace) (which must exist),
        C(class) (a class of strategy V(memory) in O(classes)) and C(memory) (what each pod's claim asks for, for
        example V(8Gi)). They carry O(managed_labels), so that templates no longer listed are returned in
        RV(claim_templates_delete).
    type: list
    elements: dict
    default: []
  claim_templates_variable_name:
    description: How to name O(claim_templates) in messages.
    type: str
    default: claim_templates
"""

EXAMPLES = r"""
- name: Render and check the sharing classes
  dra.gpu.gpu_sharing_plan:
    classes:
      - {name: nvidia-gpu-timesliced, strategy: time_slicing, interval: Default}
      - {name: nvidia-gpu-mps, strategy: mps, mps: {active_thread_percentage: 50, pinned_memory_limit: 8Gi}}
      - {name: nvidia-mig-1g, strategy: mig, profile: 1g.10gb}
  register: sharing

- name: A class of memory shares and a template asking for 8Gi of a GPU (driver 0.5.0 with ConsumableShares)
  dra.gpu.gpu_sharing_plan:
    classes:
      - {name: nvidia-gpu-memory, strategy: memory}
    claim_templates:
      - {name: gpu-8gi, namespace: team-a, class: nvidia-gpu-memory, memory: 8Gi}
  register: sharing
"""

RETURN = r"""
device_classes:
  description:
    - One entry per class, ready for dra.gpu.device_class or the device_classes role - C(name), C(selectors), C(config)
      (absent for a plain MIG class) and C(labels).
  returned: success
  type: list
  elements: dict
sharing:
  description:
    - Per class its C(name), C(strategy), C(profile) (MIG) and C(enforces) - what the strategy enforces, in words (for a
      memory class also what the driver's ConsumableShares mode does with a claim that asks for no memory).
  returned: success
  type: list
  elements: dict
gates:
  description: The DRA driver feature gates the classes need.
  returned: success
  type: list
  elements: str
  sample: [MPSSupport, TimeSlicingSettings]
plugins:
  description: The DRA kubelet-plugin DaemonSets found, each with C(namespace), C(name) and C(gates) (name to bool).
  returned: success
  type: list
  elements: dict
mig_layout:
  description: The MIG layout to apply - O(mig_layout), or C(all-<profile>) of the one profile the mig classes select; null without either.
  returned: success
  type: str
  sample: all-1g.10gb
mig_profiles:
  description: The MIG profiles the classes select.
  returned: success
  type: list
  elements: str
claim_templates:
  description:
    - The ResourceClaimTemplates to apply, each as C(definition) (the object) and C(replaced) (true when a template of
      that name that asks for something else is deleted first, see RV(claim_templates_delete)).
  returned: success
  type: list
  elements: dict
claim_templates_delete:
  description:
    - Templates to delete first (C(namespace), C(name), C(reason)) - ours no longer listed, and ours that ask for
      something else (a template's spec cannot change, so it is made again).
  returned: success
  type: list
  elements: dict
consumable_capacity:
  description: With memory classes or templates, whether the API server keeps consumable capacity (C(available),
    C(reason)).
  returned: success
  type: dict
shares_modes:
  description: The ConsumableShares modes the driver's kubelet plugins run in (V(memory), V(unlimited), a count).
  returned: success
  type: list
  elements: str
"""

from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import driver_gates
from ansible_collections.dra.gpu.plugins.module_utils.sharing import claim_templates, sharing_config


def shares_problems(kube, plugins, memory_classes, check_gates):
    """Why memory shares cannot work: the API server drops consumable capacity, or the driver does
    not share by memory. Returns (verdict or None, problems)."""
    if not memory_classes:
        return None, []
    verdict = consumable_capacity.availability(kube)
    problems = [] if verdict["available"] else [verdict["reason"]]
    plugin_problem = driver_gates.shares_problem(plugins) if check_gates else None
    return verdict, problems + ([plugin_problem] if plugin_problem else [])


def template_problems(kube, templates, managed_labels, devices, name):
    """Templates the cluster could not take (no namespace, someone else's name, more memory than
    any GPU has) and those to delete first: (changes, problems)."""
    live, _rv = kube.list_resource("resourceclaimtemplates")
    changes = claim_templates.template_changes(templates, live, managed_labels)
    namespaces = set(n["metadata"]["name"] for n in kube.list_all(kube.core.list_namespace)[0])
    missing = sorted(set(t["metadata"]["namespace"] for t in templates) - namespaces)
    problems = changes["problems"] + claim_templates.template_memory_problems(templates, devices, name)
    if missing:
        problems.append("%s: namespace %s does not exist; create it first (the templates go where the pods that "
                        "name them run)" % (name, ", ".join(missing)))
    return changes, problems


def main():
    module = client.kube_module(dict(classes=dict(type="list", elements="dict", required=True),
                                     managed_labels=dict(type="dict", default={}),
                                     mig_layout=dict(type="str", default=""),
                                     check_gates=dict(type="bool", default=True),
                                     variable_name=dict(type="str", default="classes"),
                                     claim_templates=dict(type="list", elements="dict", default=[]),
                                     claim_templates_variable_name=dict(type="str", default="claim_templates")))
    params = module.params
    name, template_name = params["variable_name"], params["claim_templates_variable_name"]
    try:
        classes, gates = sharing_config.device_classes(params["classes"], params["managed_labels"], name)
        templates = claim_templates.claim_templates(params["claim_templates"], params["classes"],
                                                    params["managed_labels"], template_name)
    except sharing_config.SharingConfigError as exc:
        module.fail_json(msg="%s: nothing was applied. Fix: %s" % (name, exc))
    memory_classes = [c for c in classes if c["strategy"] == "memory"]
    try:
        kube = client.Kube(client.api_client(module))
        daemonsets, _rv = kube.list_all(kube.apps.list_daemon_set_for_all_namespaces)
        slices, _rv = kube.slices(sharing_config.DRIVER)
        plugins = driver_gates.kubelet_plugins(daemonsets)
        devices, _problems = slice_devices.devices_from_slices(slices)
        verdict, problems = shares_problems(kube, plugins, memory_classes, params["check_gates"])
        changes, found = template_problems(kube, templates, params["managed_labels"], devices, template_name)
    except client.ApiException as exc:
        module.fail_json(msg="could not read the driver's DaemonSets, ResourceSlices and the claim templates: %s"
                         % client.api_error_message(exc))
    modes = driver_gates.sharing_modes(plugins)
    problems += found + sharing_config.memory_problems(classes, devices, name)
    gate_problem = driver_gates.problem(gates, plugins) if params["check_gates"] else None
    mps_problem = sharing_config.mps_problem(classes, modes) if params["check_gates"] else None
    problems += [p for p in (gate_problem, mps_problem) if p]
    if problems:
        module.fail_json(msg="%s: nothing was applied: %s" % (name, "; ".join(problems)),
                         gates=gates, plugins=plugins, consumable_capacity=verdict)
    replaced = set((d["namespace"], d["name"]) for d in changes["delete"])
    profiles = sorted(set(c["profile"] for c in classes if c["profile"]))
    layout = params["mig_layout"] or ("all-%s" % profiles[0] if len(profiles) == 1 else None)
    for body in memory_classes if modes else []:
        body["enforces"] += "; the driver runs %s" % "; ".join(
            "mode %s: %s" % (mode, sharing_config.shares_mode_words(mode)) for mode in modes)
    module.exit_json(changed=False, gates=gates, plugins=plugins, mig_profiles=profiles, mig_layout=layout,
                     device_classes=[dict((k, c[k]) for k in ("name", "selectors", "config", "labels") if k in c)
                                     for c in classes],
                     sharing=[dict((k, c[k]) for k in ("name", "strategy", "profile", "enforces")) for c in classes],
                     claim_templates=[{"definition": t, "replaced": (t["metadata"]["namespace"], t["metadata"]["name"])
                                       in replaced} for t in templates],
                     claim_templates_delete=changes["delete"],
                     consumable_capacity=verdict, shares_modes=modes)


if __name__ == "__main__":
    main()
