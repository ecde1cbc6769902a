# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Moving one workload from ``nvidia.com/gpu`` to a DRA claim, and back: the decisions.

Pure functions over the workload as the API returns it. The rewrite keeps the pod template
as it was except for the GPUs: every container's ``nvidia.com/gpu: N`` becomes a request of
N devices of the chosen DeviceClass in one claim per pod (a ResourceClaimTemplate), or in one
claim all pods share (a ResourceClaim, for a sharing class). With ``memory`` each container's
``nvidia.com/gpu: 1`` becomes a share of one card instead: a request of that much of a device's
``memory`` capacity (Kubernetes' consumable capacity, NVIDIA's ConsumableShares), so several
pods' claims can be placed on one GPU by the scheduler. The template before the rewrite
is kept in an annotation on the workload itself, written in the same update, so a revert
needs nothing but the workload and no second object can be half-written.
The orchestration against the API (apply, watch the rollout, roll back) is in
workload_migration_run.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, to_bytes

MIGRATION_ANNOTATION = "dra.gpu/gpu-migration"
MANAGED_BY = {"app.kubernetes.io/managed-by": "dra.gpu.gpu_workload_migrate"}
WORKLOAD_LABEL = "dra.gpu/migrated-workload"
# The pod-level claim entry the containers refer to; another name when the pod has one already.
CLAIM_ENTRY = "gpu"
CLAIM_KINDS = {"template": "ResourceClaimTemplate", "shared": "ResourceClaim"}
# Kinds whose pod template can change and whose controller replaces the pods (a rollout).
# A Job's and a bare Pod's template cannot change; a CronJob's applies at its next run, with
# nothing to watch, and an ownerless ReplicaSet never replaces running pods.
MIGRATABLE_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
NOT_MIGRATABLE = {
    "Job": "a Job's pod template cannot change; migrate its CronJob, or recreate the Job with a claim",
    "Pod": "a Pod's spec cannot change; migrate the workload that makes it, or recreate it with a claim",
    "CronJob": "a CronJob's next Job would be the first to show whether the claim works, with nothing to "
               "watch or roll back now; change its jobTemplate by hand and run one Job to check",
    "ReplicaSet": "a ReplicaSet does not replace running pods when its template changes; put it under a "
                  "Deployment first",
}


class MigrationRefused(Exception):
    """The workload cannot be migrated as asked; the text says why and what to do."""


def previous(obj):
    """What the annotation kept: ``{template, claim_kind, claim_name, device_class}``, or None."""
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(MIGRATION_ANNOTATION)
    if not text:
        return None
    try:
        kept = json.loads(text)
    except ValueError:
        raise MigrationRefused("the annotation %s on this workload is not the JSON dra.gpu wrote; remove it, "
                               "then migrate again" % MIGRATION_ANNOTATION)
    if not isinstance(kept, dict) or not isinstance(kept.get("template"), dict):
        raise MigrationRefused("the annotation %s on this workload holds no pod template; remove it, then "
                               "migrate again" % MIGRATION_ANNOTATION)
    return kept


def status_of(kind, obj):
    """``migrated`` (on a claim this collection made, the old template kept), ``device-plugin``
    (asks for nvidia.com/gpu), ``dra`` (on claims it was not moved to by us), ``both`` or None."""
    way = gpu_workloads.asks_for(gpu_workloads.pod_spec(kind, obj))
    if way == "dra" and previous(obj) is not None:
        return "migrated"
    return way


def check_kind(kind):
    if kind not in MIGRATABLE_KINDS:
        raise MigrationRefused("%s cannot be migrated in place: %s" % (
            kind, NOT_MIGRATABLE.get(kind, "only %s can" % ", ".join(MIGRATABLE_KINDS))))


def _entry_name(spec):
    taken = set(r.get("name") for r in spec.get("resourceClaims") or [])
    name, suffix = CLAIM_ENTRY, 1
    while name in taken:
        suffix += 1
        name = "%s-%d" % (CLAIM_ENTRY, suffix)
    return name


def _gpus(container):
    return gpu_workloads._container_gpus(container)  # pylint: disable=protected-access


def _without_gpu_resource(container):
    resources = container.get("resources") or {}
    for field in ("limits", "requests"):
        values = resources.get(field)
        if values and gpu_workloads.DEVICE_PLUGIN_RESOURCE in values:
            del values[gpu_workloads.DEVICE_PLUGIN_RESOURCE]
            if not values:
                del resources[field]


def claim_name(workload_name):
    """The name of the claim (or claim template) made for a workload."""
    return ("%s-gpu" % workload_name)[:253]


# Why a workload is not taken, by what its pods ask for (status_of): only device-plugin ones are.
NOT_ON_DEVICE_PLUGIN = {
    None: "its pods ask for no nvidia.com/gpu: there is nothing to do",
    "migrated": "it was moved to a claim; put nvidia.com/gpu back first (state reverted)",
    "dra": "its pods already take GPUs through claims",
    "both": "its pods ask for nvidia.com/gpu and through claims at once; move the rest by hand",
}


