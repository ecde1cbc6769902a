#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: input_check
short_description: Check a role's inputs and its connection before the role changes anything
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - The first step of every role of this collection. Checks the role's variables beyond their types (which the
    role's C(meta/argument_specs.yml) checks) - counts and timeouts of at least one, versions written in full
    (V(1.3x) is refused, not read as V(1.3)), names Kubernetes and Helm accept, each DeviceClass once, label
    selectors, inventory hosts that exist.
  - Reports every problem at once, each naming the variable and what to write instead, so a run either fails
    here with nothing changed or goes on with inputs that the later steps accept.
  - With O(connect=true) it also connects as every later step of the role does (the options reach all of them
    through C(module_defaults) for C(group/dra.gpu.k8s), which includes kubernetes.core's C(k8s) and C(helm)
    groups), so a wrong kubeconfig, context, host, certificate or proxy fails here with one message. For
    O(role=gpu_operator) it refuses connection options that Helm cannot take and runs C(helm list) in the
    operator's namespace with exactly the connection C(kubernetes.core.helm) will give Helm (its options and its
    own C(K8S_AUTH_*) variables, over the role's C(helm_environment)), so credentials that reach the Kubernetes
    client but not Helm - a token in C(K8S_AUTH_API_KEY) beside a kubeconfig with a token of its own - fail
    here, naming the setting, before a node is labelled; for O(role=smoke_test) a
    C(smoke_test_node_selector) that matches no node, and for O(role=device_classes) every class the API server
    (by a server-side dry run) or the published devices (a selector that is not true or false for some device,
    no match where C(require_match) asks for one) would refuse, all classes in one run.
  - Every credential of the connection (tokens, passwords, client keys, a password in a proxy's or server's URL,
    from options, C(K8S_AUTH_*) variables or the kubeconfig) is masked in everything it returns, as in every module
    of this collection.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  role:
    description: The role whose inputs these are.
    type: str
    required: true
    choices: [cluster_upgrade, device_classes, gpu_maintenance, gpu_operator, gpu_sharing, preflight, smoke_test,
              workload_migration]
  inputs:
    description: "The role's variables by name, for example C({smoke_test_count: 1, smoke_test_timeout: 300})."
    type: dict
    required: true
  inventory_hosts:
    description: The inventory's hosts (C(groups.all)), for variables that name hosts.
    type: list
    elements: str
    default: []
  connect:
    description: Also check the connection to the Kubernetes API, and what the role reads before its first change.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Check every input before anything changes
  dra.gpu.input_check:
    role: smoke_test
    inputs:
      smoke_test_count: "{{ smoke_test_count }}"
      smoke_test_timeout: "{{ smoke_test_timeout }}"
    inventory_hosts: "{{ groups['all'] }}"
"""

RETURN = r"""
checked:
  description: The inputs that were checked.
  returned: always
  type: list
  elements: str
connection:
  description:
    - The connection settings in effect and where each came from (an option or module_defaults, or an environment
      variable), secrets left out; C(kubeconfig_read) is the kubeconfig the connection reads, or null when host and
      credentials are enough.
  returned: when O(connect=true)
  type: dict
helm_environment:
  description:
    - Environment for the role's Helm steps, so that Helm uses the same connection as the other steps. With host and
      credentials but no kubeconfig it points C(KUBECONFIG) at an empty file, so Helm does not merge an unrelated
      kubeconfig from the environment with them.
  returned: always
  type: dict
  sample: {KUBECONFIG: /dev/null}
problems:
  description: Every problem found, one sentence each.
  returned: failure
  type: list
  elements: str
"""

import os

from ansible_collections.dra.gpu.plugins.module_utils.inputs import connection_options, helm_reach, role_inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client, connection_settings


def main():
    # The libraries are checked only when it connects: the inputs alone need none.
    module = client.kube_module(dict(role=dict(type="str", required=True, choices=list(role_inputs.ROLES)),
                                     inputs=dict(type="dict", required=True),
                                     inventory_hosts=dict(type="list", elements="str", default=[]),
                                     connect=dict(type="bool", default=True)), needs_libraries=False)
    params = module.params
    role, values = params["role"], params["inputs"]
    problems = role_inputs.problems(role, values, params["inventory_hosts"])
    if params["connect"]:
        problems += connection_options.problems(role, params)
    if problems:
        module.fail_json(msg="%s: %d input problem%s, nothing was changed: %s" % (
            role, len(problems), "" if len(problems) == 1 else "s", "; ".join(problems)), problems=problems)
    found = connection_settings.settings(params)
    result = {"changed": False, "checked": sorted(values),
              "helm_environment": {"KUBECONFIG": os.devnull} if found.get("_kubeconfig") is None else {}}
    if params["connect"]:
        client.check_libraries(module)
        kube = client.Kube(client.api_client(module))
        result["connection"] = connection_settings.describe(found)
        refused = role_inputs.cluster_problem(role, kube, values)
        if role == "gpu_operator" and not refused and values.get("gpu_operator_state", "present") == "present":
            refused = _helm_refusal(module, values, result["helm_environment"])
        if refused:
            module.fail_json(msg=refused)
    module.exit_json(**result)


def _helm_refusal(module, values, helm_environment):
    """Helm's answer with the connection kubernetes.core.helm will give it, or a missing helm."""
    helm = values.get("gpu_operator_helm_binary") or module.get_bin_path("helm")
    if not helm:
        return ("gpu_operator: helm is not on PATH and gpu_operator_helm_binary is not set, so the charts cannot be "
                "installed; nothing was changed. To fix: install Helm 3 or set gpu_operator_helm_binary to its path")
    return helm_reach.check(module.run_command, helm, module.get_bin_path("timeout"),
                            values.get("gpu_operator_namespace") or "default", module.params, helm_environment)


if __name__ == "__main__":
    main()
