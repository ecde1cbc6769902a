# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one smoke test against a cluster: create, wait (watch), verify; then clean up.

The verdicts (what a pod's status means, whether the devices are right) are in smoke_verdicts.py
and smoke_checks.py; this file only talks to the API. SmokeRun does the run (a share of a card,
share_memory, through smoke_share_run.py's ShareRun, which uses its steps), smoke_cleanup.py's SmokeCleanup removes what it
made, and run_and_clean_up() is the module's whole work: the run, then its cleanup, whatever the run did.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time
import uuid

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_checks, smoke_cleanup, smoke_share, smoke_verdicts
from ansible_collections.dra.gpu.plugins.module_utils.dra import slices as slice_info
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import PLURALS, RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke_share_run import ShareRun

# How long the claim watch may trail the pod watch before a claim counts as never allocated.
CLAIM_WATCH_LAG = 30
# How often the pod wait looks at what the event recorder found, without a pod event.
PREPARE_RECHECK = 3


def run_and_clean_up(kube, params):
    """The smoke test with ``params`` (the module's options), then its cleanup unless it is to
    keep its objects. Returns (passed, result): the keyword arguments of exit_json or fail_json."""
    run = SmokeRun(kube, params)
    result, failure = None, None
    try:
        result = run.run()
    except SmokeFailure as exc:
        failure = exc
    except ApiException as exc:
        failure = SmokeFailure("api", "the smoke test could not talk to the API server: %s" % api_error_message(exc))
    left = [] if run.settings.keep_objects else run.cleanup()
    if failure is not None:
        details = dict(failure.details, msg=str(failure), failure=failure.kind, timings=run.timings)
        if left:
            details["left_behind"] = left
        return False, details
    if left:
        return False, dict(result, msg="the smoke test passed but could not remove %s" % ", ".join(left),
                           left_behind=left)
    return True, dict(result, changed=run.settings.keep_objects)


class SmokeRun:
    def __init__(self, kube, params, clock=time.monotonic):
        self.kube = kube
        self.settings = smoke.settings(params)
        self.clock = clock
        self.run_id = uuid.uuid4().hex[:8]
        self.namespace = self.settings.namespace
        self.selector = "%s=%s" % (smoke.RUN_LABEL, self.run_id)
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

    def run(self):
        self.check_cluster()
        if self.settings.share_memory:
            ShareRun(self).check_kept()
        self._ensure_namespace()
        self._record_claims(self.settings.timeout)
        self._record_prepare_failures(self.settings.timeout)
        if self.settings.share_memory:
            return ShareRun(self).run()
        claim_ref = self._claim_ref()
        s = self.settings
        if s.probe_pods > 1:
            self._hold_shared_claim(claim_ref["resourceClaimName"])
        for index in range(s.probe_pods):
            probe = smoke.pod_manifest("smoke-%s-%d" % (self.run_id, index), self.run_id, s.image, s.command,
                                       claim_ref, s.node_selector, s.tolerations, s.probe_security, s.pod_annotations)
            probe["metadata"]["labels"][smoke.ROLE_LABEL] = smoke.PROBE
            self.create("Pod", probe)
        pods = self.wait_for_pods("%s,%s=%s" % (self.selector, smoke.ROLE_LABEL, smoke.PROBE))
        result = self.verify(pods)
        result["timings"] = dict(self.timings, verified_after=round(self.clock() - self.started, 3))
        result["namespace"] = self.namespace
        return result

    def _hold_shared_claim(self, claim_name):
        """The pod that keeps the shared claim reserved (smoke.claim_holder), once it is scheduled."""
        s = self.settings
        holder = "smoke-%s-hold" % self.run_id
        self.create("Pod", smoke.claim_holder(holder, self.run_id, s, claim_name, int(s.timeout) + 60))
        verdict, value = self.watch_pod(holder, smoke_verdicts.holder_scheduled,
                                        "pod %s, holding the shared claim %s, to be scheduled" % (holder, claim_name))
        if verdict == "failed":
            raise value

    def _remaining(self):
        return max(1, self.settings.timeout - (self.clock() - self.started))

    def cleanup(self, timeout=60):
        """Delete what this run created and wait until it is gone; returns what is left."""
        return smoke_cleanup.SmokeCleanup(self.kube, self.namespace, self.run_id, self.clock).remove(
            self.created, self.namespace_created, timeout)

    def check_cluster(self):
        """Refuse at once, before creating anything, what no wait can fix: a node selector that
        matches no node (the probe would stay Pending until the timeout), and a selector that
        gives something other than a bool on a device."""
        if self.settings.node_selector:
            text = smoke_verdicts.node_selector_text(self.settings.node_selector)
            if not self.kube.node_names(text):
                raise smoke_verdicts.no_node_matches(text, self.kube.node_names(None))
        expressions = smoke_verdicts.selector_expressions(self.settings.selectors, self.settings.first_available)
        if not expressions:
            return
        items, _version = self.kube.slices(self.settings.driver)
        problem = cel.non_bool_problem(expressions, self.settings.driver, items)
        if problem:
            raise SmokeFailure("bad_input", problem)

    # ----- objects -------------------------------------------------------------------

    def create(self, kind, body):
        ns = self.namespace
        try:
            if kind == "Namespace":
                obj = self.kube.core.create_namespace(body)
            elif kind == "Pod":
                obj = self.kube.core.create_namespaced_pod(ns, body)
            else:
                obj = self.kube.custom.create_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, ns,
                                                                       PLURALS[kind], body)
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
        self.create("Namespace", smoke.namespace_manifest(self.namespace, self.settings.namespace_security))
        self.namespace_created = True
        smoke_cleanup.wait_for_default_service_account(self.kube, self.clock, self.namespace)

    def _claim_ref(self):
        s = self.settings
        spec = smoke.claim_spec(s.device_class, s.devices_per_claim, s.selectors, s.first_available)
        body, claim_ref = smoke.claim_object("smoke-%s" % self.run_id, self.run_id, spec, s.probe_pods > 1,
                                             "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION))
        self.create(body["kind"], body)
        return claim_ref

    # ----- waiting ---------------------------------------------------------------------

    def _wait_for(self, lister, list_fn, condition, description, timeout, recheck_every=None, **kwargs):
        return smoke_cleanup.wait_for(self.kube, self.clock, lister, list_fn, condition, description, timeout,
                                      recheck_every=recheck_every, **kwargs)

    def watch_pod(self, name, verdict, description):
        """Watch the one pod ``name`` until ``verdict`` (smoke_verdicts.holder_scheduled,
        smoke_share.holder_verdict, too_big_verdict) returns something, within what is left of the
        run's timeout; a timeout is the run's SmokeFailure, naming the pod's state."""
        list_fn = self.kube.core.list_namespaced_pod
        selector = "metadata.name=%s" % name
        try:
            return self._wait_for(
                lambda: self.kube.list_all(list_fn, namespace=self.namespace, field_selector=selector), list_fn,
                verdict, description, self._remaining(), namespace=self.namespace, field_selector=selector)
        except watch.WaitTimeout as exc:
            raise SmokeFailure("timeout", "%s; %s" % (exc, smoke_verdicts.describe_pods(exc.state)))

    def _pod_verdict(self, pods):
        """None while waiting; ("done", pods) when all completed; ("failed", SmokeFailure)."""
        # Record the allocation before any verdict: a pod the driver refused to prepare was
        # scheduled (so allocated) first, and a failure report must still say when that happened.
        if "allocated_after" not in self.timings and any(pod["spec"].get("nodeName") for pod in pods):
            self.timings["allocated_after"] = round(self.clock() - self.started, 3)
        expected = smoke_share.SHARE_PODS if self.settings.share_memory else self.settings.probe_pods
        return smoke_verdicts.pods_verdict(pods, expected, self.prepare_failures)

    def wait_for_pods(self, selector=None):
        remaining = self._remaining()
        selector = selector or self.selector
        list_fn = self.kube.core.list_namespaced_pod
        try:
            verdict, value = self._wait_for(
                lambda: self.kube.list_all(list_fn, namespace=self.namespace, label_selector=selector),
                list_fn, self._pod_verdict, "the smoke-test pods to complete", remaining,
                recheck_every=PREPARE_RECHECK, namespace=self.namespace, label_selector=selector)
        except watch.WaitTimeout as exc:
            retrying = "".join("; the kubelet is retrying pod %s after: %s" % item
                               for item in sorted(self.prepare_retries.items()))
            raise SmokeFailure("timeout", "%s; %s%s" % (exc, smoke_verdicts.describe_pods(exc.state), retrying))
        if verdict == "failed":
            raise value
        self.timings["completed_after"] = round(self.clock() - self.started, 3)
        return value

    def _in_background(self, list_fn, record, description, timeout, **kwargs):
        """Watch ``list_fn`` in a thread until ``timeout``, giving every listing to ``record``.
        A recorder that fails ends quietly: the pod wait and the verification report the gap."""
        def run():
            try:
                self._wait_for(lambda: self.kube.list_all(list_fn, **kwargs), list_fn, record, description,
                               timeout, **kwargs)
            except Exception:  # noqa: BLE001 - the recorder ends with the run
                pass

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def _record_claims(self, timeout):
        """Watch this run's claims in the background and keep, per claim, its allocation and
        every pod it was reserved for: once a probe pod completes, the claim controller
        releases (and for templates deletes) its claim, before we could read it."""
        def list_fn(**kw):
            return self.kube.custom.list_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, self.namespace,
                                                                  PLURALS["ResourceClaim"], **kw)

        def record(items):
            for claim in items:
                status = claim.get("status") or {}
                if status.get("allocation") and status.get("reservedFor"):
                    name = claim["metadata"]["name"]
                    with self.claims_seen:
                        self.claims[name] = smoke_verdicts.with_every_reservation(claim, self.claims.get(name))
                        self.claims_seen.notify_all()
            return None

        return self._in_background(list_fn, record, "claims", timeout, label_selector=self.selector)

    def _record_prepare_failures(self, timeout):
        """Watch the namespace's events for the kubelet's FailedPrepareDynamicResources: when the
        driver refuses a claim (a bad opaque config, a feature gate that is off) the kubelet
        only reports it there, and the pod would wait in ContainerCreating until the timeout.
        Errors the kubelet retries are kept for the timeout message, not taken as a verdict."""
        prefix = "smoke-%s-" % self.run_id

        def record(items):
            for event in items:
                found = smoke_verdicts.prepare_event(event, prefix)
                if found is None:
                    continue
                name, message, final = found
                if final:
                    self.prepare_failures.setdefault(name, message)
                else:
                    self.prepare_retries[name] = message
            return None

        return self._in_background(self.kube.core.list_namespaced_event, record, "events", timeout,
                                   namespace=self.namespace,
                                   field_selector="reason=%s" % smoke_verdicts.PREPARE_FAILED_REASON)

    # ----- verification ---------------------------------------------------------------

    def claims_of(self, pods):
        pairs = []
        for pod in pods:
            for name in smoke_checks.claim_names(pod):
                with self.claims_seen:
                    # The claim watch may deliver the allocation after the pod watch reported
                    # completion: seconds apart on a loaded API server (5 s was seen to be too
                    # short with the machine's two cores busy). Returns as soon as it arrives.
                    self.claims_seen.wait_for(lambda: self._reserved(name, pod), timeout=CLAIM_WATCH_LAG)
                if name not in self.claims:
                    raise SmokeFailure("not_allocated", "claim %s of pod %s was never seen allocated and reserved"
                                       % (name, pod["metadata"]["name"]))
                pairs.append((pod, self.claims[name]))
        return pairs

    def _reserved(self, name, pod):
        """Whether claim ``name`` was recorded reserved for ``pod`` (a claim held by several pods
        is recorded before the later ones use it)."""
        reserved = ((self.claims.get(name) or {}).get("status") or {}).get("reservedFor") or []
        return pod["metadata"]["name"] in [r.get("name") for r in reserved]

    def verify(self, pods):
        s = self.settings
        slices, _version = self.kube.slices(s.driver)
        rules = slice_info.taint_rules(self.kube)
        devices, outputs, chosen, seen_by_pod, sharing = [], [], None, {}, None
        for pod, claim in self.claims_of(pods):
            allocated = smoke_checks.check_allocation(pod, claim, slices, s.driver, rules)
            chosen = chosen or smoke_checks.chosen_alternative(claim["status"]["allocation"]["devices"]["results"])
            sharing = sharing or smoke_checks.effective_sharing(claim, s.driver)
            if s.verify_container:
                name, output = pod["metadata"]["name"], smoke_checks.probe_output(pod)
                seen_by_pod[name] = smoke_checks.check_container(output, allocated, s.probe, s.probe_pattern,
                                                                 s.probe_attribute)
                if sharing["strategy"] == "MPS" and s.probe == "nvidia":
                    smoke_checks.check_mps(output, name)
                outputs.append({"pod": name, "output": output})
            smoke_checks.add_devices(devices, allocated)
        if s.expect:
            smoke_checks.check_expectations(devices, s.expect)
        if len(seen_by_pod) > 1:
            smoke_checks.check_same_devices(seen_by_pod)
        return smoke_checks.run_result(pods, devices, outputs, chosen, seen_by_pod, sharing)