def refuse_unless_device_plugin(status):
    if status != "device-plugin":
        raise MigrationRefused(NOT_ON_DEVICE_PLUGIN[status])


def _share_refusals(mode, requests, memory):
    """Why a workload cannot move to shares of ``memory``, before anything is written."""
    if mode == "shared":
        # One ResourceClaim for all pods would be one share they all use together.
        raise MigrationRefused("memory gives each pod a share of its own; with claim_mode shared all its pods would "
                               "use one share of %s together. Use claim_mode template (the default)" % memory)
    for request in requests:
        if request["count"] > 1:
            # A share is part of one card. Two cards' worth of shares would be either two parts
            # of one card or parts of two cards, and 8Gi of each or 8Gi in all: a choice about
            # the program (which addresses N devices) that is not ours to guess.
            raise MigrationRefused(
                "container %s asks nvidia.com/gpu: %d, and a memory share is part of one card: whether it "
                "should get %s on each of %d cards or %s in all is a choice about the program, not one dra.gpu "
                "guesses. Migrate it with whole cards (leave memory unset), or change it to nvidia.com/gpu: 1 "
                "first" % (request["container"], request["count"], memory, request["count"], memory))


def _device_request(device_class, request, memory):
    if memory is None:
        return {"deviceClassName": device_class, "count": request["count"]}
    return {"deviceClassName": device_class, "capacity": {"requests": {"memory": memory}}}


def rewrite(kind, obj, device_class, mode="template", name=None, memory=None):
    """The workload's new pod template and the claim object it needs.

    Returns ``{template, claim: {kind, name, spec}, requests: [{container, count}]}``. ``mode``
    is ``template`` (each pod its own devices) or ``shared`` (one claim for all pods).
    ``memory`` (a quantity, checked by check_memory): each container's one GPU becomes a share
    of that much memory of a device instead of a whole one.
    """
    check_kind(kind)
    template = copy.deepcopy((obj.get("spec") or {}).get("template") or {})
    spec = template.setdefault("spec", {})
    refuse_unless_device_plugin(gpu_workloads.asks_for(spec))
    for container in spec.get("initContainers") or []:
        if _gpus(container) and container.get("restartPolicy") != "Always":
            # The device plugin lends an init container's GPUs to the containers after it; a
            # claim request per init container would hold more devices than the pod did.
            raise MigrationRefused("init container %s asks for nvidia.com/gpu; the device plugin reuses its GPUs "
                                   "for the containers after it, which a rewrite cannot keep exactly: migrate this "
                                   "workload by hand" % container.get("name"))
    entry = _entry_name(spec)
    requests = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or []:
            count = _gpus(container)
            if not count:
                continue
            requests.append({"container": container["name"], "count": count})
            _without_gpu_resource(container)
            claims = container.setdefault("resources", {}).setdefault("claims", [])
            claims.append({"name": entry, "request": container["name"]})
    if memory is not None:
        _share_refusals(mode, requests, memory)
    name = name or claim_name(obj["metadata"]["name"])
    entry_ref = {"name": entry}
    entry_ref["resourceClaimTemplateName" if mode == "template" else "resourceClaimName"] = name
    spec.setdefault("resourceClaims", []).append(entry_ref)
    claim_spec = {"devices": {"requests": [
        {"name": r["container"], "exactly": _device_request(device_class, r, memory)} for r in requests]}}
    if memory is not None:
        requests = [dict(r, memory=memory) for r in requests]
    return {"template": template, "requests": requests,
            "claim": {"kind": CLAIM_KINDS[mode], "name": name, "spec": claim_spec}}


def claim_object(claim, namespace, workload_kind, workload_name):
    """The ResourceClaimTemplate or ResourceClaim to create, labelled as ours and the workload's."""
    labels = dict(MANAGED_BY, **{WORKLOAD_LABEL: ("%s.%s" % (workload_kind, workload_name)).lower()[:63]})
    body = {"apiVersion": "resource.k8s.io/v1", "kind": claim["kind"],
            "metadata": {"name": claim["name"], "namespace": namespace, "labels": labels}}
    if claim["kind"] == "ResourceClaimTemplate":
        body["spec"] = {"metadata": {"labels": dict(MANAGED_BY)}, "spec": claim["spec"]}
    else:
        body["spec"] = claim["spec"]
    return body


def is_ours(claim_obj, workload_kind, workload_name):
    labels = (claim_obj.get("metadata") or {}).get("labels") or {}
    return labels.get(WORKLOAD_LABEL) == ("%s.%s" % (workload_kind, workload_name)).lower()[:63]


def migrated(obj, plan, device_class, now, memory=None):
    """The workload as it should be written: the new template, the old one in the annotation."""
    new = copy.deepcopy(obj)
    kept = {"template": (obj.get("spec") or {}).get("template") or {}, "claim_kind": plan["claim"]["kind"],
            "claim_name": plan["claim"]["name"], "device_class": device_class, "migrated_at": now}
    if memory is not None:
        kept["memory"] = memory
    new["spec"]["template"] = plan["template"]
    new["metadata"].setdefault("annotations", {})[MIGRATION_ANNOTATION] = json.dumps(kept, sort_keys=True)
    return new


