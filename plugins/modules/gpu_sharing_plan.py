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
  - Validates a list of sharing classes (time-slicing, MPS, MIG) and renders each as a DeviceClass whose C(spec.config)
    carries NVIDIA's opaque config (C(resource.nvidia.com/v1beta1) C(GpuConfig) or C(MigDeviceConfig)).
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
"""

EXAMPLES = r"""
- name: Render and check the sharing classes
  dra.gpu.gpu_sharing_plan:
    classes:
      - {name: nvidia-gpu-timesliced, strategy: time_slicing, interval: Default}
      - {name: nvidia-gpu-mps, strategy: mps, mps: {active_thread_percentage: 50, pinned_memory_limit: 8Gi}}
      - {name: nvidia-mig-1g, strategy: mig, profile: 1g.10gb}
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
  description: Per class its C(name), C(strategy), C(profile) (MIG) and C(enforces) - what the strategy enforces, in words.
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
"""

from ansible_collections.dra.gpu.plugins.module_utils import client, driver_gates, inventory, sharing_config


def main():
    module = client.kube_module(dict(classes=dict(type="list", elements="dict", required=True),
                                     managed_labels=dict(type="dict", default={}),
                                     mig_layout=dict(type="str", default=""),
                                     check_gates=dict(type="bool", default=True),
                                     variable_name=dict(type="str", default="classes")))
    params = module.params
    try:
        classes, gates = sharing_config.device_classes(params["classes"], params["managed_labels"],
                                                       params["variable_name"])
    except sharing_config.SharingConfigError as exc:
        module.fail_json(msg="%s: nothing was applied. Fix: %s" % (params["variable_name"], exc))
    try:
        kube = client.Kube(client.api_client(module))
        daemonsets, _rv = kube.list_all(kube.apps.list_daemon_set_for_all_namespaces)
        slices, _rv = kube.slices(sharing_config.DRIVER)
    except client.ApiException as exc:
        module.fail_json(msg="could not read the driver's DaemonSets and ResourceSlices: %s"
                         % client.api_error_message(exc))
    plugins = driver_gates.kubelet_plugins(daemonsets)
    devices, _problems = inventory.devices_from_slices(slices)
    problems = sharing_config.memory_problems(classes, devices, params["variable_name"])
    gate_problem = driver_gates.problem(gates, plugins) if params["check_gates"] else None
    if gate_problem:
        problems.append(gate_problem)
    if problems:
        module.fail_json(msg="%s: nothing was applied: %s" % (params["variable_name"], "; ".join(problems)),
                         gates=gates, plugins=plugins)
    profiles = sorted(set(c["profile"] for c in classes if c["profile"]))
    layout = params["mig_layout"] or ("all-%s" % profiles[0] if len(profiles) == 1 else None)
    module.exit_json(changed=False, gates=gates, plugins=plugins, mig_profiles=profiles, mig_layout=layout,
                     device_classes=[dict((k, c[k]) for k in ("name", "selectors", "config", "labels") if k in c)
                                     for c in classes],
                     sharing=[dict((k, c[k]) for k in ("name", "strategy", "profile", "enforces")) for c in classes])


if __name__ == "__main__":
    main()
