#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: api_ready
short_description: Wait until a restarted API server serves authorized requests
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Waits until the API server's C(/readyz) passes (etcd, informers, the RBAC bootstrap) and an authorized read
    with the module's credentials succeeds; used after a step that restarts control-plane components
    (C(kubeadm upgrade apply), C(kubeadm upgrade node) on a control plane, a kubelet restart on a control plane).
  - Rides out refused connections, 5xx, 429 and the 401/403 answers of an API server whose authorizer is not ready yet.
  - Fails fast, without waiting for O(timeout), when the API server is ready but keeps refusing the credentials
    for O(auth_grace) seconds (a real RBAC refusal), and names what it waited for when it times out.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - dra.gpu.read_only
options:
  node:
    description: The node to read as the authorized read. Empty lists one node instead.
    type: str
  timeout:
    description: Seconds to wait in all.
    type: int
    default: 300
  auth_grace:
    description:
      - Seconds a ready API server may keep answering 401/403 before that counts as a real refusal. Covers a
        load balancer that still sends a request to a second API server that is not ready yet.
    type: int
    default: 10
"""

EXAMPLES = r"""
- name: Wait for the API server after kubeadm upgrade apply
  dra.gpu.api_ready:
    node: cp1
    timeout: 300
"""

RETURN = r"""
elapsed:
  description: Seconds spent waiting.
  returned: always
  type: float
probes:
  description: How many times C(/readyz) was asked.
  returned: success
  type: int
rode_out:
  description: The states the API server went through before it was ready, in order.
  returned: success
  type: list
  elements: str
  sample: ["refused: MaxRetryError", "not ready (500): poststarthook/rbac/bootstrap-roles, informer-sync"]
ready_at:
  description: Seconds since the epoch when it was ready; roles open their restart window from it.
  returned: success
  type: float
"""

import time

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_ready, client


def main():
    module = client.kube_module(dict(node=dict(type="str"), timeout=dict(type="int", default=300),
                                     auth_grace=dict(type="int", default=10)))
    params = module.params
    for name in ("timeout", "auth_grace"):
        if params[name] < 0 or (name == "timeout" and params[name] == 0):
            module.fail_json(msg="%s must be a positive number of seconds (got %s)" % (name, params[name]))
    started = time.monotonic()
    kube = client.Kube(client.api_client(module, rides_out_restarts=True))
    readyz, authorized_read = api_ready.kube_probes(kube, params["node"])
    try:
        result = api_ready.wait_ready(readyz, authorized_read, params["timeout"], params["auth_grace"])
    except (api_ready.NotReady, api_ready.Refused) as exc:
        module.fail_json(msg=str(exc), elapsed=round(time.monotonic() - started, 3))
    module.exit_json(changed=False, ready_at=time.time(), **result)


if __name__ == "__main__":
    main()
