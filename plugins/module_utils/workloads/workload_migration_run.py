# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Migrate one workload against a cluster: check, apply, follow the rollout, verify, roll back.

The decisions (what the template becomes, when a rollout is done or stuck, whether a share
fits) are in workload_migration.py, workload_migration_rollout.py and
workload_migration_share.py; this file only talks to the API, in an order that leaves nothing
half-applied: both writes are dry-run first, the claim object is removed again when the
workload update is refused, and a rollout that does not finish puts the old template back.
The module's options, and a label selector's many workloads, are workload_migration_module_run.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity, extended_resource, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration as wm
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_rollout as rollouts
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_share as shares
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import PLURALS, RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message

# How often the rollout wait looks at the workload's status without a pod event: the
# controller counts a pod available a moment after the pod's own last change.
ROLLOUT_RECHECK = 2

# How often a replace is made again on the live object after a conflict with the controller.
CONFLICT_RETRIES = 5


class Conflict(Exception):
    """The API server had a newer resourceVersion of the workload (409)."""


class MigrationFailed(Exception):
    """The change was applied and did not work; ``details`` say what was put back."""

    def __init__(self, message, **details):
        super(MigrationFailed, self).__init__(message)
        self.details = details


def kept_claim(kept):
    """The claim object a migration made, as the workload's annotation keeps it."""
    claim = {"kind": kept.get("claim_kind"), "name": kept.get("claim_name"), "device_class": kept.get("device_class")}
    if kept.get("memory"):
        claim["memory"] = kept["memory"]
    return claim


