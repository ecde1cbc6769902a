# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a cluster ready for DRA? Pure checks over what the API (and the hosts) show.

Each check returns pass, warn or fail with a message and, unless it passed, what to do.
Only fails block; the preflight role stops on them. When the API server is too old the
failing check carries the upgrade path, one minor at a time, from versions.plan.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity, node_rules, versions

PASS, WARN, FAIL = "pass", "warn", "fail"


def _check(name, status, message, fix=None, nodes=None):
    item = {"name": name, "status": status, "message": message}
    if fix:
        item["fix"] = fix
    if nodes:
        item["nodes"] = sorted(nodes)
    return item


def check_server(server_version, nodes, min_version, available, identity=None):
    current, minimum = versions.parse(server_version), versions.parse(min_version)
    if versions.meets(current, minimum):
        return _check("server_version", PASS, "the API server runs %s (at least %s)" % (
            versions.text(current), min_version)), []
    plan = versions.plan(server_version, nodes, min_version, available, dra_min=min_version)
    path = [h["version"] for h in plan["hops"]]
    steps = " -> ".join([versions.text(current)] + path)
    tool = "dra.gpu.cluster_upgrade does this: playbooks/upgrade.yml -e cluster_upgrade_target=%s" % min_version
    if identity and cluster_identity.upgrade_refusal(identity):
        tool = "with %s" % cluster_identity.DISTRIBUTIONS[identity["distribution"]]["upgrade_with"]
    return _check("server_version", FAIL, "the API server runs %s; DRA needs %s or later" % (
        versions.text(current), min_version),
        "upgrade one minor at a time: %s (%s)" % (steps, tool)), plan["hops"]


def check_api(serves_v1):
    if serves_v1:
        return _check("resource_api", PASS, "resource.k8s.io/v1 is served")
    return _check("resource_api", FAIL, "the API server does not serve resource.k8s.io/v1",
                  "run Kubernetes 1.34 or later with the resource.k8s.io/v1 API enabled "
                  "(--runtime-config must not turn it off)")


def check_gpu_nodes(gpu_nodes):
    if gpu_nodes:
        return _check("gpu_nodes", PASS, "%d GPU node(s) found" % len(gpu_nodes), nodes=[n["name"] for n in gpu_nodes])
    return _check("gpu_nodes", FAIL, "no node carries feature.node.kubernetes.io/pci-10de.present=true or "
                  "nvidia.com/gpu.present=true",
                  "deploy Node Feature Discovery (the GPU Operator installs it) or label the GPU nodes")


def check_kubelets(gpu_nodes, min_version):
    minimum = versions.minor_of(versions.parse(min_version))
    old = [n["name"] for n in gpu_nodes if versions.minor_of(versions.parse(n.get("kubelet") or "0.0")) < minimum]
    if not old:
        return _check("kubelet_versions", PASS, "every GPU node's kubelet is at %s or later" % min_version)
    return _check("kubelet_versions", FAIL, "the kubelet on %d GPU node(s) is older than %s" % (len(old), min_version),
                  "upgrade those nodes (dra.gpu.cluster_upgrade upgrades the kubelets after the control plane)", old)


def check_runtimes(gpu_nodes):
    runtime_of = dict((n["name"], n.get("runtime") or "no runtime reported") for n in gpu_nodes)
    findings = [f for f in (node_rules.cdi(n["name"], n.get("runtime")) for n in gpu_nodes) if f]
    blocking = [f for f in findings if f["severity"] == node_rules.BLOCKER]
    if blocking:
        return _check("container_runtime", FAIL, "GPU nodes whose runtime cannot inject devices through CDI: %s" %
                      ", ".join("%s (%s)" % (f["node"], runtime_of[f["node"]]) for f in blocking),
                      blocking[0]["fix"], [f["node"] for f in blocking])
    if findings:
        return _check("container_runtime", WARN, "containerd 1.7 injects CDI devices only when enable_cdi = true",
                      findings[0]["fix"], [f["node"] for f in findings])
    return _check("container_runtime", PASS, "every GPU node's runtime injects CDI devices by default")


def check_cgroups(gpu_nodes, node_facts):
    facts = dict((n["name"], (node_facts.get(n["name"]) or {}).get("cgroup_fs")) for n in gpu_nodes)
    v1 = [name for name, fs in facts.items() if node_rules.cgroup(name, fs)]
    unknown = [name for name, fs in facts.items() if not fs]
    if v1:
        return _check("cgroup_v2", FAIL, "GPU nodes on cgroup v1: %s" % ", ".join(sorted(v1)),
                      node_rules.CGROUP_V1_FIX, v1)
    if unknown:
        return _check("cgroup_v2", WARN, "cgroup version not checked on %d GPU node(s): the hosts were not reachable"
                      " as inventory hosts" % len(unknown),
                      "add the GPU hosts to the inventory (preflight_gpu_hosts) so the role can read "
                      "stat -fc %T /sys/fs/cgroup/", unknown)
    return _check("cgroup_v2", PASS, "every GPU node runs cgroup v2")


