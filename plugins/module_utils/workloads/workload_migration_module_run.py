# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module gpu_workload_migrate's work: its options and their checks, then one workload
(``name``) or each one a label selector matches, in name order until one fails, each
migrated or reverted by workload_migration_run.Migration; and whether pods that keep
``nvidia.com/gpu`` can be served by DRA here (the extended-resource path), reported with
every result.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.dra.gpu.plugins.module_utils.dra import extended_resource
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_share as shares
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException, api_error_message
from ansible_collections.dra.gpu.plugins.module_utils.workloads.workload_migration_run import Migration, MigrationFailed

# The options of module gpu_workload_migrate (documented there).
ARGUMENT_SPEC = dict(
    kind=dict(type="str", default="Deployment", choices=list(gpu_workloads.WORKLOAD_KINDS)),
    name=dict(type="str"),
    label_selector=dict(type="str"),
    namespace=dict(type="str", required=True),
    state=dict(type="str", choices=["migrated", "reverted"], default="migrated"),
    device_class=dict(type="str", default="gpu.nvidia.com"),
    claim_mode=dict(type="str", choices=["template", "shared"], default="template"),
    claim_name=dict(type="str"),
    timeout=dict(type="int", default=300),
    method=dict(type="str", choices=["claim", "extended_resource"], default="claim"),
    memory=dict(type="str"),
)


def input_problems(params):
    """The problems with the module's options, for inputs.refuse."""
    problems = inputs.Problems()
    if params["name"]:
        problems.check(inputs.dns_subdomain, "name", params["name"], "workload")
    if params["label_selector"]:
        problems.check(inputs.label_selector, "label_selector", params["label_selector"])
    problems.check(inputs.dns_label, "namespace", params["namespace"])
    problems.check(inputs.dns_subdomain, "device_class", params["device_class"], "DeviceClass")
    if params["claim_name"]:
        problems.check(inputs.dns_subdomain, "claim_name", params["claim_name"], "claim")
    problems.check(inputs.seconds, "timeout", params["timeout"])
    if params.get("memory") is not None:
        problems.check(shares.check_memory, "memory", params["memory"])
        if params["method"] == "extended_resource":
            problems.add("memory asks for a share of a card in the claim the workload is rewritten to; method "
                         "extended_resource rewrites nothing. Use method claim, or leave memory unset")
    return problems.found


def run_module(kube, params, check_mode, diff):
    """The module's whole work: one workload (``name``), or each that ``label_selector`` matches
    in name order until one fails. Returns (passed, the keyword arguments of exit_json or fail_json)."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = extended_resource_path(kube)
    if params["method"] == "extended_resource" and not path["available"]:
        return False, dict(msg="the extended-resource path is not available: %s. Nothing was changed."
                           % path["reason"], extended_resource=path)
    if params["name"]:
        passed, result = one(Migration(kube, params), params, check_mode, diff, now, path)
        return passed, (dict(extended_resource=path, **result) if passed else result)
    done = []
    try:
        names = names_matching(kube, params)
    except wm.MigrationRefused as exc:
        return False, dict(msg=str(exc), extended_resource=path)
    for name in names:
        passed, result = one(Migration(kube, dict(params, name=name)), params, check_mode, diff, now, path, done)
        if not passed:
            return False, result
        done.append(dict(result, name=name))
    report = []
    for result in done:
        report += [result["message"]] + result.get("report", [])
    return True, dict(changed=any(r["changed"] for r in done), workloads=done, report=report, extended_resource=path,
                      message="%d %s(s) matched %s" % (len(done), params["kind"], params["label_selector"]))


def extended_resource_path(kube):
    """Whether pods that keep nvidia.com/gpu can be served by DRA here, reported with every result."""
    try:
        return extended_resource.availability(kube)
    except ApiException as exc:
        return {"available": None, "device_class": None,
                "reason": "could not tell whether the API server keeps extendedResourceName: %s"
                          % api_error_message(exc)}


def one(migration, params, check_mode, diff, now, path, done_before=None):
    """One workload's migration or revert: (True, its result) or (False, the failure, with the
    results of those done before)."""
    extra = {"extended_resource": path}
    if done_before is not None:
        extra["workloads"] = done_before
    try:
        if params["state"] == "migrated" and params["method"] == "extended_resource":
            result = migration.on_extended_resource(path["device_class"])
        elif params["state"] == "migrated":
            result = migration.migrate(check_mode, now)
        else:
            result = migration.revert(check_mode)
    except wm.MigrationRefused as exc:
        return False, dict(msg="%s: %s" % (migration.label, exc), changed=bool(done_before), **extra)
    except MigrationFailed as exc:
        return False, dict(msg=str(exc), changed=True, **dict(exc.details, **extra))
    except ApiException as exc:
        return False, dict(msg="%s: the API server answered: %s" % (migration.label, api_error_message(exc)),
                           changed=bool(done_before), **extra)
    if not diff:
        result.pop("diff", None)
    return True, result


def names_matching(kube, params):
    """The names of the workloads of ``params["kind"]`` in the namespace that the label selector matches."""
    wm.check_kind(params["kind"])
    apps = kube.apps
    list_fn = {"Deployment": apps.list_namespaced_deployment, "StatefulSet": apps.list_namespaced_stateful_set,
               "DaemonSet": apps.list_namespaced_daemon_set}[params["kind"]]
    items, _version = kube.list_all(list_fn, namespace=params["namespace"], label_selector=params["label_selector"])
    return sorted(i["metadata"]["name"] for i in items)
