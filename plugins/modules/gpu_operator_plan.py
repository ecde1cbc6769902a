#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# DOCUMENTATION, EXAMPLES and RETURN are in gpu_operator_plan.yml beside this file (ansible-core's
# sidecar documentation): its 30 options and 18 return values take five times the lines of its code.

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_handover, helm_charts
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity
from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity
from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_reading as reading
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_checks
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov


def _input_problems(params):
    problems = inputs.Problems()
    problems.extend(gpu_operator_checks.input_problems(params))
    problems.check(inputs.seconds, "helm_timeout", params["helm_timeout"])
    return problems.found


def main():
    module = client.kube_module(gpu_operator_checks.ARGUMENT_SPEC, checks=_input_problems)
    params = module.params
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
        problems = gpu_operator_checks.check_cluster(server_version, kube.serves_resource_v1(),
                                                     params["min_kubernetes_version"], params["dra_enabled"])
        if params["dra_consumable_shares"] and not problems:
            problems = shares_refusals(kube)
        if problems:
            raise catalog.PlanError("refused before installing anything: " + "; ".join(problems))
        cluster, values = reading.distribution(kube, server_version, read["summaries"], params)
        installed = reading.installed_dra_driver(kube, params["dra_driver_namespace"], params["dra_driver_release_name"])
        result = gov.plan_for(params, read["gpu_nodes"], values, installed, read["gpu_node_labels"])
        patches = gov.node_patches(read["nodes"], result["dra_nodes"], result["layout"] != "gpucluster")
        moving, returning = gov.moving_nodes(patches), gov.returning_nodes(patches)
        # Only the nodes this run moves: pods on nodes left alone, or on DRA already, block nothing.
        holders = reading.device_plugin_holders(kube, moving)
        refusal = gpu_handover.move_refusal(holders)
        if refusal and not params["evict_device_plugin_pods"]:
            module.fail_json(msg=refusal, device_plugin_holders=holders, moving_to_dra=moving)
        held, refusal = reading.claims_on_returning_nodes(kube, returning)
        if refusal:
            module.fail_json(msg=refusal, allocated_claims=held, moving_to_device_plugin=returning)
        helm = params["binary_path"] or module.get_bin_path("helm", required=params["check_charts"])
        checked, crds = helm_charts.check_planned(module.run_command, module.get_bin_path("timeout"), helm, params,
                                                  result, catalog.OPERATOR_CHART)
        result["notes"] += [note for note in [cluster_identity.operator_note(cluster)] if note]
    except (catalog.PlanError, helm_charts.ChartError) as exc:
        module.fail_json(msg=str(exc))
    except client.ApiException as exc:
        module.fail_json(msg="could not read the cluster: %s" % client.api_error_message(exc))
    module.exit_json(changed=False, server_version=server_version, gpu_nodes=read["gpu_nodes"], charts_checked=checked,
                     device_plugin_holders=holders, dra_driver_crds=crds, cluster=cluster,
                     node_patches=patches, moving_to_dra=moving, moving_to_device_plugin=returning,
                     **result)


def shares_refusals(kube):
    """Why memory shares cannot work here: the API server drops consumable capacity (a dry run),
    or live DeviceClasses carry MPS, which the driver refuses while ConsumableShares is on."""
    problems = []
    verdict = consumable_capacity.availability(kube)
    if not verdict["available"]:
        problems.append("gpu_operator_dra_consumable_shares: " + verdict["reason"])
    classes, _rv = kube.list_resource("deviceclasses")
    refusal = sharing_config.live_mps_refusal(classes, "gpu_operator_dra_consumable_shares")
    if refusal:
        problems.append(refusal)
    return problems


if __name__ == "__main__":
    main()
