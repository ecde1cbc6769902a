# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A packing plan tried for real: the pods and claim templates that run a gpu_fit plan's workloads,
the scheduler's verdict on each pod, and the comparison of what it placed with what the plan said.

Pure functions over plain dicts; packing_run.py talks to the API. Two of gpu_fit's strategies
can be run, because they are the two the scheduler itself enforces: ``whole_gpu`` (a claim with
no memory request: a whole device) and ``memory_shares`` (a claim asking
``capacity.requests.memory``, which NVIDIA's driver 0.5.0 with ConsumableShares lets several
claims take from one GPU). Time-slicing and MPS are not: the scheduler does not count the pods
of a shared claim, so there is nothing of its to compare.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs

STRATEGIES = ("whole_gpu", "memory_shares")
RUN_LABEL = "dra.gpu/packing-check-run"
WORKLOAD_LABEL = "dra.gpu/packing-check-workload"
MANAGED_BY = {"app.kubernetes.io/managed-by": "dra.gpu.gpu_packing_check"}
SCHEDULED, UNSCHEDULABLE = "scheduled", "unschedulable"


def input_problems(params):
    """The problems that need no cluster to find (for inputs.refuse): each names the option and the fix."""
    problems = inputs.Problems()
    problems.check(inputs.dns_label, "namespace", params["namespace"], "namespace")
    for index, workload in enumerate(params["workloads"] or []):
        if isinstance(workload, dict) and workload.get("name") is not None:
            problems.check(inputs.dns_label, "workloads[%d].name" % index, str(workload["name"]),
                           "workload name (its pods are named <name>-<index>)")
    problems.check(inputs.integer, "timeout", params["timeout"], what="seconds")
    return problems.found


def template(workload, strategy, run_id, api_version):
    """The ResourceClaimTemplate of one workload: a whole device of its class, or its memory of one."""
    request = {"deviceClassName": workload["device_class"]}
    if strategy == "memory_shares":
        request["capacity"] = {"requests": {"memory": workload["memory"]}}
    labels = dict(MANAGED_BY, **{RUN_LABEL: run_id, WORKLOAD_LABEL: workload["name"]})
    return {"apiVersion": api_version, "kind": "ResourceClaimTemplate",
            "metadata": {"name": workload["name"], "labels": labels},
            "spec": {"metadata": {"labels": labels},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}}


def pod(workload, index, run_id, image):
    """Replica ``index`` of ``workload``: a pod that does nothing but hold its claim."""
    labels = dict(MANAGED_BY, **{RUN_LABEL: run_id, WORKLOAD_LABEL: workload["name"]})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "%s-%d" % (workload["name"], index), "labels": labels},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": workload["name"]}],
                     "containers": [{"name": "main", "image": image, "resources": {"claims": [{"name": "gpu"}]}}]}}