def reverted(obj):
    """The workload with its kept template back and the annotation gone, and what it kept."""
    kept = previous(obj)
    if kept is None:
        raise MigrationRefused("it carries no %s annotation: it was not migrated by dra.gpu, or was reverted "
                               "already" % MIGRATION_ANNOTATION)
    new = copy.deepcopy(obj)
    new["spec"]["template"] = copy.deepcopy(kept["template"])
    new["metadata"]["annotations"].pop(MIGRATION_ANNOTATION, None)
    return new, kept


def template_diff(before, after):
    """What changes in the pod template, for --diff: the two templates and the claim made."""
    return {"before": {"template": (before.get("spec") or {}).get("template")},
            "after": {"template": (after.get("spec") or {}).get("template")}}


def before_and_after(plan, device_class, pods=None):
    """What a person reads: each container's GPUs before, the claim after, and where the new pods run."""
    claim = plan["claim"]
    lines = ["before: %s" % ", ".join("container %s asks nvidia.com/gpu: %d" % (r["container"], r["count"])
                                      for r in plan["requests"]),
             "after: %s %s, %s" % (claim["kind"], claim["name"], ", ".join(
                 "request %s: %s of one %s device" % (r["container"], r["memory"], device_class) if r.get("memory")
                 else "request %s: %d x %s" % (r["container"], r["count"], device_class) for r in plan["requests"]))]
    for pod in pods or []:
        shares = ["%s memory" % s["memory"] for s in pod.get("consumed") or [] if s.get("memory")]
        lines.append("pod %s on %s: %s%s" % (pod["pod"], pod["node"], ", ".join(pod["devices"]) or "no device",
                                             " (share of %s)" % ", ".join(shares) if shares else ""))
    return lines


# ----- a share of a card ---------------------------------------------------------------------

def check_memory(option, value):
    """The bytes of ``value``, a memory quantity above zero (what each pod's share asks for);
    inputs.InputError naming ``option`` otherwise."""
    try:
        amount = to_bytes(str(value).strip())
    except (QuantityError, ValueError):
        raise inputs.InputError("%s is %r, which is not a quantity; write what each pod needs of a GPU's memory, "
                                "like 8Gi or 8192Mi" % (option, value))
    if amount <= 0:
        raise inputs.InputError("%s is %r; a share must ask for some memory, like 8Gi" % (option, value))
    return amount


def share_fits(device, wanted):
    """Whether one published device can give a share of ``wanted`` bytes of memory at all
    (whatever others hold now): it takes several allocations, and the share, rounded by the
    device's request policy as the allocator rounds it, is within the policy and its memory."""
    if not device.get("allowMultipleAllocations"):
        return False
    published = capacity_shares.capacities(device)
    consumed = capacity_shares.consumption(published, {"memory": wanted}) if published else None
    return consumed is not None and capacity_shares.room(published, {}, consumed) != 0


def share_refusal(device_class, matched, memory):
    """None when a device that ``device_class`` selects can give a share of ``memory``; else
    why not and what to do. ``matched``: [(node or pool, device)] of the published devices the
    class selects."""
    wanted = to_bytes(memory)
    if not matched:
        return ("DeviceClass %s selects no published device, so no pod could get a share of it; check that the "
                "DRA driver runs and that the class's selectors match its devices (dra.gpu.resource_slice_info)"
                % device_class)
    shareable = [(where, d) for where, d in matched if d.get("allowMultipleAllocations")]
    if not shareable:
        return ("no device DeviceClass %s selects takes more than one allocation (allowMultipleAllocations), so "
                "each pod would hold a whole card: the driver does not publish shares. Turn on NVIDIA's "
                "ConsumableShares (DRA driver 0.5.0: featureGates.ConsumableShares and consumableShares: memory, "
                "e.g. through the gpu_sharing role), or migrate with whole cards (leave memory unset)" % device_class)
    if any(share_fits(d, wanted) for _where, d in shareable):
        return None
    limit, name, where = max((_largest_share(d), d.get("name"), where) for where, d in shareable)
    return ("no device DeviceClass %s selects can give a share of %s: the most one allows is %s (%s on %s). Ask for "
            "at most that, or use a class with larger GPUs" % (device_class, memory, human_bytes(limit), name, where))


def _largest_share(device):
    """The largest share one device allows: its memory, or its request policy's maximum below that."""
    memory = (device.get("capacity") or {}).get("memory") or {}
    total = to_bytes(memory.get("value") or 0)
    most = ((memory.get("requestPolicy") or {}).get("validRange") or {}).get("max")
    return min(total, to_bytes(most)) if most is not None else total


# ----- rollouts ------------------------------------------------------------------------------

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
