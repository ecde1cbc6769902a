# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dra.gpu.workload_migration's variables must be before the role changes anything.

At least one workload, each entry a mapping that names one workload of a kind that can move
(by name or label selector) with a method, claim mode and memory share the migration takes
(pure logic).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_share as shares

METHODS = ("claim", "extended_resource")


def problems(values, inventory):
    listed = values.get("workload_migration_workloads")
    if not isinstance(listed, list) or not listed:
        return ["workload_migration_workloads is %r; list the workloads to move, each with namespace and name (or "
                "label_selector), e.g. [{namespace: ml, name: llm}]" % (listed,)]
    report = inputs.Problems()
    report.check(inputs.dns_subdomain, "workload_migration_device_class", values.get("workload_migration_device_class"),
                 "DeviceClass")
    report.check(inputs.seconds, "workload_migration_timeout", values.get("workload_migration_timeout"))
    if values.get("workload_migration_memory") not in (None, ""):
        report.check(shares.check_memory, "workload_migration_memory", values["workload_migration_memory"])
    for label, item in inputs.mappings(listed, "workload_migration_workloads",
                                       "workload is a mapping with namespace and name (or label_selector)", report):
        report.check(_one_workload, label, item)
    return report.found


def _one_workload(label, item):
    unknown = sorted(set(item) - set(("kind", "namespace", "name", "label_selector", "device_class", "claim_mode",
                                      "claim_name", "method", "memory")))
    if unknown:
        _fail("%s has %s, which a workload entry does not take; use kind, namespace, name or label_selector, "
              "device_class, claim_mode, claim_name, method, memory" % (label, ", ".join(unknown)))
    if item.get("memory") not in (None, ""):
        shares.check_memory(label + ".memory", item["memory"])
    if bool(item.get("name")) == bool(item.get("label_selector")):
        _fail("%s needs exactly one of name and label_selector" % label)
    inputs.dns_label(label + ".namespace", item.get("namespace"))
    if item.get("name"):
        inputs.dns_subdomain(label + ".name", item["name"], "workload")
    else:
        inputs.label_selector(label + ".label_selector", item["label_selector"])
    kind = item.get("kind", "Deployment")
    if kind not in wm.MIGRATABLE_KINDS:
        _fail("%s.kind is %r; %s" % (label, kind, wm.NOT_MIGRATABLE.get(kind, "use one of " + ", ".join(
            wm.MIGRATABLE_KINDS))))
    if item.get("device_class"):
        inputs.dns_subdomain(label + ".device_class", item["device_class"], "DeviceClass")
    if item.get("method", "claim") not in METHODS:
        _fail("%s.method is %r; use claim (rewrite to a claim) or extended_resource (keep nvidia.com/gpu, served "
              "by DRA where the cluster offers it)" % (label, item.get("method")))
    if item.get("claim_mode", "template") not in wm.CLAIM_KINDS:
        _fail("%s.claim_mode is %r; use template (a claim per pod) or shared (one claim for all its pods)"
              % (label, item.get("claim_mode")))


def _fail(message):
    raise inputs.InputError(message)
