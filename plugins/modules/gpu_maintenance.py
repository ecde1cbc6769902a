#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_maintenance
short_description: Take chosen GPUs out of service and back with DeviceTaintRules of its own
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Used by the gpu_maintenance role. Chooses devices published by NVIDIA's DRA driver (C(gpu.nvidia.com)) by node
    and device name (O(devices)), by UUID (O(uuids)) or by attribute values (O(selector)), and gives each a
    C(DeviceTaintRule) (C(resource.k8s.io/v1), Kubernetes 1.37+) named C(dra-gpu-maintenance-<pool>-<device>),
    labelled C(app.kubernetes.io/managed-by=dra.gpu.gpu_maintenance), tainting it C(dra.gpu/maintenance).
  - O(effect=NoSchedule) keeps new claims off the devices; pods already there keep running.
    O(effect=NoExecute) also has kube-controller-manager's device-taint eviction controller delete the pods that
    use them. That controller does not ask PodDisruptionBudgets, so this module asks first, as the Eviction API
    would; a budget that allows no disruption of one of those pods fails the module, naming it, before any
    change. It then waits, with a watch, until no pod uses the devices.
  - O(state=in_service) deletes this module's rules on the chosen devices (all of its rules when none is
    chosen); rules made by others are never touched, and a rule of the same name that is not this module's is
    refused.
  - On a cluster that serves no C(resource.k8s.io/v1) DeviceTaintRules (Kubernetes 1.35 and 1.36) it fails
    before any change, naming the fix; learned from a server-side dry run, not from the version.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: full
    description: Reports the rules it would create, update or delete and the pods it would evict; changes nothing.
  diff_mode:
    support: full
    description: This module's rules before and after, as C(<pool>/<device> <effect>).
requirements:
  - kubernetes >= 34.1.0
options:
  state:
    description: V(out_of_service) taints the chosen devices; V(in_service) removes this module's taints from them.
    type: str
    choices: [out_of_service, in_service]
    default: out_of_service
  devices:
    description: Devices by node and device name, as C(dra.gpu.resource_slice_info) lists them.
    type: list
    elements: dict
    default: []
    suboptions:
      node:
        description: The node the device is on (its pool).
        type: str
        required: true
      device:
        description: The device's name, for example C(gpu-2) or a MIG device's name.
        type: str
        required: true
  uuids:
    description: Devices by their C(uuid) attribute (C(GPU-...) or C(MIG-...), as C(nvidia-smi -L) prints them).
    type: list
    elements: str
    default: []
  selector:
    description:
      - "Devices whose attributes all have these values, for example C({productName: NVIDIA L4}) or
        C({driverVersion: 580.126.20}); names without the C(gpu.nvidia.com/) prefix."
    type: dict
    default: {}
  effect:
    description: V(NoSchedule) keeps new claims off; V(NoExecute) also evicts the pods using the devices.
    type: str
    choices: [NoSchedule, NoExecute]
    default: NoSchedule
  reason:
    description: The taint's value, shown wherever the taint is (a ticket number); at most 63 characters.
    type: str
  timeout:
    description: Seconds to wait, with O(effect=NoExecute), until no pod uses the devices.
    type: int
    default: 300
"""

EXAMPLES = r"""
- name: Keep new work off node-b's gpu-2 (an XID 79 keeps coming back)
  dra.gpu.gpu_maintenance:
    devices: [{node: node-b, device: gpu-2}]
    reason: ticket-4711

- name: Then move its pods off, honouring their PodDisruptionBudgets
  dra.gpu.gpu_maintenance:
    devices: [{node: node-b, device: gpu-2}]
    effect: NoExecute
    timeout: 600

- name: Back in service once the card was replaced
  dra.gpu.gpu_maintenance:
    state: in_service
    devices: [{node: node-b, device: gpu-2}]
"""

RETURN = r"""
devices:
  description: The devices chosen.
  returned: success
  type: list
  elements: dict
  sample: [{node: node-b, device: gpu-2, uuid: GPU-0b0d7e5c-6a4f-5a43-8a1e-0c4b8d2c1f11}]
created:
  description: The DeviceTaintRules created (in check mode, that would be).
  returned: success
  type: list
  elements: str
updated:
  description: The rules changed (another effect or reason).
  returned: success
  type: list
  elements: str
deleted:
  description: The rules deleted.
  returned: success
  type: list
  elements: str
evicted:
  description: With O(effect=NoExecute), the pods that used the devices (namespace, name, node, devices).
  returned: success
  type: list
  elements: dict
budgets:
  description: The PodDisruptionBudgets (namespace/name) that allowed no disruption.
  returned: when a budget refused
  type: list
  elements: str
pods:
  description: The pods a budget guards, or the pods still there when the wait timed out.
  returned: failure
  type: list
  elements: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, watch
from ansible_collections.dra.gpu.plugins.module_utils.workloads.gpu_maintenance import MaintenanceRefused
from ansible_collections.dra.gpu.plugins.module_utils.workloads.gpu_maintenance_run import GpuMaintenance


def _chosen(params):
    if params["state"] == "out_of_service" and not (params["devices"] or params["uuids"] or params["selector"]):
        raise inputs.InputError("state out_of_service needs the GPUs to take out: devices, uuids or selector")


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.seconds, "timeout", params["timeout"])
    problems.check(inputs.strings, "uuids", params["uuids"])
    problems.check(inputs.unique, "uuids", params["uuids"], "UUID")
    if params["reason"] is not None:
        problems.check(inputs.label_value, "reason", "reason", params["reason"])
    problems.check(_chosen, params)
    return problems.found


def main():
    module = client.kube_module(
        dict(state=dict(type="str", choices=["out_of_service", "in_service"], default="out_of_service"),
             devices=dict(type="list", elements="dict", default=[],
                          options=dict(node=dict(type="str", required=True), device=dict(type="str", required=True))),
             uuids=dict(type="list", elements="str", default=[]),
             selector=dict(type="dict", default={}),
             effect=dict(type="str", choices=["NoSchedule", "NoExecute"], default="NoSchedule"),
             reason=dict(type="str"),
             timeout=dict(type="int", default=300)),
        checks=_input_problems)
    params = module.params
    try:
        result = GpuMaintenance(client.Kube(client.api_client(module))).run(
            params["state"], params["devices"], params["uuids"], params["selector"], params["effect"],
            params["reason"], params["timeout"], module.check_mode)
    except MaintenanceRefused as exc:
        module.fail_json(msg=str(exc), **exc.details)
    except watch.WaitTimeout as exc:
        module.fail_json(msg=str(exc))
    except client.ApiException as exc:
        module.fail_json(msg="could not change the GPUs' DeviceTaintRules: %s" % client.api_error_message(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
