# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one smoke test against a cluster: create, wait (watch), verify, clean up."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time
import uuid

from ansible_collections.dra.gpu.plugins.module_utils import cel, smoke, watch
from ansible_collections.dra.gpu.plugins.module_utils.client import (
    RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message)
from ansible_collections.dra.gpu.plugins.module_utils.smoke import SmokeFailure

IMAGE_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
START_ERRORS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff")
# Scheduler messages that mean no device can satisfy the claim (rather than "not yet").
UNSATISFIABLE = ("cannot allocate", "unsatisfiable", "does not exist", "insufficient")
# How long the claim watch may trail the pod watch before a claim counts as never allocated.
CLAIM_WATCH_LAG = 30
# How often the pod wait looks at what the event recorder found, without a pod event.
PREPARE_RECHECK = 3


class SmokeRun:
    def __init__(self, kube, params, clock=time.monotonic):
        self.kube = kube
        self.p = params
        self.clock = clock
        self.run_id = uuid.uuid4().hex[:8]
        self.namespace = params["namespace"]
        self.created = []
        self.namespace_created = False
        self.started = clock()
        self.timings = {}
        self.claims = {}
        self.claims_seen = threading.Condition()
        # pod name -> the kubelet's FailedPrepareDynamicResources message when the driver
        # refused the claim (final), and the latest one the kubelet retries (reported on timeout)
        self.prepare_failures = {}
        self.prepare_retries = {}

    # ----- objects -------------------------------------------------------------------

    def _create(self, kind, body):
        ns = self.namespace
        try:
            if kind == "Namespace":
                obj = self.kube.core.create_namespace(body)
            elif kind == "Pod":
                obj = self.kube.core.create_namespaced_pod(ns, body)
            else:
                plural = {"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates"}[kind]
                obj = self.kube.custom.create_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, ns,
                                                                       plural, body)
        except ApiException as exc:
            raise SmokeFailure("rejected", "the API server refused the smoke test's %s: %s"
                               % (kind, api_error_message(exc)))
        self.created.append((kind, body["metadata"]["name"]))
        return obj

    def _ensure_namespace(self):
        try:
            self.kube.core.read_namespace(self.namespace)
            return
        except ApiException as exc:
            if exc.status != 404:
                raise
        labels = dict(smoke.MANAGED_BY)
        if self.p["pod_security"] != "none":
            labels["pod-security.kubernetes.io/enforce"] = self.p["pod_security"]
        self._create("Namespace", {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": self.namespace, "labels": labels}})
        self.namespace_created = True
        # Pods need the namespace's default service account, which a controller adds.
        self._wait_for(lambda: self.kube.list_all(self.kube.core.list_namespaced_service_account,
                                                  namespace=self.namespace),
                       self.kube.core.list_namespaced_service_account,
                       lambda items: any(i["metadata"]["name"] == "default" for i in items) or None,
                       "the default service account of namespace %s" % self.namespace, 30,
                       namespace=self.namespace)

    def _claim_ref(self):
        spec = smoke.claim_spec(self.p["device_class"], self.p["count"], self.p["selectors"],
                                self.p["first_available"])
        labels = dict(smoke.MANAGED_BY, **{smoke.RUN_LABEL: self.run_id})
        name = "smoke-%s" % self.run_id
        if self.p["pods"] > 1:
            self._create("ResourceClaim", {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION),
                                           "kind": "ResourceClaim", "metadata": {"name": name, "labels": labels},
                                           "spec": spec})
            return {"resourceClaimName": name}
        self._create("ResourceClaimTemplate", {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION),
                                               "kind": "ResourceClaimTemplate",
                                               "metadata": {"name": name, "labels": labels},
                                               "spec": {"metadata": {"labels": labels}, "spec": spec}})
        return {"resourceClaimTemplateName": name}

    # ----- waiting ---------------------------------------------------------------------

    def _wait_for(self, lister, list_fn, condition, description, timeout, recheck_every=None, **kwargs):
        watcher = watch.kube_watcher(list_fn, self.kube.api, **kwargs)
        result, _stats = watch.wait_until(lister, watcher, condition, timeout, description, clock=self.clock,
                                          recheck_every=recheck_every)
        return result

    def _pod_verdict(self, pods):
        """None while waiting; ("done", pods) when all completed; ("failed", SmokeFailure)."""
        done = True
        # Record the allocation before any verdict: a pod the driver refused to prepare was
        # scheduled (so allocated) first, and a failure report must still say when that happened.
        if "allocated_after" not in self.timings and any(pod["spec"].get("nodeName") for pod in pods):
            self.timings["allocated_after"] = round(self.clock() - self.started, 3)
        for pod in pods:
            status = pod.get("status") or {}
            name = pod["metadata"]["name"]
            if name in self.prepare_failures:
                return "failed", SmokeFailure("prepare_failed", "the DRA driver refused to prepare the claim of pod %s, "
                                              "so its container cannot start: %s" % (name, self.prepare_failures[name]),
                                              event=self.prepare_failures[name])
            for condition in status.get("conditions") or []:
                if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
                    message = condition.get("message") or ""
                    if any(marker in message for marker in UNSATISFIABLE):
                        return "failed", SmokeFailure("unschedulable", "no device can satisfy the claim of pod %s: %s"
                                                      % (name, message), scheduler_message=message)
            for cs in status.get("containerStatuses") or []:
                waiting = (cs.get("state") or {}).get("waiting") or {}
                if waiting.get("reason") in IMAGE_ERRORS:
                    return "failed", SmokeFailure("image_pull", "pod %s cannot pull image %s: %s %s" % (
                        name, cs.get("image"), waiting["reason"], waiting.get("message") or ""))
                if waiting.get("reason") in START_ERRORS:
                    return "failed", SmokeFailure("container_start", "pod %s cannot start its probe: %s %s" % (
                        name, waiting["reason"], waiting.get("message") or ""))
            if status.get("phase") == "Failed":
                return "failed", SmokeFailure("probe_failed", "the probe in pod %s failed: %s" % (
                    name, smoke.probe_output(pod).strip() or "(no output)"), output=smoke.probe_output(pod))
            if status.get("phase") != "Succeeded":
                done = False
        if done and len(pods) == self.p["pods"]:
            return "done", pods
        return None

    def _wait_for_pods(self):
        selector = "%s=%s" % (smoke.RUN_LABEL, self.run_id)
        remaining = max(1, self.p["timeout"] - (self.clock() - self.started))
        try:
            verdict, value = self._wait_for(
                lambda: self.kube.list_all(self.kube.core.list_namespaced_pod, namespace=self.namespace,
                                           label_selector=selector),
                self.kube.core.list_namespaced_pod, self._pod_verdict,
                "the smoke-test pods to complete", remaining, recheck_every=PREPARE_RECHECK,
                namespace=self.namespace, label_selector=selector)
        except watch.WaitTimeout as exc:
            retrying = "".join("; the kubelet is retrying pod %s after: %s" % item
                               for item in sorted(self.prepare_retries.items()))
            raise SmokeFailure("timeout", "%s; %s%s" % (exc, _describe_pods(exc.state), retrying))
        if verdict == "failed":
            raise value
        self.timings["completed_after"] = round(self.clock() - self.started, 3)
        return value

    # ----- claims ------------------------------------------------------------------------

    def _record_claims(self, timeout):
        """Watch this run's claims in the background and keep, per claim, its allocation and
        every pod it was reserved for: once a probe pod completes, the claim controller
        releases (and for templates deletes) its claim, before we could read it."""
        selector = "%s=%s" % (smoke.RUN_LABEL, self.run_id)

        def list_fn(**kw):
            return self.kube.custom.list_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, self.namespace,
                                                                  "resourceclaims", **kw)

        def record(items):
            for claim in items:
                status = claim.get("status") or {}
                if status.get("allocation") and status.get("reservedFor"):
                    # Every pod the claim was ever reserved for during the run: the controller
                    # releases a finished pod's reservation, so with several pods on one claim
                    # the first can be gone before the last is reserved (seen with both cores busy).
                    known = self.claims.get(claim["metadata"]["name"])
                    reserved = list(((known or {}).get("status") or {}).get("reservedFor") or [])
                    reserved += [r for r in status["reservedFor"] if r not in reserved]
                    with self.claims_seen:
                        self.claims[claim["metadata"]["name"]] = dict(claim, status=dict(status, reservedFor=reserved))
                        self.claims_seen.notify_all()
            return None

        def run():
            try:
                self._wait_for(lambda: self.kube.list_all(list_fn, label_selector=selector), list_fn, record,
                               "claims", timeout, label_selector=selector)
            except Exception:  # noqa: BLE001 - the recorder ends with the run; verification reports gaps
                pass

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def _record_prepare_failures(self, timeout):
        """Watch the namespace's events for the kubelet's FailedPrepareDynamicResources: when the
        driver refuses a claim (a bad opaque config, a feature gate that is off) the kubelet
        only reports it there, and the pod would wait in ContainerCreating until the timeout.
        Errors the kubelet retries are kept for the timeout message, not taken as a verdict."""
        kwargs = {"namespace": self.namespace, "field_selector": "reason=FailedPrepareDynamicResources"}
        prefix = "smoke-%s-" % self.run_id

        def record(items):
            for event in items:
                involved = event.get("involvedObject") or event.get("involved_object") or {}
                name, message = involved.get("name") or "", event.get("message") or ""
                if not name.startswith(prefix):
                    continue
                if smoke.prepare_failure_is_final(message):
                    self.prepare_failures.setdefault(name, message)
                else:
                    self.prepare_retries[name] = message
            return None

        def run():
            try:
                self._wait_for(lambda: self.kube.list_all(self.kube.core.list_namespaced_event, **kwargs),
                               self.kube.core.list_namespaced_event, record, "events", timeout, **kwargs)
            except Exception:  # noqa: BLE001 - without events the pod wait still ends at its timeout
                pass

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    # ----- verification ---------------------------------------------------------------

    def _claims_of(self, pods):
        pairs = []
        for pod in pods:
            names = [s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []]
            names += [r.get("resourceClaimName") for r in pod["spec"].get("resourceClaims") or []]
            for name in names:
                with self.claims_seen:
                    # The claim watch may deliver the allocation after the pod watch reported
                    # completion: seconds apart on a loaded API server (5 s was seen to be too
                    # short with the machine's two cores busy). Returns as soon as it arrives.
                    self.claims_seen.wait_for(lambda: not name or name in self.claims, timeout=CLAIM_WATCH_LAG)
                if name and name in self.claims:
                    pairs.append((pod, self.claims[name]))
                elif name:
                    raise SmokeFailure("not_allocated", "claim %s of pod %s was never seen allocated and reserved"
                                       % (name, pod["metadata"]["name"]))
        return pairs

    def _verify(self, pods):
        slices, _version = self.kube.slices(self.p["driver"])
        devices, outputs, chosen, seen_by_pod, sharing = [], [], None, {}, None
        for pod, claim in self._claims_of(pods):
            allocated = smoke.check_allocation(pod, claim, slices, self.p["driver"])
            results = claim["status"]["allocation"]["devices"]["results"]
            chosen = chosen or smoke.chosen_alternative(results)
            sharing = sharing or smoke.effective_sharing(claim, self.p["driver"])
            if self.p["verify"] == "container":
                output = smoke.probe_output(pod)
                seen_by_pod[pod["metadata"]["name"]] = smoke.check_container(
                    output, allocated, self.p["probe"], self.p["probe_pattern"], self.p["probe_attribute"])
                if sharing["strategy"] == "MPS" and self.p["probe"] == "nvidia":
                    smoke.check_mps(output, pod["metadata"]["name"])
                outputs.append({"pod": pod["metadata"]["name"], "output": output})
            for device in allocated:
                if (device["pool"], device["name"]) not in [(d["pool"], d["name"]) for d in devices]:
                    devices.append(device)
        if self.p["expect"]:
            smoke.check_expectations(devices, self.p["expect"])
        if len(seen_by_pod) > 1:
            smoke.check_same_devices(seen_by_pod)
        nodes = sorted(set(p["spec"].get("nodeName") for p in pods))
        shared = {"pods": len(pods), "same_devices": len(seen_by_pod) > 1,
                  "seen": sorted(set(i for ids in seen_by_pod.values() for i in ids))} if len(pods) > 1 else None
        return {"node": nodes[0] if len(nodes) == 1 else nodes, "devices": devices,
                "first_available_choice": chosen, "probe_outputs": outputs, "shared": shared,
                "sharing": sharing}

    # ----- cleanup -----------------------------------------------------------------------

    def cleanup(self, timeout=60):
        """Delete what this run created and wait until it is gone."""
        if not self.created:
            return []
        selector = "%s=%s" % (smoke.RUN_LABEL, self.run_id)
        for kind, name in reversed(self.created):
            try:
                if kind == "Pod":
                    self.kube.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
                elif kind == "Namespace":
                    self.kube.core.delete_namespace(name)
                else:
                    plural = {"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates"}[kind]
                    self.kube.custom.delete_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION,
                                                                     self.namespace, plural, name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        pods = [name for kind, name in self.created if kind == "Pod"]

        def leftovers(_items):
            left = self._leftovers(pods, selector)
            return None if left else True

        # Watch what goes last: the namespace when this run created it, else the claims
        # (generated claims are removed by the garbage collector after their pods).
        if self.namespace_created:
            list_fn = self.kube.core.list_namespace
            kwargs = {"field_selector": "metadata.name=%s" % self.namespace}
        else:
            def list_fn(**kw):
                return self.kube.custom.list_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION,
                                                                      self.namespace, "resourceclaims", **kw)
            kwargs = {}
        try:
            self._wait_for(lambda: self.kube.list_all(list_fn, **kwargs), list_fn, leftovers,
                           "the smoke test's objects to be deleted", timeout, **kwargs)
        except watch.WaitTimeout:
            return self._leftovers(pods, selector)
        return []

    def _leftovers(self, pod_names, selector):
        left = []
        if self.namespace_created:
            try:
                self.kube.core.read_namespace(self.namespace)
                left.append("Namespace/%s" % self.namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise
            return left
        pods, _v = self.kube.list_all(self.kube.core.list_namespaced_pod, namespace=self.namespace,
                                      label_selector=selector)
        left += ["Pod/%s" % p["metadata"]["name"] for p in pods]
        claims, _v = self.kube.list_resource("resourceclaims", namespace=self.namespace)
        for claim in claims:
            owners = [o.get("name") for o in claim["metadata"].get("ownerReferences") or []]
            labels = claim["metadata"].get("labels") or {}
            if labels.get(smoke.RUN_LABEL) == self.run_id or set(owners) & set(pod_names):
                left.append("ResourceClaim/%s" % claim["metadata"]["name"])
        templates, _v = self.kube.list_resource("resourceclaimtemplates", namespace=self.namespace,
                                                label_selector=selector)
        left += ["ResourceClaimTemplate/%s" % t["metadata"]["name"] for t in templates]
        return left

    # ----- the whole run ---------------------------------------------------------------

    def check_cluster(self):
        """Refuse at once, before creating anything, what no wait can fix: a node selector that
        matches no node (the probe would stay Pending until the timeout), and a selector that
        gives something other than a bool on a device."""
        selector = self.p.get("node_selector") or {}
        if selector:
            text = ",".join("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)
                            for k, v in sorted(selector.items()))
            if not self.kube.node_names(text):
                everything = self.kube.node_names(None)
                raise SmokeFailure("bad_input", "node_selector %s matches no node (nodes: %s), so the probe could "
                                   "never be scheduled; correct node_selector, check the labels with "
                                   "`kubectl get nodes -l '%s'`" % (text, ", ".join(everything) or "none", text))
        expressions = [("selectors[%d]" % i, e) for i, e in enumerate(self.p.get("selectors") or [])]
        for index, alt in enumerate(self.p.get("first_available") or []):
            expressions += [("first_available[%d].selectors[%d]" % (index, i), e)
                            for i, e in enumerate(alt.get("selectors") or [])]
        if not expressions:
            return
        items, _version = self.kube.slices(self.p["driver"])
        problem = cel.non_bool_problem(expressions, self.p["driver"], items)
        if problem:
            raise SmokeFailure("bad_input", problem)

    def run(self):
        self.check_cluster()
        self._ensure_namespace()
        self._record_claims(self.p["timeout"])
        self._record_prepare_failures(self.p["timeout"])
        claim_ref = self._claim_ref()
        for index in range(self.p["pods"]):
            self._create("Pod", smoke.pod_manifest(
                "smoke-%s-%d" % (self.run_id, index), self.run_id, self.p["image"], self.p["command"], claim_ref,
                self.p["node_selector"], self.p["tolerations"],
                self.p["pod_security"] if self.p["pod_security"] != "none" else "privileged",
                self.p["pod_annotations"]))
        pods = self._wait_for_pods()
        result = self._verify(pods)
        result["timings"] = dict(self.timings, verified_after=round(self.clock() - self.started, 3))
        result["namespace"] = self.namespace
        return result


def _describe_pods(pods):
    if not pods:
        return "no smoke-test pod exists"
    parts = []
    for pod in pods:
        status = pod.get("status") or {}
        detail = status.get("phase") or "Pending"
        for condition in status.get("conditions") or []:
            if condition.get("status") != "True" and condition.get("message"):
                detail += " (%s)" % condition["message"]
                break
        parts.append("pod %s: %s" % (pod["metadata"]["name"], detail))
    return "; ".join(parts)
