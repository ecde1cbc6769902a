# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Move the pods that hold nvidia.com/gpu off nodes about to go to DRA, and let the nodes go again.

``drain``: cordon each node (marked as ours), evict its holders through the Eviction API, which
honours PodDisruptionBudgets, and wait, with a watch, until they are gone; when a budget keeps
an eviction refused past the timeout, lift the cordons made and fail naming the budgets.
``release``: once a node cordoned by us offers no nvidia.com/gpu any more (the device plugin has
left it), lift the cordon. The decisions are in gpu_handover.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import drain_budgets
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_handover as handover
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException, api_error_message

# How often a refused eviction is asked again while waiting: a budget allows a disruption once
# another replica is Ready, which no event on the evicted pod announces.
EVICTION_RETRY = 5
RECHECK = 2


class DrainFailed(Exception):
    def __init__(self, message, **details):
        super(DrainFailed, self).__init__(message)
        self.details = details


class DevicePluginDrain:
    def __init__(self, kube, clock=time.monotonic):
        self.kube = kube
        self.clock = clock

    def _node(self, name):
        return self.kube.api.sanitize_for_serialization(self.kube.core.read_node(name))

    def _pods_on(self, node):
        return self.kube.list_all(self.kube.core.list_pod_for_all_namespaces, field_selector="spec.nodeName=" + node)

    def holders(self, nodes):
        """Each holder with its pod's uid, so that a replacement of the same name (a StatefulSet's)
        is not taken for the pod that was evicted."""
        found = []
        for node in nodes:
            pods, _version = self._pods_on(node)
            meta = dict(((p["metadata"]["namespace"], p["metadata"]["name"]), p["metadata"]) for p in pods)
            for holder in handover.device_plugin_holders(pods, [node]):
                pod = meta[(holder["namespace"], holder["name"])]
                holder.update(uid=pod.get("uid"), labels=pod.get("labels") or {})
                found.append(holder)
        return found

    def _evict(self, holder):
        """Ask for one eviction; returns None when accepted (or the pod is gone), else the refusal."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": holder["name"], "namespace": holder["namespace"]},
                "deleteOptions": {"preconditions": {"uid": holder["uid"]}}}
        try:
            self.kube.core.create_namespaced_pod_eviction(holder["name"], holder["namespace"], body)
        except ApiException as exc:
            if exc.status in (404, 409):  # gone, or replaced by a pod of the same name
                return None
            if exc.status == 429:  # a PodDisruptionBudget allows no disruption now
                return api_error_message(exc)
            raise
        return None

    def _budgets(self, holders):
        budgets = []
        for namespace in sorted(set(h["namespace"] for h in holders)):
            items, _version = self.kube.list_all(self.kube.policy.list_namespaced_pod_disruption_budget,
                                                 namespace=namespace)
            budgets.extend(items)
        pods = [{"metadata": {"namespace": h["namespace"], "labels": h["labels"]}} for h in holders]
        return drain_budgets.blocking(budgets, pods)

    def _wait_gone(self, node, holders, deadline):
        """Watch the node's pods until no pod there holds nvidia.com/gpu; ask again, now and then,
        for the evictions a budget refused. A replacement the scheduler placed before it saw the
        cordon (its cache lags the API a moment) is evicted too, and added to ``holders``."""
        state = {"asked": self.clock()}

        def condition(pods):
            known = set(h["uid"] for h in holders)
            by_key = dict(((p["metadata"]["namespace"], p["metadata"]["name"]), p["metadata"]) for p in pods)
            current = handover.device_plugin_holders(pods, [node])
            for holder in current:
                meta = by_key[(holder["namespace"], holder["name"])]
                if meta.get("uid") not in known:
                    holder.update(uid=meta.get("uid"), labels=meta.get("labels") or {})
                    holders.append(holder)
                    refusal = self._evict(holder)
                    if refusal:
                        holder["refused"] = refusal
            if not current:
                return True
            pending = [h for h in holders if h["node"] == node and h.get("refused")]
            if pending and self.clock() - state["asked"] >= EVICTION_RETRY:
                state["asked"] = self.clock()
                for holder in pending:
                    refusal = self._evict(holder)
                    holder["refused"] = refusal
                    if refusal is None:
                        holder.pop("refused")
            return None

        watcher = watch.kube_watcher(self.kube.core.list_pod_for_all_namespaces, self.kube.api,
                                     field_selector="spec.nodeName=" + node)
        watch.wait_until(lambda: self._pods_on(node), watcher, condition, max(1, deadline - self.clock()),
                         "the pods holding nvidia.com/gpu on %s to be gone" % node, clock=self.clock,
                         recheck_every=RECHECK)

    def drain(self, nodes, timeout, check_mode):
        holders = self.holders(nodes)
        result = {"changed": bool(holders), "evicted": [], "cordoned": [], "holders": [_plain(h) for h in holders]}
        if not holders:
            return result
        drained = sorted(set(h["node"] for h in holders))
        patches = dict((n, handover.cordon_patch(self._node(n))) for n in drained)
        result["cordoned"] = [n for n in drained if patches[n]]
        if check_mode:
            result["evicted"] = result["holders"]
            return result
        for node in result["cordoned"]:
            self.kube.core.patch_node(node, patches[node])
        deadline = self.clock() + timeout
        for holder in holders:
            refusal = self._evict(holder)
            if refusal:
                holder["refused"] = refusal
        try:
            for node in drained:
                self._wait_gone(node, holders, deadline)
        except watch.WaitTimeout:
            left = self.holders(drained)
            gone = [h for h in holders if h["uid"] not in set(x["uid"] for x in left)]
            budgets = self._budgets([h for h in holders if h.get("refused")])
            released = self._release_now(result["cordoned"])
            raise DrainFailed(handover.eviction_refusal(left, budgets, gone, released, timeout),
                              holders=[_plain(h) for h in left], evicted=[_plain(h) for h in gone],
                              budgets=budgets, released=released)
        result["evicted"] = [_plain(h) for h in holders]
        return result

    def _release_now(self, nodes):
        released = []
        for node in nodes:
            patch = handover.release_patch(self._node(node))
            if patch:
                self.kube.core.patch_node(node, patch)
                released.append(node)
        return released

    def release(self, nodes, timeout, check_mode):
        """Wait until none of ``nodes`` offers nvidia.com/gpu (the device plugin has left them),
        then lift our cordon from those of them we cordoned. Empty ``nodes``: the nodes we cordoned."""
        listed, _version = self.kube.list_all(self.kube.core.list_node)
        ours = sorted(n["metadata"]["name"] for n in listed if handover.cordoned_by_us(n)
                      and (not nodes or n["metadata"]["name"] in nodes))
        waited = sorted(set(nodes or ours))
        result = {"changed": bool(ours), "released": ours, "waited_for": waited}
        if check_mode or not waited:
            return result

        def offering(items):
            return sorted(n["metadata"]["name"] for n in items
                          if n["metadata"]["name"] in waited and gpu_workloads.offers_device_plugin_gpus(n))

        watcher = watch.kube_watcher(self.kube.core.list_node, self.kube.api)
        try:
            watch.wait_until(lambda: self.kube.list_all(self.kube.core.list_node), watcher,
                             lambda items: not offering(items), timeout,
                             "the device plugin to leave %s (no nvidia.com/gpu allocatable)" % ", ".join(waited),
                             clock=self.clock)
        except watch.WaitTimeout as exc:
            still = offering(exc.state)
            raise DrainFailed("%s: %s still offer(s) nvidia.com/gpu, so a device plugin still runs there%s. The GPU "
                              "Operator's device plugin leaves a node labelled nvidia.com/gpu.deploy.device-plugin="
                              "false; a device plugin deployed otherwise (its own DaemonSet or chart) must be taken "
                              "off these nodes by hand (kubectl get pods -A -o wide --field-selector spec.nodeName="
                              "%s). The DRA label was not set. Run again once it is gone."
                              % (exc, ", ".join(still),
                                 "; cordoned by this collection until it is gone: %s" % ", ".join(
                                     n for n in ours if n in still) if any(n in still for n in ours) else "",
                                 still[0] if still else ""),
                              still_offering=still)
        result["released"] = self._release_now(ours)
        return result


def _plain(holder):
    return dict((k, holder[k]) for k in ("namespace", "name", "node", "gpus"))
