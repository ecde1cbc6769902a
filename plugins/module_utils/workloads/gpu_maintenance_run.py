# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_maintenance module's calls to the cluster: probe, read, apply the plan
(gpu_maintenance.py) and wait, with a watch, until no pod uses the devices taken out."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taint_support
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_maintenance as maint
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION, ApiException

PLURAL = "devicetaintrules"


class GpuMaintenance:
    def __init__(self, kube, clock=time.monotonic):
        self.kube = kube
        self.clock = clock

    def probe(self):
        """Refuse (MaintenanceRefused) where the API server serves no v1 DeviceTaintRules."""
        why = device_taint_support.rules_refused(self.kube)
        if why is not None:
            raise maint.MaintenanceRefused(maint.unserved(self.kube.server_version(), why))

    def rules(self):
        return self.kube.list_resource(PLURAL)[0]

    def holders(self, devices):
        pods, _version = self.kube.list_all(self.kube.core.list_pod_for_all_namespaces)
        return maint.pods_on(devices, self.kube.claims(), pods)

    def _budgets(self, holders):
        budgets = []
        for namespace in sorted(set(h["namespace"] for h in holders)):
            budgets.extend(self.kube.list_all(self.kube.policy.list_namespaced_pod_disruption_budget,
                                              namespace=namespace)[0])
        return maint.refusing_budgets(budgets, holders)

    def run(self, state, by_name, uuids, selector, effect, reason, timeout, check_mode):
        self.probe()
        devices = maint.published(self.kube.slices(maint.DRIVER)[0])
        chosen = maint.choose(devices, by_name, uuids, selector) if (by_name or uuids or selector) else []
        before = self.rules()
        steps = maint.plan(before, chosen, state, effect, reason)
        holders = self.holders(chosen) if state == "out_of_service" and effect == "NoExecute" else []
        result = {"devices": [dict((k, d[k]) for k in ("node", "device", "uuid")) for d in chosen],
                  "created": [r["metadata"]["name"] for r in steps["create"]],
                  "updated": [r["metadata"]["name"] for r in steps["update"]],
                  "deleted": steps["delete"], "evicted": [maint.plain(h) for h in holders]}
        result["changed"] = bool(steps["create"] or steps["update"] or steps["delete"])
        after = dict(maint.summary(before))
        for body in steps["create"] + steps["update"]:
            after.update(maint.summary([body]))
        for name in steps["delete"]:
            after.pop(name, None)
        result["diff"] = {"before": {"rules": maint.summary(before)}, "after": {"rules": after}}
        if holders:
            budgets = self._budgets(holders)
            if budgets:
                raise maint.MaintenanceRefused(
                    "PodDisruptionBudget(s) %s allow no disruption of pods on the chosen GPUs (%s); the device-taint "
                    "eviction would delete them without asking, so nothing was changed. Scale the workload up or "
                    "wait until the budget allows a disruption, or take the GPUs out with effect NoSchedule and let "
                    "the pods finish" % (", ".join(budgets),
                                         ", ".join("%s/%s" % (h["namespace"], h["name"]) for h in holders)),
                    budgets=budgets, pods=result["evicted"])
        if check_mode:
            return result
        for body in steps["create"]:
            self.kube.custom.create_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, body)
        for body in steps["update"]:
            self.kube.custom.replace_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, PLURAL,
                                                           body["metadata"]["name"], body)
        for name in steps["delete"]:
            try:
                self.kube.custom.delete_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        if holders:
            self._wait_free(chosen, timeout)
        return result

    def _wait_free(self, devices, timeout):
        """Watch the pods until none of them uses one of ``devices`` (the eviction controller
        deletes them); the claims are read again on each change."""
        def condition(pods):
            return not maint.pods_on(devices, self.kube.claims(), pods) or None

        watcher = watch.kube_watcher(self.kube.core.list_pod_for_all_namespaces, self.kube.api)
        try:
            watch.wait_until(lambda: self.kube.list_all(self.kube.core.list_pod_for_all_namespaces), watcher,
                             condition, timeout, "the pods on %s to be evicted" % ", ".join(
                                 "%s/%s" % (d["node"], d["device"]) for d in devices), clock=self.clock)
        except watch.WaitTimeout as exc:
            left = maint.pods_on(devices, self.kube.claims(), exc.state)
            raise maint.MaintenanceRefused(
                "%s: still running there: %s. The DeviceTaintRules stay (NoExecute): kube-controller-manager's "
                "device-taint-eviction-controller deletes these pods; check that it runs (its --controllers) and "
                "look at the rules' status conditions (kubectl get devicetaintrules -o yaml)"
                % (exc, ", ".join("%s/%s" % (h["namespace"], h["name"]) for h in left)),
                pods=[maint.plain(h) for h in left])
