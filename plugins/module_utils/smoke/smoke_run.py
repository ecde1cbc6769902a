# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one smoke test against a cluster: create, wait (watch), verify; then clean up.

The verdicts (what a pod's status means, whether the devices are right) are in smoke.py;
this file only talks to the API. SmokeRun does the run, SmokeCleanup removes what it made,
and run_and_clean_up() is the module's whole work: the run, then its cleanup, whatever the run did.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading
import time
import uuid

from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke
from ansible_collections.dra.gpu.plugins.module_utils.dra import slices as slice_info
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import PLURALS, RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure

# How long the claim watch may trail the pod watch before a claim counts as never allocated.
CLAIM_WATCH_LAG = 30
# How often the pod wait looks at what the event recorder found, without a pod event.
PREPARE_RECHECK = 3


def wait_for(kube, clock, lister, list_fn, condition, description, timeout, recheck_every=None, **kwargs):
    """watch.wait_until over ``list_fn``'s watch; returns what ``condition`` returned."""
    watcher = watch.kube_watcher(list_fn, kube.api, **kwargs)
    result, _stats = watch.wait_until(lister, watcher, condition, timeout, description, clock=clock,
                                      recheck_every=recheck_every)
    return result


def wait_for_default_service_account(kube, clock, namespace, timeout=30):
    """Pods in a namespace just made need its default service account, which a controller adds."""
    list_fn = kube.core.list_namespaced_service_account
    wait_for(kube, clock, lambda: kube.list_all(list_fn, namespace=namespace), list_fn,
             lambda items: any(i["metadata"]["name"] == "default" for i in items) or None,
             "the default service account of namespace %s" % namespace, timeout, namespace=namespace)


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
            self.check_shares_kept()
        self._ensure_namespace()
        self._record_claims(self.settings.timeout)
        self._record_prepare_failures(self.settings.timeout)
        if self.settings.share_memory:
            return self.run_share()
        claim_ref = self._claim_ref()
        s = self.settings
        if s.probe_pods > 1:
            self._hold_shared_claim(claim_ref["resourceClaimName"])
        for index in range(s.probe_pods):
            probe = smoke.pod_manifest("smoke-%s-%d" % (self.run_id, index), self.run_id, s.image, s.command,
                                       claim_ref, s.node_selector, s.tolerations, s.probe_security, s.pod_annotations)
            probe["metadata"]["labels"][smoke.ROLE_LABEL] = smoke.PROBE
            self._create("Pod", probe)
        pods = self._wait_for_pods("%s,%s=%s" % (self.selector, smoke.ROLE_LABEL, smoke.PROBE))
        result = self._verify(pods)
        result["timings"] = dict(self.timings, verified_after=round(self.clock() - self.started, 3))
        result["namespace"] = self.namespace
        return result

    # ----- a share of a card -------------------------------------------------------------

    def run_share(self):
        """Two pods, each with a claim of its own of share_memory, on one device: the first share
        where the scheduler puts it, the second pinned to that device; both probes must see its
        UUID; then a claim larger than what is left on every device must be Unschedulable."""
        s = self.settings
        # Held until the cleanup; past the run's timeout the pods end by themselves.
        hold = int(s.timeout) + 60
        first = self._hold_share(0, s.selectors, hold)
        slices, _version = self.kube.slices(s.driver)
        device = self._published(slices, smoke.share_of(first))
        second = self._hold_share(1, list(s.selectors) + [smoke.pin_selector(s.driver, device)], hold)
        shares = [smoke.share_of(first), smoke.share_of(second)]
        smoke.check_shares(shares, s.share_memory)
        for index in range(smoke.SHARE_PODS):
            self._create("Pod", smoke.share_pod(smoke.PROBE, "smoke-%s-%d" % (self.run_id, index), self.run_id, s,
                                                "smoke-%s-share-%d" % (self.run_id, index), hold))
        pods = self._wait_for_pods("%s,%s=%s" % (self.selector, smoke.ROLE_LABEL, smoke.PROBE))
        result = self._verify(pods)
        free = self._free_shares(slices)
        result["share"] = {"memory": s.share_memory, "device": {
            "node": device["node"], "pool": shares[0]["pool"], "name": shares[0]["device"],
            "uuid": smoke.published_attribute(device, "uuid")}, "claims": shares,
            "free": [dict((k, v) for k, v in f.items() if k != "free_bytes") for f in free],
            "too_big": self._too_big(free, hold)}
        result["report"] = smoke.share_report(result["share"], smoke.published_attribute(device, "productName"))
        result["timings"] = dict(self.timings, verified_after=round(self.clock() - self.started, 3))
        result["namespace"] = self.namespace
        return result

    def check_shares_kept(self):
        """Refuse before anything is made where the API server drops a claim's capacity request
        (Kubernetes 1.35 without DRAConsumableCapacity): every claim would take a whole GPU. The
        dry run goes to the test's namespace when it exists, else to default."""
        try:
            self.kube.core.read_namespace(self.namespace)
            where = self.namespace
        except ApiException as exc:
            if exc.status != 404:
                raise
            where = consumable_capacity.PROBE_NAMESPACE
        kept = consumable_capacity.availability(self.kube, where)
        if not kept["available"]:
            raise SmokeFailure("capacity_dropped", "share_memory %s cannot be tested here: %s" % (
                self.settings.share_memory, kept["reason"]))

    def _hold_shared_claim(self, claim_name):
        """The pod that keeps the shared claim reserved (smoke.claim_holder), once it is scheduled."""
        s = self.settings
        holder = "smoke-%s-hold" % self.run_id
        self._create("Pod", smoke.claim_holder(holder, self.run_id, s, claim_name, int(s.timeout) + 60))
        verdict, value = self._watch_pod(holder, smoke.holder_scheduled,
                                         "pod %s, holding the shared claim %s, to be scheduled" % (holder, claim_name))
        if verdict == "failed":
            raise value

    def _hold_share(self, index, selectors, hold):
        """Claim ``smoke-<run>-share-<index>`` and the pod that holds it, once the pod runs:
        the claim, allocated and reserved."""
        s = self.settings
        name = "smoke-%s-share-%d" % (self.run_id, index)
        self._create("ResourceClaim", smoke.share_claim(name, self.run_id, s.device_class, s.share_memory, selectors,
                                                        "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION)))
        holder = "smoke-%s-hold-%d" % (self.run_id, index)
        self._create("Pod", smoke.share_pod(smoke.HOLDER, holder, self.run_id, s, name, hold))
        what = "pod %s, holding a claim of %s%s, to run" % (
            holder, s.share_memory, " on the first one's device" if index else "")
        verdict, value = self._watch_pod(holder, smoke.holder_verdict, what)
        if verdict == "failed":
            if not index and value.kind == "unschedulable":
                message = value.details.get("scheduler_message")
                free = self._free_shares(self.kube.slices(s.driver)[0])
                raise SmokeFailure("unschedulable", "the first share cannot be placed: %s" % smoke.unschedulable_why(
                    s.share_memory, free, message), scheduler_message=message)
            if index and value.kind == "unschedulable":
                raise SmokeFailure("not_shared", "the device holding the first share of %s did not take a second "
                                   "one: %s. With the driver's ConsumableShares off each claim takes a whole GPU"
                                   % (s.share_memory, value), scheduler_message=value.details.get("scheduler_message"))
            raise value
        return self._claims_of([value])[0][1]

    def _remaining(self):
        return max(1, self.settings.timeout - (self.clock() - self.started))

    def _published(self, slices, share):
        """The slice entry of the device a share is on, with its node, from the pool generation
        the allocator used (slice_devices.selected_devices)."""
        entries, _problems = slice_devices.selected_devices(slices, driver=share["driver"], pool=share["pool"])
        for _item, device, node in entries:
            if device["name"] == share["device"]:
                return dict(device, node=node)
        raise SmokeFailure("unknown_device", "allocated device %s/%s/%s is in no ResourceSlice" % (
            share["driver"], share["pool"], share["device"]))

    def _free_shares(self, slices):
        """What is left of each device the class (and the selectors) select, from every claim's
        allocation in the cluster."""
        s = self.settings
        device_class = self.kube.custom.get_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "deviceclasses",
                                                                  s.device_class)
        expressions = [((x or {}).get("cel") or {}).get("expression")
                       for x in (device_class.get("spec") or {}).get("selectors") or []]
        try:
            selectors = cel.Selectors([e for e in expressions if e] + list(s.selectors))
        except cel.Unsupported:
            selectors = None  # every device of the driver, then: a larger figure, never a smaller one

        def matches(device):
            return selectors is None or selectors.match_cached(s.driver, device)[0]
        return smoke.free_shares(slices, self.kube.claims(), s.driver, matches)

    def _too_big(self, free, hold):
        """A claim larger than what is left on every device: Unschedulable, and why in words."""
        s = self.settings
        memory = smoke.too_big(free)
        name = "smoke-%s-too-big" % self.run_id
        self._create("ResourceClaim", smoke.share_claim(name, self.run_id, s.device_class, memory, s.selectors,
                                                        "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION)))
        self._create("Pod", smoke.share_pod(smoke.TOO_BIG, name, self.run_id, s, name, hold))
        verdict, value = self._watch_pod(name, smoke.too_big_verdict,
                                         "the scheduler's verdict on pod %s, asking for %s" % (name, memory))
        if verdict == "scheduled":
            largest = free[0]["free"] if free else "none"
            raise SmokeFailure("too_big_scheduled", "pod %s asking for %s was placed on %s, although the largest free "
                               "share was %s: the scheduler's accounting differs from the allocations read, or a "
                               "share was freed meanwhile" % (name, memory, value["spec"]["nodeName"], largest))
        return {"memory": memory, "pod": name, "unschedulable": True, "scheduler_message": value,
                "why": smoke.unschedulable_why(memory, free, value)}

    def cleanup(self, timeout=60):
        """Delete what this run created and wait until it is gone; returns what is left."""
        return SmokeCleanup(self.kube, self.namespace, self.run_id, self.clock).remove(
            self.created, self.namespace_created, timeout)

    def check_cluster(self):
        """Refuse at once, before creating anything, what no wait can fix: a node selector that
        matches no node (the probe would stay Pending until the timeout), and a selector that
        gives something other than a bool on a device."""
        if self.settings.node_selector:
            text = smoke.node_selector_text(self.settings.node_selector)
            if not self.kube.node_names(text):
                raise smoke.no_node_matches(text, self.kube.node_names(None))
        expressions = smoke.selector_expressions(self.settings.selectors, self.settings.first_available)
        if not expressions:
            return
        items, _version = self.kube.slices(self.settings.driver)
        problem = cel.non_bool_problem(expressions, self.settings.driver, items)
        if problem:
            raise SmokeFailure("bad_input", problem)

    # ----- objects -------------------------------------------------------------------

    def _create(self, kind, body):
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
        self._create("Namespace", smoke.namespace_manifest(self.namespace, self.settings.namespace_security))
        self.namespace_created = True
        wait_for_default_service_account(self.kube, self.clock, self.namespace)

    def _claim_ref(self):
        s = self.settings
        spec = smoke.claim_spec(s.device_class, s.devices_per_claim, s.selectors, s.first_available)
        body, claim_ref = smoke.claim_object("smoke-%s" % self.run_id, self.run_id, spec, s.probe_pods > 1,
                                             "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION))
        self._create(body["kind"], body)
        return claim_ref

    # ----- waiting ---------------------------------------------------------------------

    def _wait_for(self, lister, list_fn, condition, description, timeout, recheck_every=None, **kwargs):
        return wait_for(self.kube, self.clock, lister, list_fn, condition, description, timeout,
                        recheck_every=recheck_every, **kwargs)

    def _watch_pod(self, name, verdict, description):
        """Watch the one pod ``name`` until ``verdict`` (smoke.holder_scheduled, holder_verdict,
        too_big_verdict) returns something, within what is left of the run's timeout; a timeout
        is the run's SmokeFailure, naming the pod's state."""
        list_fn = self.kube.core.list_namespaced_pod
        selector = "metadata.name=%s" % name
        try:
            return self._wait_for(
                lambda: self.kube.list_all(list_fn, namespace=self.namespace, field_selector=selector), list_fn,
                verdict, description, self._remaining(), namespace=self.namespace, field_selector=selector)
        except watch.WaitTimeout as exc:
            raise SmokeFailure("timeout", "%s; %s" % (exc, smoke.describe_pods(exc.state)))

    def _pod_verdict(self, pods):
        """None while waiting; ("done", pods) when all completed; ("failed", SmokeFailure)."""
        # Record the allocation before any verdict: a pod the driver refused to prepare was
        # scheduled (so allocated) first, and a failure report must still say when that happened.
        if "allocated_after" not in self.timings and any(pod["spec"].get("nodeName") for pod in pods):
            self.timings["allocated_after"] = round(self.clock() - self.started, 3)
        expected = smoke.SHARE_PODS if self.settings.share_memory else self.settings.probe_pods
        return smoke.pods_verdict(pods, expected, self.prepare_failures)

    def _wait_for_pods(self, selector=None):
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
            raise SmokeFailure("timeout", "%s; %s%s" % (exc, smoke.describe_pods(exc.state), retrying))
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
                        self.claims[name] = smoke.with_every_reservation(claim, self.claims.get(name))
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
                found = smoke.prepare_event(event, prefix)
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
                                   field_selector="reason=%s" % smoke.PREPARE_FAILED_REASON)

    # ----- verification ---------------------------------------------------------------

    def _claims_of(self, pods):
        pairs = []
        for pod in pods:
            for name in smoke.claim_names(pod):
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

    def _verify(self, pods):
        s = self.settings
        slices, _version = self.kube.slices(s.driver)
        rules = slice_info.taint_rules(self.kube)
        devices, outputs, chosen, seen_by_pod, sharing = [], [], None, {}, None
        for pod, claim in self._claims_of(pods):
            allocated = smoke.check_allocation(pod, claim, slices, s.driver, rules)
            chosen = chosen or smoke.chosen_alternative(claim["status"]["allocation"]["devices"]["results"])
            sharing = sharing or smoke.effective_sharing(claim, s.driver)
            if s.verify_container:
                name, output = pod["metadata"]["name"], smoke.probe_output(pod)
                seen_by_pod[name] = smoke.check_container(output, allocated, s.probe, s.probe_pattern,
                                                          s.probe_attribute)
                if sharing["strategy"] == "MPS" and s.probe == "nvidia":
                    smoke.check_mps(output, name)
                outputs.append({"pod": name, "output": output})
            smoke.add_devices(devices, allocated)
        if s.expect:
            smoke.check_expectations(devices, s.expect)
        if len(seen_by_pod) > 1:
            smoke.check_same_devices(seen_by_pod)
        return smoke.run_result(pods, devices, outputs, chosen, seen_by_pod, sharing)


class SmokeCleanup:
    """Removes what one run created in ``namespace`` and waits until it is gone: apart from the
    run, so that a run that passed, failed or timed out is cleaned up alike."""

    def __init__(self, kube, namespace, run_id, clock=time.monotonic):
        self.kube = kube
        self.namespace = namespace
        self.run_id = run_id
        self.clock = clock
        self.selector = "%s=%s" % (smoke.RUN_LABEL, run_id)

    def remove(self, created, namespace_created, timeout=60):
        """Delete ``created`` ([(kind, name)], in creation order) newest first; returns what is
        still there after ``timeout`` seconds, as Kind/name."""
        if not created:
            return []
        for kind, name in reversed(created):
            try:
                if kind == "Pod":
                    self.kube.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
                elif kind == "Namespace":
                    self.kube.core.delete_namespace(name)
                else:
                    self.kube.custom.delete_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION,
                                                                     self.namespace, PLURALS[kind], name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        pods = [name for kind, name in created if kind == "Pod"]

        def gone(_items):
            return None if self.leftovers(pods, namespace_created) else True

        # Watch what goes last: the namespace when the run created it, else the claims
        # (generated claims are removed by the garbage collector after their pods).
        if namespace_created:
            list_fn = self.kube.core.list_namespace
            kwargs = {"field_selector": "metadata.name=%s" % self.namespace}
        else:
            def list_fn(**kw):
                return self.kube.custom.list_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION,
                                                                      self.namespace, PLURALS["ResourceClaim"], **kw)
            kwargs = {}
        try:
            wait_for(self.kube, self.clock, lambda: self.kube.list_all(list_fn, **kwargs), list_fn, gone,
                     "the smoke test's objects to be deleted", timeout, **kwargs)
        except watch.WaitTimeout:
            return self.leftovers(pods, namespace_created)
        return []

    def leftovers(self, pod_names, namespace_created):
        """What of the run is still there: its namespace when it created it, else its pods, claims
        (its own and those generated for its pods) and claim templates."""
        if namespace_created:
            try:
                self.kube.core.read_namespace(self.namespace)
                return ["Namespace/%s" % self.namespace]
            except ApiException as exc:
                if exc.status != 404:
                    raise
            return []
        pods, _v = self.kube.list_all(self.kube.core.list_namespaced_pod, namespace=self.namespace,
                                      label_selector=self.selector)
        left = ["Pod/%s" % p["metadata"]["name"] for p in pods]
        claims, _v = self.kube.list_resource(PLURALS["ResourceClaim"], namespace=self.namespace)
        left += ["ResourceClaim/%s" % name for name in smoke.own_claims(claims, self.run_id, pod_names)]
        templates, _v = self.kube.list_resource(PLURALS["ResourceClaimTemplate"], namespace=self.namespace,
                                                label_selector=self.selector)
        left += ["ResourceClaimTemplate/%s" % t["metadata"]["name"] for t in templates]
        return left