class Migration:
    def __init__(self, kube, params, clock=time.monotonic):
        self.kube = kube
        self.clock = clock
        self.kind, self.namespace, self.name = params["kind"], params["namespace"], params["name"]
        # The module's options this workload's migration reads (the others choose what to run).
        self.device_class = params.get("device_class")
        self.claim_mode = params.get("claim_mode")
        self.claim_name = params.get("claim_name")
        self.timeout = params.get("timeout")
        # A quantity (checked by the options' checks): each pod's share of one card, or None (whole cards).
        self.memory = params.get("memory")
        self.label = "%s %s/%s" % (self.kind, self.namespace, self.name)

    # ----- the workload ------------------------------------------------------------------

    def _calls(self):
        apps = self.kube.apps
        return {"Deployment": (apps.read_namespaced_deployment, apps.replace_namespaced_deployment),
                "StatefulSet": (apps.read_namespaced_stateful_set, apps.replace_namespaced_stateful_set),
                "DaemonSet": (apps.read_namespaced_daemon_set, apps.replace_namespaced_daemon_set)}[self.kind]

    def read(self):
        try:
            obj = self._calls()[0](self.name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                raise wm.MigrationRefused("%s does not exist; check kind, namespace and name, e.g. with "
                                          "`kubectl get %s -n %s`" % (self.label, self.kind.lower(), self.namespace))
            raise
        return self.kube.api.sanitize_for_serialization(obj)

    def _write(self, body, dry_run=False):
        kwargs = {"dry_run": "All"} if dry_run else {}
        try:
            return self._calls()[1](self.name, self.namespace, body, **kwargs)
        except ApiException as exc:
            if exc.status == 409:
                raise Conflict()
            raise wm.MigrationRefused("the API server refused the new %s: %s" % (self.label, api_error_message(exc)))

    def _replace(self, obj, change, dry_run=False):
        """Write ``change(obj)``. The workload's controller keeps writing its status and revision
        annotation, so a replace can meet a newer resourceVersion (CI saw a rollback refused so,
        with both cores busy): then ``change`` is made again on the live object, as long as its
        spec is the one the change was planned on (same generation)."""
        for _attempt in range(CONFLICT_RETRIES):
            try:
                return self._write(change(obj), dry_run)
            except Conflict:
                live = self.read()
                if live["metadata"].get("generation") != obj["metadata"].get("generation"):
                    break
                obj = live
        raise wm.MigrationRefused("%s changed while it was being migrated; run again" % self.label)

    # ----- the claim object --------------------------------------------------------------

    def _claim_call(self, verb, kind):
        return getattr(self.kube.custom, "%s_namespaced_custom_object" % verb), (
            RESOURCE_GROUP, RESOURCE_VERSION, self.namespace, PLURALS[kind])

    def _read_claim(self, kind, name):
        call, args = self._claim_call("get", kind)
        try:
            return call(*(args + (name,)))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def _create_claim(self, body, dry_run=False):
        call, args = self._claim_call("create", body["kind"])
        kwargs = {"dry_run": "All"} if dry_run else {}
        try:
            call(*(args + (body,)), **kwargs)
        except ApiException as exc:
            raise wm.MigrationRefused("the API server refused the %s %s: %s" % (
                body["kind"], body["metadata"]["name"], api_error_message(exc)))

    def _delete_claim(self, kind, name):
        call, args = self._claim_call("delete", kind)
        try:
            call(*(args + (name,)))
        except ApiException as exc:
            if exc.status != 404:
                raise

    def _check_class(self, name):
        """The DeviceClass ``name``; refused, naming the classes there are, when it does not exist."""
        try:
            return self.kube.custom.get_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "deviceclasses", name)
        except ApiException as exc:
            if exc.status != 404:
                raise
            known, _version = self.kube.list_resource("deviceclasses")
            raise wm.MigrationRefused("DeviceClass %s does not exist (the cluster has: %s); set device_class to one "
                                      "of them, or create it with the device_classes role" % (
                                          name, ", ".join(sorted(c["metadata"]["name"] for c in known)) or "none"))

    def _check_shares(self, device_class):
        """Refuse shares of a card before anything is written: where the API server would drop
        the claim's capacity request (Kubernetes 1.35 without DRAConsumableCapacity: every pod
        would silently get a whole card), and where no device of the class can give the share."""
        kept = consumable_capacity.availability(self.kube, self.namespace)
        if not kept["available"]:
            raise wm.MigrationRefused("memory %s cannot be asked for here: %s" % (self.memory, kept["reason"]))
        expressions = [((s or {}).get("cel") or {}).get("expression")
                       for s in (device_class.get("spec") or {}).get("selectors") or []]
        try:
            selectors = cel.Selectors([e for e in expressions if e])
            slices, _version = self.kube.slices()
            # The devices the allocator sees: each pool's newest complete generation.
            entries, _problems = slice_devices.selected_devices(slices)
            matched = [(node or item["spec"]["pool"]["name"], device) for item, device, node in entries
                       if selectors.match_cached(item["spec"]["driver"], device)[0]]
        except cel.Unsupported as exc:
            # Not known here; the rollout (claims the scheduler cannot allocate) still tells.
            return "could not tell here which devices DeviceClass %s selects (%s); the rollout will" % (
                device_class["metadata"]["name"], exc)
        refusal = shares.share_refusal(device_class["metadata"]["name"], matched, self.memory)
        if refusal:
            raise wm.MigrationRefused(refusal)
        return None

    # ----- waiting -------------------------------------------------------------------------

    def on_extended_resource(self, device_class):
        """The workload keeps nvidia.com/gpu and DRA serves it through ``device_class``'s
        extendedResourceName: nothing is written; where its pods stand is reported."""
        obj = self.read()
        wm.refuse_unless_device_plugin(wm.status_of(self.kind, obj))
        gpus = gpu_workloads.gpus_per_pod(gpu_workloads.pod_spec(self.kind, obj))
        pods, _version = self._pods(rollouts.label_selector(obj))
        paths = extended_resource.pod_paths(pods)
        served = [p for p in paths if p["claim"]]
        return {"changed": False, "status": "extended-resource", "pods": paths,
                "message": "%s keeps nvidia.com/gpu, served by DRA through DeviceClass %s: %d of %d pods on a claim "
                           "the scheduler made" % (self.label, device_class, len(served), len(paths)),
                "report": extended_resource.report(self.label, gpus, device_class, paths)}

    def _pods(self, selector):
        return self.kube.list_all(self.kube.core.list_namespaced_pod, namespace=self.namespace,
                                  label_selector=selector)

    def _wait_rollout(self, claim, on_claim, timeout):
        """Follow the rollout until it is done and no pod of the replaced template is left;
        returns ``(state, message, pods)``. ``on_claim``: the new template uses ``claim`` (a
        migration, whose new pods are also checked for being stuck) or not (a revert)."""
        selector = rollouts.label_selector(self.read())

        def condition(pods):
            state, message = rollouts.rollout(self.kind, self.read())
            if state == "progressing" and on_claim:
                stuck = rollouts.stuck_pods(pods, claim)
                if stuck:
                    return "failed", "; ".join(stuck), pods
            if state == "done":
                left = rollouts.pods_left_over(pods, claim, on_claim)
                return ("done", message, pods) if not left else None
            return (state, message, pods) if state != "progressing" else None

        watcher = watch.kube_watcher(self.kube.core.list_namespaced_pod, self.kube.api, namespace=self.namespace,
                                     label_selector=selector)
        try:
            result, _stats = watch.wait_until(lambda: self._pods(selector), watcher, condition, timeout,
                                              "the rollout of %s" % self.label, clock=self.clock,
                                              recheck_every=ROLLOUT_RECHECK)
        except watch.WaitTimeout as exc:
            _state, message = rollouts.rollout(self.kind, self.read())
            left = rollouts.pods_left_over(exc.state, claim, on_claim)
            return "timeout", "%s (%s%s)" % (exc, message, "; pods of the old template still there: %s" % (
                ", ".join(left)) if left else ""), exc.state
        return result

    def _verify(self, claim, pods):
        """Every pod of the new template Ready with its claim allocated and reserved for it."""
        claims = dict((c["metadata"]["name"], c) for c in self.kube.list_resource(
            "resourceclaims", namespace=self.namespace)[0])
        seen = [rollouts.pod_claims(p, claim, claims) for p in pods if not p["metadata"].get("deletionTimestamp")
                and rollouts.claim_entry(p, claim) is not None]
        problems = ["pod %s is not Ready" % s["pod"] for s in seen if not s["ready"]]
        problems += ["the claim of pod %s is not allocated to it" % s["pod"] for s in seen if not s["allocated"]]
        if not seen:
            problems.append("no pod of the new template was found")
        return seen, problems

    # ----- the two directions ------------------------------------------------------------

    def migrate(self, check_mode, now):
        wm.check_kind(self.kind)
        obj = self.read()
        status = wm.status_of(self.kind, obj)
        if status == "migrated":
            kept = wm.previous(obj)
            message = "%s is on its claim already" % self.label
            if kept.get("memory") != self.memory:
                # Left alone all the same: a second run must not roll a working workload out again.
                message += " (%s; revert it first to move it to %s)" % (
                    "a share of %s" % kept["memory"] if kept.get("memory") else "whole cards",
                    "a share of %s" % self.memory if self.memory else "whole cards")
            return {"changed": False, "status": "migrated", "message": message, "claim": kept_claim(kept)}
        device_class = self.device_class
        plan = wm.rewrite(self.kind, obj, device_class, self.claim_mode, self.claim_name, self.memory)
        class_object = self._check_class(device_class)
        claim = wm.claim_object(plan["claim"], self.namespace, self.kind, self.name)
        note = self._check_shares(class_object) if self.memory is not None else None
        existing = self._read_claim(claim["kind"], claim["metadata"]["name"])
        if existing is not None and not wm.is_ours(existing, self.kind, self.name):
            raise wm.MigrationRefused("%s %s/%s exists and was not made for %s; set claim_name to another name" % (
                claim["kind"], self.namespace, claim["metadata"]["name"], self.label))
        new = wm.migrated(obj, plan, device_class, now, self.memory)
        made = {"kind": claim["kind"], "name": claim["metadata"]["name"], "device_class": device_class}
        if self.memory is not None:
            made["memory"] = self.memory
        result = {"changed": True, "status": "migrated", "claim": made,
                  "requests": plan["requests"], "template": plan["template"],
                  "diff": dict((side, dict(value, claim=None if side == "before" else claim))
                               for side, value in wm.template_diff(obj, new).items())}
        result["report"] = wm.before_and_after(plan, device_class) + ([note] if note else [])
        if check_mode:
            result["message"] = "%s would move to %s %s" % (self.label, claim["kind"], claim["metadata"]["name"])
            return result

        def change(live):
            return wm.migrated(live, plan, device_class, now, self.memory)
        # Everything is validated by the API server before anything is written.
        if existing is None:
            self._create_claim(claim, dry_run=True)
        self._replace(obj, change, dry_run=True)
        if existing is not None:
            # Left by an earlier attempt that was rolled back: made again from this plan.
            self._delete_claim(claim["kind"], claim["metadata"]["name"])
        self._create_claim(claim)
        try:
            self._replace(obj, change)
        except wm.MigrationRefused:
            self._delete_claim(claim["kind"], claim["metadata"]["name"])
            raise
        name = claim["metadata"]["name"]
        state, message, pods = self._wait_rollout(name, True, self.timeout)
        problems = [message] if state != "done" else []
        if not problems:
            result["pods"], problems = self._verify(name, pods)
        if problems:
            raise MigrationFailed("the rollout of %s on %s %s did not succeed: %s" % (
                self.label, claim["kind"], claim["metadata"]["name"], "; ".join(problems)),
                **self._roll_back(claim))
        result["report"] = wm.before_and_after(plan, device_class, result["pods"]) + ([note] if note else [])
        result["message"] = "%s moved to %s %s: %s" % (self.label, claim["kind"], claim["metadata"]["name"], message)
        return result

    def _roll_back(self, claim):
        self._replace(self.read(), lambda live: wm.reverted(live)[0])
        state, message, _pods = self._wait_rollout(claim["metadata"]["name"], False, self.timeout)
        self._delete_claim(claim["kind"], claim["metadata"]["name"])
        return {"rolled_back": True, "rollback": {"state": state, "message": message}}

    def revert(self, check_mode):
        wm.check_kind(self.kind)
        obj = self.read()
        if wm.previous(obj) is None:
            return {"changed": False, "status": wm.status_of(self.kind, obj) or "none",
                    "message": "%s was not migrated by dra.gpu: nothing to revert" % self.label}
        new, kept = wm.reverted(obj)
        result = {"changed": True, "status": "reverted", "diff": wm.template_diff(obj, new),
                  "claim": kept_claim(kept)}
        if check_mode:
            result["message"] = "%s would go back to its template before the migration" % self.label
            return result
        self._replace(obj, lambda live: wm.reverted(live)[0], dry_run=True)
        self._replace(obj, lambda live: wm.reverted(live)[0])
        state, message, _pods = self._wait_rollout(kept.get("claim_name"), False, self.timeout)
        if state != "done":
            raise MigrationFailed("%s was given its old template back, but its rollout did not finish: %s; the "
                                  "%s %s is kept" % (self.label, message, kept.get("claim_kind"),
                                                     kept.get("claim_name")), rolled_back=False)
        # the kinds of claim object a migration makes (wm.CLAIM_KINDS: claim mode -> kind), which a revert may remove
        if kept.get("claim_kind") in wm.CLAIM_KINDS.values() and kept.get("claim_name"):
            existing = self._read_claim(kept["claim_kind"], kept["claim_name"])
            if existing is not None and wm.is_ours(existing, self.kind, self.name):
                self._delete_claim(kept["claim_kind"], kept["claim_name"])
        result["message"] = "%s is back on its template before the migration: %s" % (self.label, message)
        return result
