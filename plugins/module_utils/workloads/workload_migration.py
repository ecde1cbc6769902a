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
Whether a share fits is workload_migration_share.py; when a rollout is done or stuck,
workload_migration_rollout.py; the orchestration against the API (apply, watch the rollout,
roll back) is workload_migration_run.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads

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
    ``memory`` (a quantity, checked by workload_migration_share.check_memory): each container's one
    GPU becomes a share of that much memory of a device instead of a whole one.
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
