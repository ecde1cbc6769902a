#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: device_class
short_description: Manage a DRA DeviceClass, validated by the API server and previewed against live devices
version_added: 0.1.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Creates, updates or deletes a DeviceClass (C(resource.k8s.io/v1)).
  - Writes the class by server-side apply with the field manager C(dra.gpu), conflicts forced. The applied
    class holds only the name, O(labels) and the spec, so annotations and labels other managers set are kept,
    and forcing only takes back those fields. A label this module applied earlier and O(labels) no longer
    names is removed.
  - Before applying, a server-side dry-run apply validates the class, so a bad CEL expression fails with the
    API server's own message and nothing is created. The class is applied only when that dry run differs from
    the live class (its content, or the fields C(dra.gpu) owns), so a second run changes nothing.
  - The API server does not check attribute names, so a class that was accepted may still match nothing.
    This module previews which live devices the class matches by evaluating its selectors locally (cel-python
    plus Kubernetes' C(device) variable, quantity and semver functions) and returns RV(matched_devices).
    With O(require_match=true) it fails, before changing anything, when nothing matches, and lists what the
    drivers do publish. Where the preview cannot evaluate an expression it says so instead of guessing.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
options:
  name:
    description: Name of the DeviceClass.
    type: str
    required: true
  state:
    description: Whether the class should exist.
    type: str
    choices: [present, absent]
    default: present
  selectors:
    description:
      - CEL expressions over C(device); a device belongs to the class when all of them are true.
      - For example V(device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu').
    type: list
    elements: str
    default: []
  config:
    description:
      - Driver configuration passed to every claim of this class, as in C(spec.config).
      - "Each entry looks like C({opaque: {driver: gpu.nvidia.com, parameters: {...}}})."
    type: list
    elements: dict
  extended_resource_name:
    description:
      - Let pods request this class through an extended resource (C(spec.extendedResourceName)), for example
        V(example.com/gpu).
      - Refused with an explanation where the API server does not keep the field (Kubernetes 1.35 without
        the C(DRAExtendedResource) feature gate).
    type: str
  labels:
    description:
      - Labels to set on the class. Labels set by others are kept; a label this module set earlier and no longer
        listed here is removed.
    type: dict
  require_match:
    description:
      - Fail, before changing anything, when the preview finds no live device matching the class, when every
        device it matches is tainted NoSchedule or NoExecute (out of service), or when the preview cannot evaluate
        the selectors.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Validates with a server-side dry-run apply and previews matches, without changing the cluster.
  diff_mode:
    support: full
    description: Shows the class before and after (metadata without the server's bookkeeping, and the spec).
requirements:
  - kubernetes >= 34.1.0
  - cel-python >= 0.5.0
"""

EXAMPLES = r"""
- name: A class for any full NVIDIA GPU, which must match something
  dra.gpu.device_class:
    name: gpu.nvidia.com
    selectors:
      - device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'
    require_match: true

- name: GPUs with at least 16Gi of memory
  dra.gpu.device_class:
    name: gpu-16gi
    selectors:
      - device.driver == 'gpu.nvidia.com'
      - device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('16Gi')) >= 0

- name: MIG slices of one profile
  dra.gpu.device_class:
    name: mig-1g
    selectors:
      - >-
        device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' &&
        device.attributes['gpu.nvidia.com'].profile == '1g.5gb'

- name: Remove a class
  dra.gpu.device_class:
    name: gpu-16gi
    state: absent
"""

RETURN = r"""
device_class:
  description:
    - The DeviceClass as the API server returned it (the dry-run apply's result in check mode or when nothing
      changed).
  returned: when O(state=present)
  type: dict
matched_devices:
  description:
    - Live devices the class matches, by the local preview; V(null) when the preview could not evaluate the selectors.
  returned: when O(state=present)
  type: list
  elements: dict
  sample:
    - {node: node-a, driver: gpu.nvidia.com, pool: node-a, name: gpu-0, model: NVIDIA A10, memory: 23028Mi,
       tainted: false, taints: []}
preview:
  description:
    - C(evaluated) (false, with C(reason), when the expressions use something the local preview cannot evaluate),
      C(devices_considered) and C(runtime_errors) (devices on which an expression fails at run time, which
      leaves pods Pending on a real cluster).
    - C(only_tainted) is true, with a C(note) naming the devices and their taints, when every device the class matches
      is tainted NoSchedule or NoExecute (a health taint of its driver, a DeviceTaintRule), so no claim without
      tolerations gets one; O(require_match) then fails.
  returned: when O(state=present)
  type: dict
"""

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.dra import device_class as dc


def _input_problems(params):
    problems = inputs.Problems()
    problems.check(inputs.dns_subdomain, "name", params["name"], "DeviceClass")
    problems.check(inputs.strings, "selectors", params["selectors"])
    problems.check(inputs.labels, "labels", params["labels"])
    return problems.found


def main():
    module = client.kube_module(
        dict(name=dict(type="str", required=True),
             state=dict(type="str", choices=["present", "absent"], default="present"),
             selectors=dict(type="list", elements="str", default=[]),
             config=dict(type="list", elements="dict"),
             extended_resource_name=dict(type="str"),
             labels=dict(type="dict"),
             require_match=dict(type="bool", default=False)),
        checks=_input_problems)
    params = module.params
    try:
        kube = client.Kube(client.api_client(module))
        classes = dc.DeviceClasses(kube)
        if params["state"] == "absent":
            live = classes.get(params["name"])
            if live is not None:
                classes.delete(params["name"], dry_run=module.check_mode)
            module.exit_json(changed=live is not None,
                             diff={"before": dc.content(live) or {}, "after": {}})
        found = dc.check(kube, params["name"], params["selectors"], params["config"],
                         params["extended_resource_name"], params["labels"], params["require_match"])
        applied = found["dry"]
        if found["changed"] and not module.check_mode:
            applied = classes.apply(found["body"], dry_run=False)
    except dc.DeviceClassError as exc:
        module.fail_json(msg=str(exc), **exc.details)
    except client.ApiException as exc:
        module.fail_json(msg="DeviceClass %s: %s" % (params["name"], client.api_error_message(exc)))
    module.exit_json(changed=found["changed"], device_class=applied, matched_devices=found["preview"]["matched_devices"],
                     preview=found["preview"],
                     diff={"before": dc.content(found["live"]) or {}, "after": dc.content(found["dry"])})


if __name__ == "__main__":
    main()
