# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each role checks of its variables before it changes anything (pure logic).

A role's meta/argument_specs.yml checks types and choices; this checks what types cannot
say: counts of at least one, versions written in full, names Kubernetes and Helm accept,
each class once, hosts that are in the inventory. Every problem of one run is reported at
once, each naming the variable and what to write instead. The checks are the modules' own
(inputs, smoke, gpu_operator_checks) under the role's variable names.

Each role's function (``device_classes(values, inventory)``...) returns the list of its
problems, one sentence each, gathered with inputs.Problems: every check runs at once, in
order, and a refusal is kept instead of stopping the others.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_class as dc
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_checks
from ansible_collections.dra.gpu.plugins.module_utils.sharing import claim_templates, sharing_config
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import redaction
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_share as shares

ROLES = ("cluster_upgrade", "device_classes", "gpu_maintenance", "gpu_operator", "gpu_sharing", "preflight",
         "smoke_test", "workload_migration")

# Connection options kubernetes.core.helm does not take, and the pairs it refuses: with
# group/dra.gpu.k8s extended to kubernetes.core's k8s and helm groups, these would reach
# Helm from module_defaults and fail there, after the nodes were labelled.
NOT_FOR_HELM = ("client_cert", "client_key", "proxy", "no_proxy", "proxy_headers", "username", "password",
                "persist_config", "impersonate_user", "impersonate_groups")
HELM_EXCLUSIVE = (("context", "ca_cert"), ("context", "validate_certs"))
# Roles with kubernetes.core steps (k8s_info, k8s_drain, k8s_exec, k8s, helm): those modules print
# their options at -vvv, and proxy and host are not no_log there, so a password written into
# either URL as an option would reach the output; the dra.gpu modules mask it themselves.
WITH_KUBERNETES_CORE_STEPS = ("cluster_upgrade", "device_classes", "gpu_operator")


def _stripped(values, prefix):
    return dict((k[len(prefix):], v) for k, v in (values or {}).items() if k.startswith(prefix))


def _mappings(listed, root, shape, report):
    """(label, entry) for each mapping in ``listed``; any other entry is a problem in ``report``
    naming it and ``shape`` (what each entry must be)."""
    for index, item in enumerate(listed):
        label = "%s[%d]" % (root, index)
        if isinstance(item, dict):
            yield label, item
        else:
            report.add("%s is %r; each %s" % (label, item, shape))


def device_classes(values, inventory):
    report = inputs.Problems()
    listed = values.get("device_classes_list")
    if values.get("device_classes_state", "present") == "present":
        if not isinstance(listed, list):
            return ["device_classes_list is %r; it must be a list of classes, each with name and selectors" % (listed,)]
        names = [c.get("name") for c in listed if isinstance(c, dict)]
        report.check(inputs.unique, "device_classes_list", names, "class")
        for label, item in _mappings(listed, "device_classes_list", "class is a mapping with name and selectors",
                                     report):
            label = "%s (%s)" % (label, item.get("name")) if item.get("name") else label
            report.check(inputs.dns_subdomain, label + ".name", item.get("name"), "DeviceClass")
            report.check(inputs.strings, label + ".selectors", item.get("selectors"))
            report.check(inputs.labels, label + ".labels", item.get("labels"))
            report.check(_class_config, label, item.get("config"))
    report.check(inputs.label_key, "device_classes_managed_label_key", values.get("device_classes_managed_label_key"))
    report.check(inputs.label_value, "device_classes_managed_label_value",
                 values.get("device_classes_managed_label_key"), values.get("device_classes_managed_label_value"))
    return report.found


def _class_config(label, config):
    try:
        dc.validate_input([], config)
    except dc.DeviceClassError as exc:
        raise inputs.InputError("%s.%s" % (label, exc))


