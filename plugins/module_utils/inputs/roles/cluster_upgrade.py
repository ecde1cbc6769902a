# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.cluster_upgrade's variables must be before the role changes anything.

Versions written in full, a repository URL with its {minor}, waits and retries of at least
their minimum, an API host in the inventory and one inventory host per node (pure logic).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs


def problems(values, inventory):
    report = inputs.Problems()
    report.check(inputs.version, "cluster_upgrade_target", values.get("cluster_upgrade_target"), latest=True)
    report.check(inputs.versions_list, "cluster_upgrade_available_versions",
                 values.get("cluster_upgrade_available_versions"))
    report.check(inputs.version, "cluster_upgrade_dra_min_version", values.get("cluster_upgrade_dra_min_version"))
    report.check(inputs.in_inventory, "cluster_upgrade_api_host", [values.get("cluster_upgrade_api_host")], inventory)
    report.check(_repo_url, values.get("cluster_upgrade_repo_url"))
    for option, minimum in (("cluster_upgrade_drain_timeout", 1), ("cluster_upgrade_drain_retry_delay", 1),
                            ("cluster_upgrade_drain_retries", 0),
                            ("cluster_upgrade_drain_grace_period", 0), ("cluster_upgrade_node_ready_timeout", 1),
                            ("cluster_upgrade_api_ready_timeout", 1), ("cluster_upgrade_api_retry_timeout", 0),
                            ("cluster_upgrade_api_retry_delay", 1), ("cluster_upgrade_api_restart_window", 0)):
        if option in values:
            report.check(inputs.integer, option, values[option], minimum)
    node_names = values.get("cluster_upgrade_node_names") or {}
    if node_names:
        report.check(_one_host_per_node, node_names)
    return report.found


def _repo_url(url):
    if url is not None and "{minor}" not in str(url):
        raise inputs.InputError("cluster_upgrade_repo_url is %r, without {minor}: every hop would read the same "
                                "repository; write it like https://pkgs.k8s.io/core:/stable:/v{minor}" % (url,))


def _one_host_per_node(node_names):
    by_node = {}
    for host, node in sorted(node_names.items()):
        by_node.setdefault(node, []).append(host)
    shared = ["%s (%s)" % (node, ", ".join(hosts)) for node, hosts in sorted(by_node.items()) if len(hosts) > 1]
    if shared:
        raise inputs.InputError("cluster_upgrade_node_name gives several inventory hosts the same node: %s; set each "
                                "host's cluster_upgrade_node_name to its own node" % "; ".join(shared))
