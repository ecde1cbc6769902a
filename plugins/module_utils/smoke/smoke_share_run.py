# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke test of a share of a card (share_memory) against the API: ShareRun, what a SmokeRun
(smoke_run.py) does for share_memory: place two shares of one device, probe them and ask for a
claim too large. The objects and verdicts are smoke_share.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_share
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION, ApiException
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import SmokeFailure


class ShareRun:
    """The share_memory part of ``smoke_run`` (a SmokeRun): it reads the run's settings, kube,
    run_id, selector, clock and timings, and makes and watches its objects through the run's own
    steps (create, watch_pod, wait_for_pods, claims_of, verify), so that what it creates is
    recorded for the run's cleanup."""

    def __init__(self, smoke_run):
        self.smoke_run = smoke_run

    def run(self):
        """Two pods, each with a claim of its own of share_memory, on one device: the first share
        where the scheduler puts it, the second pinned to that device; both probes must see its
        UUID; then a claim larger than what is left on every device must be Unschedulable."""
        run = self.smoke_run
        s = run.settings
        # Held until the cleanup; past the run's timeout the pods end by themselves.
        hold = int(s.timeout) + 60
        first = self._hold_share(0, s.selectors, hold)
        slices, _version = run.kube.slices(s.driver)
        device = self._published(slices, smoke_share.share_of(first))
        second = self._hold_share(1, list(s.selectors) + [smoke_share.pin_selector(s.driver, device)], hold)
        shares = [smoke_share.share_of(first), smoke_share.share_of(second)]
        smoke_share.check_shares(shares, s.share_memory)
        for index in range(smoke_share.SHARE_PODS):
            run.create("Pod", smoke_share.share_pod(smoke.PROBE, "smoke-%s-%d" % (run.run_id, index), run.run_id,
                                                    s, "smoke-%s-share-%d" % (run.run_id, index), hold))
        pods = run.wait_for_pods("%s,%s=%s" % (run.selector, smoke.ROLE_LABEL, smoke.PROBE))
        result = run.verify(pods)
        free = self._free_shares(slices)
        result["share"] = {"memory": s.share_memory, "device": {
            "node": device["node"], "pool": shares[0]["pool"], "name": shares[0]["device"],
            "uuid": smoke_share.published_attribute(device, "uuid")}, "claims": shares,
            "free": [dict((k, v) for k, v in f.items() if k != "free_bytes") for f in free],
            "too_big": self._too_big(free, hold)}
        result["report"] = smoke_share.share_report(result["share"],
                                                    smoke_share.published_attribute(device, "productName"))
        result["timings"] = dict(run.timings, verified_after=round(run.clock() - run.started, 3))
        result["namespace"] = run.namespace
        return result

    def check_kept(self):
        """Refuse before anything is made where the API server drops a claim's capacity request
        (Kubernetes 1.35 without DRAConsumableCapacity): every claim would take a whole GPU. The
        dry run goes to the test's namespace when it exists, else to default."""
        run = self.smoke_run
        try:
            run.kube.core.read_namespace(run.namespace)
            where = run.namespace
        except ApiException as exc:
            if exc.status != 404:
                raise
            where = consumable_capacity.PROBE_NAMESPACE
        kept = consumable_capacity.availability(run.kube, where)
        if not kept["available"]:
            raise SmokeFailure("capacity_dropped", "share_memory %s cannot be tested here: %s" % (
                run.settings.share_memory, kept["reason"]))

    def _hold_share(self, index, selectors, hold):
        """Claim ``smoke-<run>-share-<index>`` and the pod that holds it, once the pod runs:
        the claim, allocated and reserved."""
        run = self.smoke_run
        s = run.settings
        name = "smoke-%s-share-%d" % (run.run_id, index)
        run.create("ResourceClaim", smoke_share.share_claim(name, run.run_id, s.device_class, s.share_memory,
                                                            selectors, "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION)))
        holder = "smoke-%s-hold-%d" % (run.run_id, index)
        run.create("Pod", smoke_share.share_pod(smoke.HOLDER, holder, run.run_id, s, name, hold))
        what = "pod %s, holding a claim of %s%s, to run" % (
            holder, s.share_memory, " on the first one's device" if index else "")
        verdict, value = run.watch_pod(holder, smoke_share.holder_verdict, what)
        if verdict == "failed":
            if not index and value.kind == "unschedulable":
                message = value.details.get("scheduler_message")
                free = self._free_shares(run.kube.slices(s.driver)[0])
                raise SmokeFailure("unschedulable", "the first share cannot be placed: %s"
                                   % smoke_share.unschedulable_why(s.share_memory, free, message),
                                   scheduler_message=message)
            if index and value.kind == "unschedulable":
                raise SmokeFailure("not_shared", "the device holding the first share of %s did not take a second "
                                   "one: %s. With the driver's ConsumableShares off each claim takes a whole GPU"
                                   % (s.share_memory, value), scheduler_message=value.details.get("scheduler_message"))
            raise value
        return run.claims_of([value])[0][1]

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
        run = self.smoke_run
        s = run.settings
        device_class = run.kube.custom.get_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "deviceclasses",
                                                                 s.device_class)
        expressions = [((x or {}).get("cel") or {}).get("expression")
                       for x in (device_class.get("spec") or {}).get("selectors") or []]
        try:
            selectors = cel.Selectors([e for e in expressions if e] + list(s.selectors))
        except cel.Unsupported:
            selectors = None  # every device of the driver, then: a larger figure, never a smaller one

        def matches(device):
            return selectors is None or selectors.match_cached(s.driver, device)[0]
        return smoke_share.free_shares(slices, run.kube.claims(), s.driver, matches)

    def _too_big(self, free, hold):
        """A claim larger than what is left on every device: Unschedulable, and why in words."""
        run = self.smoke_run
        s = run.settings
        memory = smoke_share.too_big(free)
        name = "smoke-%s-too-big" % run.run_id
        run.create("ResourceClaim", smoke_share.share_claim(name, run.run_id, s.device_class, memory,
                                                            s.selectors, "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION)))
        run.create("Pod", smoke_share.share_pod(smoke.TOO_BIG, name, run.run_id, s, name, hold))
        verdict, value = run.watch_pod(name, smoke_share.too_big_verdict,
                                       "the scheduler's verdict on pod %s, asking for %s" % (name, memory))
        if verdict == "scheduled":
            largest = free[0]["free"] if free else "none"
            raise SmokeFailure("too_big_scheduled", "pod %s asking for %s was placed on %s, although the largest free "
                               "share was %s: the scheduler's accounting differs from the allocations read, or a "
                               "share was freed meanwhile" % (name, memory, value["spec"]["nodeName"], largest))
        return {"memory": memory, "pod": name, "unschedulable": True, "scheduler_message": value,
                "why": smoke_share.unschedulable_why(memory, free, value)}