def check_device_plugin(gpu_nodes, daemonsets):
    plugin_sets = ["%s/%s" % (d["namespace"], d["name"]) for d in daemonsets if "device-plugin" in d["name"]]
    serving = [n["name"] for n in gpu_nodes if n.get("device_plugin_gpus") not in (None, "", "0")]
    if not plugin_sets and not serving:
        return _check("device_plugin", PASS, "no NVIDIA device plugin hands out GPUs")
    found = []
    if plugin_sets:
        found.append("DaemonSet(s) %s" % ", ".join(sorted(plugin_sets)))
    if serving:
        found.append("nvidia.com/gpu allocatable on %s" % ", ".join(sorted(serving)))
    return _check("device_plugin", WARN, "the NVIDIA device plugin is present (%s)" % "; ".join(found),
                  "migrate node by node: dra.gpu.gpu_operator moves the nodes you select to DRA and keeps the "
                  "device plugin on the others, never both on one node", serving)


def check_distribution(identity):
    """What the distribution means for this collection: a caution wherever a role does not apply
    as on kubeadm (the upgrade, the driver and toolkit of managed node images, k3s/RKE2 containerd)."""
    info = cluster_identity.DISTRIBUTIONS[identity["distribution"]]
    seen = "%s (%s)" % (info["title"], "; ".join(identity["evidence"]))
    if identity["distribution"] == cluster_identity.KUBEADM:
        return _check("distribution", PASS, "%s: every role of dra.gpu applies" % seen)
    skip = "skip dra.gpu.cluster_upgrade: upgrade with %s" % info["upgrade_with"]
    return _check("distribution", WARN, "%s%s" % (seen, ", a managed control plane" if identity["managed"] else ""),
                  "%s; GPU Operator: %s" % (skip, info["operator"]))


def taint_support(rows):
    """{slice_taints, rules} from dra_features.report's rows, or None where either was not probed
    (this identity may not create the probe's object)."""
    slices, rules = dra_features.served(rows, "device_taints"), dra_features.served(rows, "device_taint_rules")
    probed = dict((r["name"], r["probed"]) for r in rows)
    if not (probed["device_taints"] and probed["device_taint_rules"]):
        return None
    return {"slice_taints": slices, "rules": rules}


def check_dra_features(rows, server_version, target_version):
    """Which DRA features the running server serves (dry runs) and the target turns on: told, never
    a blocker (the roles that need one refuse by themselves, naming it)."""
    on = [r["name"] for r in rows if r["on"]]
    off = [r["name"] for r in rows if r["on"] is False]
    coming = [r["name"] for r in rows if r["on"] is False and r["target_on"]]
    message = "%s serves %s; off: %s" % (server_version, ", ".join(on) or "none", ", ".join(off) or "none")
    if coming:
        message += "; on at %s: %s" % (target_version, ", ".join(coming))
    return _check("dra_features", PASS, message)


def check_device_taints(support):
    """Whether the cluster honours device taints (from the dry runs of dra_features): a caution,
    never a blocker, because DRA works without them; what is missing is named with its consequence."""
    if support["slice_taints"] and support["rules"]:
        return _check("device_taints", PASS, "device taints are honoured: taints in ResourceSlices (NVIDIA's health "
                      "check) and DeviceTaintRules (dra.gpu.gpu_maintenance)")
    missing = []
    if not support["slice_taints"]:
        missing.append("the API server drops device taints from ResourceSlices (DRADeviceTaints off: alpha in 1.35), "
                       "so a GPU NVIDIA's health check taints keeps getting claims")
    if not support["rules"]:
        missing.append("it serves no resource.k8s.io/v1 DeviceTaintRules (GA from 1.37), so dra.gpu.gpu_maintenance "
                       "cannot take a single GPU out of service")
    return _check("device_taints", WARN, "; ".join(missing),
                  "upgrade to Kubernetes 1.37 (dra.gpu.cluster_upgrade); until then cordon a node with a broken GPU")


def assess(server_version, serves_v1, nodes, daemonsets, min_version="1.35", node_facts=None, available=None,
           identity=None, probed=None, target=versions.TESTED):
    """Every check, the blockers among them and the upgrade path when the server is too old.
    ``identity``: cluster_identity.identify's verdict (read here from the nodes when not given);
    ``probed``: dra_features.probe's answer (None: the API server was not probed); ``target``: the
    version whose default DRA features are reported beside the running server's."""
    gpu_nodes = [n for n in nodes if n.get("gpu")]
    identity = identity or cluster_identity.identify(server_version, nodes)
    server, path = check_server(server_version, nodes, min_version, available, identity)
    checks = [server, check_api(serves_v1), check_distribution(identity), check_gpu_nodes(gpu_nodes)]
    running = versions.parse(server_version)
    target_version = versions.resolve_target(target, available)
    rows = dra_features.report(running[1], probed, target_version[1]) if serves_v1 else []
    shown = versions.text(running), versions.text(target_version)
    if rows and probed is not None:
        checks.append(check_dra_features(rows, *shown))
        support = taint_support(rows)
        if support is not None:
            checks.append(check_device_taints(support))
    if gpu_nodes:
        checks += [check_kubelets(gpu_nodes, min_version), check_runtimes(gpu_nodes),
                   check_cgroups(gpu_nodes, node_facts or {}), check_device_plugin(gpu_nodes, daemonsets)]
    return {
        "ready": not any(c["status"] == FAIL for c in checks),
        "server_version": versions.text(versions.parse(server_version)),
        "checks": checks,
        "blockers": [c for c in checks if c["status"] == FAIL],
        "cautions": [c for c in checks if c["status"] == WARN],
        "gpu_nodes": sorted(n["name"] for n in gpu_nodes),
        "upgrade_path": path,
        "cluster": identity,
        "dra_features": {"server_version": shown[0], "target_version": shown[1], "features": rows,
                         "lines": dra_features.lines(shown[0], shown[1], rows)},
    }
