#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: etcd_health
short_description: Wait until a kubeadm cluster's stacked etcd has all its members, a leader, and takes a write
version_added: 0.3.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Runs on a control plane of a kubeadm cluster with stacked etcd (C(/etc/kubernetes/manifests/etcd.yaml)) and asks
    its etcd, through C(etcdctl) inside the node's etcd container (C(crictl exec)), until it is healthy or
    O(timeout) seconds passed.
  - Healthy means every member started and none is a learner, O(members) members when given (one per control
    plane), one leader that every member names, and a put of O(key) that a get reads back and a delete removes.
  - Needs neither the API server nor an etcdctl on the host; cluster_upgrade runs it before and after each
    control plane.
  - On a host without the etcd manifest (external etcd) it checks nothing and returns RV(stacked) false.
  - In check mode the write is left out.
options:
  members:
    description: How many members etcd must have (the cluster's control planes). 0 accepts any number.
    type: int
    default: 0
  key:
    description: The key the write check puts, reads and deletes; keep it outside the API server's C(/registry/).
    type: str
    default: /dra.gpu/etcd-health
  step:
    description: When the check runs, for the messages (for example C(after the upgrade of cp2)).
    type: str
    default: now
  timeout:
    description: Seconds to wait in all.
    type: int
    default: 180
  delay:
    description: Seconds between two looks.
    type: int
    default: 3
"""

EXAMPLES = r"""
- name: Wait until etcd is healthy before the next control plane
  dra.gpu.etcd_health:
    members: 3
    key: /dra.gpu/upgrade-check/cp2
    step: after the upgrade of cp2
    timeout: 180
"""

RETURN = r"""
stacked:
  description: Whether this host runs a kubeadm etcd static pod; false means nothing was checked.
  returned: always
  type: bool
members:
  description: The members, each with C(id), C(name), C(started), C(learner) and C(client_urls).
  returned: when stacked
  type: list
  elements: dict
leader:
  description: The name of the member every member names as its leader.
  returned: when stacked
  type: str
  sample: cp1
write:
  description: The key written, read back and deleted; null in check mode.
  returned: when stacked
  type: str
waited:
  description: Seconds spent until etcd was healthy.
  returned: when stacked
  type: float
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import etcd_health


def main():
    module = AnsibleModule(
        argument_spec=dict(members=dict(type="int", default=0),
                           key=dict(type="str", default="/dra.gpu/etcd-health", no_log=False),
                           step=dict(type="str", default="now"), timeout=dict(type="int", default=180),
                           delay=dict(type="int", default=3)),
        supports_check_mode=True)
    params = module.params
    for name in ("timeout", "delay"):
        if params[name] <= 0:
            module.fail_json(msg="%s must be a positive number of seconds (got %s)" % (name, params[name]))
    if params["members"] < 0:
        module.fail_json(msg="members must be 0 (any) or the number of control planes (got %s)" % params["members"])
    if params["key"].startswith("/registry/"):
        module.fail_json(msg="key %s is under the API server's /registry/; choose a key of your own" % params["key"])
    if not os.path.exists(etcd_health.MANIFEST):
        module.exit_json(changed=False, stacked=False,
                         msg="no %s on this host: etcd is not stacked here, nothing checked" % etcd_health.MANIFEST)
    write = not module.check_mode
    # A value of this run's own, so a stale key from another run cannot pass the read-back.
    value = "%s %s %.3f" % (params["step"], os.uname()[1], time.time())

    def run(argv):
        return module.run_command(argv)

    report, problems, waited = etcd_health.wait_healthy(
        etcd_health.Etcd(run), params["members"], params["key"], value, params["timeout"], params["delay"],
        time.monotonic, time.sleep, write)
    if problems:
        module.fail_json(msg=etcd_health.failure_message(os.uname()[1], params["step"], params["members"],
                                                         params["key"], params["timeout"], problems, write),
                         stacked=True, problems=problems, **report)
    module.exit_json(changed=False, stacked=True, waited=round(waited, 1), **report)


if __name__ == "__main__":
    main()