def verdict(pod_obj):
    """(SCHEDULED, node) once the scheduler bound the pod, (UNSCHEDULABLE, its message) once it gave
    up on it for now, (None, None) while it has not decided."""
    node = (pod_obj.get("spec") or {}).get("nodeName")
    if node:
        return SCHEDULED, node
    for condition in (pod_obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return UNSCHEDULABLE, condition.get("message") or ""
    return None, None


def decided(pods, replicas):
    """The verdicts {pod name: (verdict, node or message)} once all ``replicas`` pods are decided, else None."""
    found = dict((p["metadata"]["name"], verdict(p)) for p in pods)
    if len(found) < replicas or any(v[0] is None for v in found.values()):
        return None
    return found


def workload_outcome(workload, verdicts):
    """How the scheduler placed one workload's pods: counts, per node, and its reason for the rest."""
    by_node, messages = {}, []
    for kind, detail in verdicts.values():
        if kind == SCHEDULED:
            by_node[detail] = by_node.get(detail, 0) + 1
        elif detail not in messages:
            messages.append(detail)
    scheduled = sum(by_node.values())
    return {"name": workload["name"], "requested": workload["replicas"], "scheduled": scheduled,
            "unschedulable": workload["replicas"] - scheduled, "by_node": by_node, "messages": messages}


def allocations(claims, run_id):
    """The allocation results of this run's claims, each with the workload that holds it."""
    found = []
    for claim in claims:
        labels = claim["metadata"].get("labels") or {}
        if labels.get(RUN_LABEL) != run_id:
            continue
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        for result in results:
            found.append({"workload": labels.get(WORKLOAD_LABEL), "pool": result.get("pool"),
                          "device": result.get("device"), "consumed": result.get("consumedCapacity") or {},
                          "share_id": result.get("shareID")})
    return found


def claims_per_device(entries):
    """{"pool/device": claims} over allocation entries or plan placements (with ``replicas``)."""
    counts = {}
    for entry in entries:
        key = "%s/%s" % (entry["pool"], entry["device"])
        counts[key] = counts.get(key, 0) + entry.get("replicas", 1)
    return counts


def differences(plan, strategy, outcomes, allocated):
    """What the scheduler did that the plan did not say, in words; [] when they agree.

    Compared is what the scheduler cannot choose: per workload how many pods it placed and how
    many it could not, and how many claims each device holds as a multiset (which of two equal
    devices or nodes it scores higher is its choice). Per node too, where the plan says no
    workload depends on the node choice. For memory shares, every claim's consumedCapacity."""
    planned = plan["strategies"][strategy]
    rows = dict((row["name"], row[strategy]) for row in plan["workloads"])
    found = []
    for outcome in outcomes:
        if outcome["scheduled"] != rows.get(outcome["name"]):
            found.append("%s: the plan placed %s of %d, the scheduler %d"
                         % (outcome["name"], rows.get(outcome["name"]), outcome["requested"], outcome["scheduled"]))
    cluster_devices, plan_devices = claims_per_device(allocated), claims_per_device(planned["placements"])
    if sorted(cluster_devices.values()) != sorted(plan_devices.values()):
        found.append("claims per device: the plan %s, the scheduler %s"
                     % (_counts(plan_devices), _counts(cluster_devices)))
    if not planned.get("depends_on_node_choice"):
        cluster_nodes = {}
        for outcome in outcomes:
            for node, count in outcome["by_node"].items():
                cluster_nodes[node] = cluster_nodes.get(node, 0) + count
        plan_nodes = dict((n, c) for n, c in planned["by_node"].items() if c)
        if cluster_nodes != plan_nodes:
            found.append("per node: the plan %s, the scheduler %s" % (_counts(plan_nodes), _counts(cluster_nodes)))
    if strategy == "memory_shares":
        consumes = dict((p["workload"], p["consumes"]) for p in planned["placements"])
        for entry in allocated:
            if entry["workload"] in consumes and entry["consumed"] != consumes[entry["workload"]]:
                found.append("%s on %s/%s consumes %s, the plan said %s" % (
                    entry["workload"], entry["pool"], entry["device"], _counts(entry["consumed"]),
                    _counts(consumes[entry["workload"]])))
    return found


def _counts(mapping):
    return ", ".join("%s %s" % (k, v) for k, v in sorted(mapping.items())) or "none"


def summary(strategy, plan, outcomes, found):
    """One line: what was asked, what the plan said, what the scheduler did, and whether they agree."""
    requested = sum(o["requested"] for o in outcomes)
    scheduled = sum(o["scheduled"] for o in outcomes)
    words = "with whole GPUs" if strategy == "whole_gpu" else "with memory shares"
    verdict_text = "as planned" if not found else "NOT as planned: " + "; ".join(found)
    return "%d pods %s: the plan said %d fit, the scheduler placed %d and left %d Unschedulable, %s" % (
        requested, words, plan["strategies"][strategy]["total"], scheduled, requested - scheduled, verdict_text)
