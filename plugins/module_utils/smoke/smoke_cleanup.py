# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke test's waits on the API (wait_for: a watch until a condition holds) and
SmokeCleanup, which removes what a run made. The packing check (sharing/packing_run.py) waits
and removes its objects with these too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_verdicts
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import PLURALS, RESOURCE_GROUP, RESOURCE_VERSION, ApiException


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
        left += ["ResourceClaim/%s" % name for name in smoke_verdicts.own_claims(claims, self.run_id, pod_names)]
        templates, _v = self.kube.list_resource(PLURALS["ResourceClaimTemplate"], namespace=self.namespace,
                                                label_selector=self.selector)
        left += ["ResourceClaimTemplate/%s" % t["metadata"]["name"] for t in templates]
        return left