def gpu_operator(values, inventory):
    params = _stripped(values, "gpu_operator_")
    renamed = {"binary_path": "helm_binary"}

    def name(option):
        return "gpu_operator_" + renamed.get(option, option)

    report = inputs.Problems()
    if params.get("state", "present") == "present":
        report.extend(gpu_operator_checks.input_problems(params, name))
    else:
        report.check(inputs.dns_label, name("namespace"), params.get("namespace"))
        report.check(inputs.dns_label, name("dra_driver_namespace"), params.get("dra_driver_namespace"))
        report.check(inputs.helm_release, name("release_name"), params.get("release_name"))
        report.check(inputs.helm_release, name("dra_driver_release_name"), params.get("dra_driver_release_name"))
    report.check(inputs.seconds, "gpu_operator_timeout", params.get("timeout"))
    report.check(inputs.seconds, "gpu_operator_slice_timeout", params.get("slice_timeout"))
    report.check(inputs.seconds, "gpu_operator_eviction_timeout", params.get("eviction_timeout"))
    report.check(_writable_file, "gpu_operator_image_list_file", params.get("image_list_file"))
    return report.found


def _writable_file(option, path):
    """An output file whose directory exists (checked before anything changes, not after)."""
    if not path:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise inputs.InputError("%s is %r: it must be a file in a directory that exists and can be written (%s); "
                                "create the directory or pick another path" % (option, path, directory))


def gpu_sharing(values, inventory):
    """The sharing classes (every entry, all problems at once) and the MIG layout's nodes."""
    present = values.get("gpu_sharing_state", "present") == "present"
    classes = values.get("gpu_sharing_classes") or []
    mig_nodes = values.get("gpu_sharing_mig_nodes") or []
    report = inputs.Problems()
    report.check(inputs.seconds, "gpu_sharing_mig_timeout", values.get("gpu_sharing_mig_timeout"))
    report.check(inputs.strings, "gpu_sharing_mig_nodes", mig_nodes)
    report.check(inputs.unique, "gpu_sharing_mig_nodes", mig_nodes, "node")
    if present:
        report.check(_sharing_classes, classes)
        report.check(_claim_templates, values.get("gpu_sharing_claim_templates") or [], classes)
        report.check(_mig_layout_needed, classes, mig_nodes, values.get("gpu_sharing_mig_layout"))
    return report.found


def _sharing_classes(classes):
    try:
        sharing_config.device_classes(classes)
    except sharing_config.SharingConfigError as exc:
        raise inputs.InputError(str(exc))


def _claim_templates(templates, classes):
    try:
        claim_templates.claim_templates(templates, classes)
    except sharing_config.SharingConfigError as exc:
        raise inputs.InputError(str(exc))


def _mig_layout_needed(classes, mig_nodes, layout):
    profiles = sorted(set(c.get("profile") for c in classes if isinstance(c, dict) and c.get("strategy") == "mig"))
    if mig_nodes and not layout and len(profiles) != 1:
        raise inputs.InputError("gpu_sharing_mig_nodes is set but gpu_sharing_mig_layout is empty and the mig classes "
                                "name %s profiles (%s), so no all-<profile> layout follows from them; set "
                                "gpu_sharing_mig_layout (for example all-balanced)"
                                % (len(profiles), ", ".join(profiles) or "no"))


def smoke_test(values, inventory):
    params = _stripped(values, "smoke_test_")
    report = inputs.Problems()
    report.extend(smoke.input_problems(params, "smoke_test_"))
    report.check(inputs.seconds, "smoke_test_slice_timeout", params.get("slice_timeout"))
    report.check(inputs.label_selector, "smoke_test_wait_node_selector", params.get("wait_node_selector"))
    return report.found


def preflight(values, inventory):
    hosts = values.get("preflight_gpu_hosts") or []
    report = inputs.Problems()
    report.check(inputs.version, "preflight_min_version", values.get("preflight_min_version"))
    report.check(inputs.versions_list, "preflight_available_versions", values.get("preflight_available_versions"))
    report.check(inputs.version, "preflight_target_version", values.get("preflight_target_version", "tested"),
                 latest=True)
    report.check(inputs.strings, "preflight_gpu_hosts", hosts)
    report.check(inputs.unique, "preflight_gpu_hosts", hosts, "host")
    report.check(inputs.in_inventory, "preflight_gpu_hosts", hosts, inventory)
    return report.found


