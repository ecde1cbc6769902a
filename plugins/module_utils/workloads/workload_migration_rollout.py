# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Following a migrated (or reverted) workload's rollout: done, failed or still progressing,
which pods of the replaced template are left, which new pods are stuck, and what each new
pod got from its claim. Pure functions over the workload and pods as the API returns them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.workloads.workload_migration import MigrationRefused


def _condition(obj, kind):
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return {}


def rollout(kind, obj):
    """``(state, message)``: state ``done`` when every pod runs the current template and is
    available, ``failed`` when the controller gave up, else ``progressing``."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    if status.get("observedGeneration", 0) < meta.get("generation", 0):
        return "progressing", "the controller has not seen the change yet"
    if kind == "Deployment":
        progressing = _condition(obj, "Progressing")
        if progressing.get("reason") == "ProgressDeadlineExceeded":
            return "failed", "the Deployment exceeded its progress deadline: %s" % progressing.get("message")
        wanted = spec.get("replicas", 1)
        counts = (status.get("updatedReplicas", 0), status.get("replicas", 0), status.get("availableReplicas", 0))
        if counts == (wanted, wanted, wanted):
            return "done", "%d of %d pods updated and available" % (wanted, wanted)
        return "progressing", "%d of %d pods updated, %d pods in all, %d available" % (
            counts[0], wanted, counts[1], counts[2])
    if kind == "StatefulSet":
        if (spec.get("updateStrategy") or {}).get("type") == "OnDelete":
            return "failed", ("its updateStrategy is OnDelete: its pods are replaced only when someone deletes them; "
                              "set RollingUpdate, or delete the pods one at a time")
        wanted = spec.get("replicas", 1)
        same_revision = status.get("updateRevision") == status.get("currentRevision")
        if same_revision and status.get("updatedReplicas", 0) == wanted and status.get("readyReplicas", 0) == wanted:
            return "done", "%d of %d pods updated and ready" % (wanted, wanted)
        return "progressing", "%d of %d pods updated, %d ready" % (
            status.get("updatedReplicas", 0), wanted, status.get("readyReplicas", 0))
    if kind == "DaemonSet":
        if (spec.get("updateStrategy") or {}).get("type") == "OnDelete":
            return "failed", ("its updateStrategy is OnDelete: its pods are replaced only when someone deletes them; "
                              "set RollingUpdate, or delete the pods one at a time")
        wanted = status.get("desiredNumberScheduled", 0)
        updated, available = status.get("updatedNumberScheduled", 0), status.get("numberAvailable", 0)
        if updated == wanted and available == wanted:
            return "done", "%d of %d pods updated and available" % (wanted, wanted)
        return "progressing", "%d of %d pods updated, %d available" % (updated, wanted, available)
    raise MigrationRefused("no rollout to follow for a %s" % kind)


def label_selector(obj):
    """The workload's spec.selector as a label-selector string for a pod list."""
    selector = (obj.get("spec") or {}).get("selector") or {}
    parts = ["%s=%s" % (k, v) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op == "In":
            parts.append("%s in (%s)" % (key, ",".join(values)))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (key, ",".join(values)))
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append("!%s" % key)
    return ",".join(parts)


# Scheduler messages that mean the new pods' claims cannot be allocated (no device of the class
# matches, or none is free), rather than "not yet": the rollout will not finish by itself.
UNALLOCATABLE = ("cannot allocate", "unsatisfiable")


def claim_entry(pod, claim):
    """The pod's resourceClaims entry that refers to ``claim`` (a ResourceClaimTemplate or
    ResourceClaim of that name), or None: how a pod of the migrated template is told apart."""
    for ref in (pod.get("spec") or {}).get("resourceClaims") or []:
        if claim in (ref.get("resourceClaimTemplateName"), ref.get("resourceClaimName")):
            return ref
    return None


def pods_left_over(pods, claim, on_claim):
    """Names of the pods (terminating ones too) still of the template being replaced: with
    ``on_claim`` those without ``claim``, else those with it. A rollout is over when none is
    left, so the GPUs the old pods held are free when the module returns."""
    return sorted(p["metadata"]["name"] for p in pods if (claim_entry(p, claim) is None) == on_claim)


def stuck_pods(pods, claim):
    """The pods of the new template (those using ``claim``) that cannot go on, with why:
    refused by the scheduler for their claims, or a container that cannot start."""
    stuck = []
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp") or claim_entry(pod, claim) is None:
            continue
        status = pod.get("status") or {}
        for cond in status.get("conditions") or []:
            message = (cond.get("message") or "")
            if cond.get("type") == "PodScheduled" and cond.get("reason") == "Unschedulable" and \
                    any(marker in message.lower() for marker in UNALLOCATABLE):
                stuck.append("pod %s cannot be scheduled: %s" % (pod["metadata"]["name"], message))
        for cs in status.get("containerStatuses") or []:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in ("CreateContainerConfigError", "CreateContainerError", "RunContainerError",
                                         "CrashLoopBackOff", "ErrImagePull", "ImagePullBackOff"):
                stuck.append("pod %s container %s: %s %s" % (
                    pod["metadata"]["name"], cs.get("name"), waiting["reason"], waiting.get("message") or ""))
    return stuck


def pod_claims(pod, claim, claims):
    """``{pod, node, ready, claim, allocated, devices}`` for a pod using ``claim``; ``claims``
    maps claim name to the ResourceClaim in the pod's namespace (a template's claims are
    generated per pod, their names in the pod's status)."""
    status = pod.get("status") or {}
    generated = dict((s.get("name"), s.get("resourceClaimName")) for s in status.get("resourceClaimStatuses") or [])
    ref = claim_entry(pod, claim) or {}
    name = ref.get("resourceClaimName") or generated.get(ref.get("name"))
    found = claims.get(name) or {}
    allocation = (found.get("status") or {}).get("allocation") or {}
    results = (allocation.get("devices") or {}).get("results") or []
    reserved = [r.get("uid") for r in (found.get("status") or {}).get("reservedFor") or []]
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return {"pod": pod["metadata"]["name"], "node": (pod.get("spec") or {}).get("nodeName"), "ready": ready,
            "claim": name, "allocated": bool(results) and pod["metadata"].get("uid") in reserved,
            "devices": ["%s/%s/%s" % (r.get("driver"), r.get("pool"), r.get("device")) for r in results],
            "consumed": [r["consumedCapacity"] for r in results if r.get("consumedCapacity")]}
