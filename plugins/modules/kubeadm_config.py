#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: kubeadm_config
short_description: Read which kubeadm API a host's configuration files use, and migrate v1beta3 ones to v1beta4
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - Runs on the host that keeps the files. Reads each of O(paths) (a missing one is reported, not an error) and
    returns the C(kubeadm.k8s.io) API versions its documents are written in.
  - With O(migrate), each file holding a v1beta3 document is rewritten as v1beta4 by the host's own kubeadm
    (C(kubeadm config migrate --old-config <file> --new-config <temporary file>)); the original is kept beside it as
    C(<file>.<YYYYmmddTHHMMSS>.v1beta3). A file without v1beta3 is left alone.
  - kubeadm 1.37 removed v1beta3 and cannot migrate it any more, so this runs before the 1.37 hop, with kubeadm 1.31
    to 1.36 on the host; the dra.gpu.cluster_upgrade role does it when C(cluster_upgrade_migrate_kubeadm_config) is
    true (dra.gpu.upgrade_plan blocks the 1.37 hop otherwise).
  - The new file is checked (v1beta4, no v1beta3) before anything is replaced; a refusal of kubeadm fails naming the
    file and kubeadm's words, and changes nothing.
  - kubeadm writes its defaults into the new file (timeouts, taints, and a freshly generated bootstrap token in an
    InitConfiguration that had none); compare it with the backup before using it for C(kubeadm init).
attributes:
  check_mode:
    support: full
    description: Reports which files would be migrated and where their backups would go; writes nothing.
  diff_mode:
    support: full
    description: The file before and after (after only when migrated for real), with bootstrap and discovery tokens
      and the certificate key written as C(***).
options:
  paths:
    description: kubeadm configuration files on this host (those a site passes with C(--config)).
    type: list
    elements: path
    required: true
  migrate:
    description: Migrate the files that hold v1beta3. False only reads.
    type: bool
    default: false
  kubeadm:
    description: The kubeadm binary to migrate with (its version decides what it can read).
    type: path
    default: kubeadm
"""

EXAMPLES = r"""
- name: Which kubeadm API the site's configuration uses
  dra.gpu.kubeadm_config:
    paths: [/etc/kubernetes/kubeadm-config.yaml]
  register: kubeadm_files

- name: Migrate it to v1beta4 before the 1.37 hop, keeping the original beside it
  dra.gpu.kubeadm_config:
    paths: [/etc/kubernetes/kubeadm-config.yaml]
    migrate: true
  become: true
"""

RETURN = r"""
files:
  description:
    - One entry per path - C(path), C(exists), C(api_versions) (kubeadm's, e.g. V(v1beta4)), C(migrated) (true when
      it was rewritten, or would be in check mode) and C(backup) (where the original went, or would go).
  returned: always
  type: list
  elements: dict
  sample: [{path: /etc/kubernetes/kubeadm-config.yaml, exists: true, api_versions: [v1beta4], migrated: true,
            backup: /etc/kubernetes/kubeadm-config.yaml.20261206T231500.v1beta3}]
"""

import datetime

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import kubeadm_config


def main():
    module = AnsibleModule(argument_spec=dict(paths=dict(type="list", elements="path", required=True),
                                              migrate=dict(type="bool", default=False),
                                              kubeadm=dict(type="path", default="kubeadm")),
                           supports_check_mode=True)
    params = module.params
    if not params["migrate"]:
        files = [dict(kubeadm_config.read_file(path), migrated=False, backup=None) for path in params["paths"]]
        module.exit_json(changed=False, files=files)
    now = datetime.datetime.now()
    files, diffs = [], []

    def run(argv):
        return module.run_command(argv)

    for path in params["paths"]:
        try:
            state = kubeadm_config.migrate(path, run, now, params["kubeadm"], module.check_mode)
        except (kubeadm_config.MigrationError, OSError) as exc:
            module.fail_json(msg="%s was not migrated, nothing of it changed: %s (to fix: run kubeadm 1.31 to 1.36 "
                                 "on this host, set kubeadm to such a binary, or migrate the file by hand)"
                                 % (path, exc), files=files)
        if state["changed"]:
            # Tokens and the certificate key are masked: a diff ends up in logs.
            diffs.append({"before_header": path, "before": kubeadm_config.masked(state["before"]),
                          "after_header": "%s (v1beta4)" % path, "after": kubeadm_config.masked(state["after"])})
        files.append({"path": path, "exists": state["exists"], "api_versions": state["api_versions"],
                      "migrated": state["changed"], "backup": state["backup"]})
    result = {"changed": any(f["migrated"] for f in files), "files": files}
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