def cluster_upgrade(values, inventory):
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


def helm_connection(connection_params):
    """Connection options that would reach Helm (module_defaults for group/dra.gpu.k8s) but that
    kubernetes.core.helm cannot take: refused before the role changes anything."""
    given = [o for o in NOT_FOR_HELM if connection_params.get(o) not in (None, "", [], {})]
    found = []
    if given:
        found.append(
            "the connection option%s %s (a task option or module_defaults for group/dra.gpu.k8s) cannot reach Helm: "
            "kubernetes.core.helm takes only kubeconfig, context, host, api_key, ca_cert and validate_certs, and the "
            "role installs the charts with it; put %s into a kubeconfig and pass kubeconfig (and context) instead"
            % ("s" if len(given) > 1 else "", ", ".join(given), "them" if len(given) > 1 else "it"))
    for first, second in HELM_EXCLUSIVE:
        if connection_params.get(first) and connection_params.get(second) is not None:
            found.append(
                "the connection options %s and %s are set together, which kubernetes.core.helm refuses; drop %s and "
                "keep it in the kubeconfig of that context (certificate-authority, insecure-skip-tls-verify)"
                % (first, second, second))
    return found


def credentials_in_urls(connection_params, skip=()):
    """A password written into the proxy or host URL given as an option: refused in roles whose
    kubernetes.core steps would print it, with the two ways that keep it out of the output.
    ``skip``: options refused already for another reason (gpu_operator's NOT_FOR_HELM)."""
    found = []
    for option in [o for o in redaction.URL_OPTIONS if o not in skip]:
        value = connection_params.get(option)
        if redaction.url_credentials(value):
            found.append(
                "the connection option %s (a task option or module_defaults for group/dra.gpu.k8s) carries a password "
                "in its URL (%s); this role's kubernetes.core steps print their %s option at -vvv, so the password "
                "would appear in the output. To fix: %s" % (option, redaction.url(value), option, (
                    "write proxy without it and put user:password into proxy_headers: {proxy_basic_auth: ...}, "
                    "which every module masks, or set K8S_AUTH_PROXY in the environment instead"
                    if option == "proxy" else "connect with a token (api_key) or a kubeconfig instead")))
    return found


def workload_migration(values, inventory):
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
    for label, item in _mappings(listed, "workload_migration_workloads",
                                 "workload is a mapping with namespace and name (or label_selector)", report):
        report.check(_one_workload, label, item)
    return report.found


METHODS = ("claim", "extended_resource")


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


def gpu_maintenance(values, inventory):
    state = values.get("gpu_maintenance_state", "out_of_service")
    chosen = [values.get("gpu_maintenance_" + k) for k in ("devices", "uuids", "selector")]
    report = inputs.Problems()
    report.check(inputs.seconds, "gpu_maintenance_timeout", values.get("gpu_maintenance_timeout"))
    if state == "out_of_service" and not any(chosen):
        report.add("gpu_maintenance_state is out_of_service but no GPU is chosen: set gpu_maintenance_devices "
                   "(e.g. [{node: node-b, device: gpu-2}]), gpu_maintenance_uuids or gpu_maintenance_selector")
    if values.get("gpu_maintenance_reason"):
        report.check(inputs.label_value, "gpu_maintenance_reason", "the taint's value", values["gpu_maintenance_reason"])
    return report.found


def _fail(message):
    raise inputs.InputError(message)


def problems(role, values, inventory=()):
    """Every problem with ``values`` (the role's variables) as sentences; [] when all is well."""
    if role not in ROLES:
        return ["role must be one of %s, not %r" % (", ".join(ROLES), role)]
    return globals()[role](values or {}, list(inventory or []))
