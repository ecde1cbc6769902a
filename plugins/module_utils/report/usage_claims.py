# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The allocated claims of the GPU usage report: the pods each is reserved for, whether one of
them runs (in use) or none does (idle, and why), and since when the claim is allocated.
Pure functions over ResourceClaims and Pods as the API returns them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads

# The scheduler writes a claim's allocation and reservations; its status write is the best
# trace of when an allocation happened when the alpha allocationTimestamp is not set.
SCHEDULER_MANAGER = "kube-scheduler"


# --- time --------------------------------------------------------------------------------

def parse_time(text):
    """An RFC 3339 timestamp as the API writes it ("2026-12-05T15:40:00Z") -> aware datetime."""
    if not text:
        return None
    try:
        # The API writes UTC with a Z, to the second (microseconds in managedFields are dropped).
        return datetime.datetime.strptime(text[:19] + "+0000", "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


def format_time(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _age(since, now):
    return None if since is None else max(0, int((now - since).total_seconds()))


# --- pods --------------------------------------------------------------------------------

def owner_of(pod):
    """The workload a person manages for ``pod``, from the pod alone (no get on ReplicaSets or
    Jobs needed): a ReplicaSet named <deployment>-<pod-template-hash> is its Deployment's."""
    owner = gpu_workloads.controller_of(pod)
    if owner is None:
        return None
    kind, name = owner[0], owner[1] or ""
    template_hash = ((pod.get("metadata") or {}).get("labels") or {}).get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith("-" + template_hash):
        return {"kind": "Deployment", "name": name[:-len(template_hash) - 1]}
    return {"kind": kind, "name": name}


def _waiting_reason(pod):
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        reason = ((status.get("state") or {}).get("waiting") or {}).get("reason")
        if reason:
            return reason
    return None


def pod_entry(pod):
    meta, status = pod["metadata"], pod.get("status") or {}
    return {"namespace": meta.get("namespace"), "name": meta.get("name"), "phase": status.get("phase") or "Pending",
            "terminating": bool(meta.get("deletionTimestamp")), "owner": owner_of(pod),
            "node": (pod.get("spec") or {}).get("nodeName"), "waiting": _waiting_reason(pod)}


def runs(pod):
    """A pod that uses its devices now: Running and not being deleted."""
    return pod["phase"] == "Running" and not pod["terminating"]


def why_not_running(pod):
    name = "%s/%s" % (pod["namespace"], pod["name"])
    if pod["terminating"]:
        return "pod %s is Terminating" % name
    if pod["phase"] in ("Succeeded", "Failed"):
        return "pod %s has %s and the claim is not yet released" % (name, pod["phase"])
    return "pod %s is %s%s" % (name, pod["phase"], " (%s)" % pod["waiting"] if pod["waiting"] else "")


def _scheduled_at(pod):
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None


# --- claims ------------------------------------------------------------------------------

def allocation_results(claim, driver):
    """The claim's allocated devices of ``driver`` (its allocation's results)."""
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return [r for r in results if r.get("driver") == driver]


def generated_for_pod(claim):
    """True for a claim the controller made from a template for one pod (it owns it)."""
    return any(ref.get("kind") == "Pod" and ref.get("controller")
               for ref in (claim.get("metadata") or {}).get("ownerReferences") or [])


def _scheduler_status_write(claim):
    times = [parse_time(entry.get("time")) for entry in (claim.get("metadata") or {}).get("managedFields") or []
             if entry.get("manager") == SCHEDULER_MANAGER and entry.get("subresource") == "status"]
    times = [t for t in times if t]
    return min(times) if times else None


def allocated_since(claim, reserved_pods):
    """When the claim was allocated, and how that was found (the API does not always say)."""
    stamp = parse_time(((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp"))
    if stamp:
        return stamp, "allocationTimestamp"
    scheduled = [t for t in (_scheduled_at(p) for p in reserved_pods) if t]
    if scheduled:
        return min(scheduled), "pod scheduled"
    written = _scheduler_status_write(claim)
    if written:
        return written, "scheduler's status write"
    return parse_time(claim["metadata"].get("creationTimestamp")), "claim created"


def claim_entry(claim, pods_by_key, now):
    """An allocated claim: its devices, the pods it is reserved for, in use or idle and why."""
    meta = claim["metadata"]
    namespace = meta.get("namespace")
    reserved, missing = [], []
    for ref in (claim.get("status") or {}).get("reservedFor") or []:
        if ref.get("resource", "pods") != "pods":
            continue
        pod = pods_by_key.get((namespace, ref.get("name")))
        if pod is None or (ref.get("uid") and pod["metadata"].get("uid") != ref.get("uid")):
            missing.append(ref.get("name"))
        else:
            reserved.append(pod)
    pods = [pod_entry(p) for p in reserved]
    since, source = allocated_since(claim, reserved)
    state, reason = "in_use", None
    if not any(runs(p) for p in pods):
        state = "idle"
        reasons = [why_not_running(p) for p in pods] + ["pod %s/%s is gone" % (namespace, n) for n in missing]
        reason = "; ".join(reasons) if reasons else "allocated, but reserved for no pod"
    return {"namespace": namespace, "name": meta.get("name"), "shared": not generated_for_pod(claim),
            "state": state, "devices": [], "pods": pods,
            "since": format_time(since) if since else None, "age_seconds": _age(since, now),
            "since_source": source if since else None, "idle_reason": reason}
