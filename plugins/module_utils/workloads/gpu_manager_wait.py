# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two waits of taking a node from DRA back to the device plugin, with watches.

``dra_gone``: the DRA kubelet-plugin pods have left the nodes and their ResourceSlices are gone,
so the device plugin may come without both managers serving a GPU at once.
``device_plugin_serving``: the nodes offer ``nvidia.com/gpu`` again (allocatable), so the device
plugin is back.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads


def plugin_pods_on(pods, nodes):
    """The names of the (not finished) pods among ``pods`` bound to one of ``nodes``, as node/pod."""
    wanted = set(nodes)
    return sorted("%s/%s" % (p["spec"]["nodeName"], p["metadata"]["name"]) for p in pods
                  if (p.get("spec") or {}).get("nodeName") in wanted
                  and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))


def slices_on(slices, nodes, driver):
    """The names of ``driver``'s ResourceSlices published for one of ``nodes``."""
    wanted = set(nodes)
    return sorted(s["metadata"]["name"] for s in slices
                  if s["spec"].get("driver") == driver and s["spec"].get("nodeName") in wanted)


def not_serving(node_items, nodes):
    """The ``nodes`` that do not offer nvidia.com/gpu (allocatable) in ``node_items``."""
    offering = set(n["metadata"]["name"] for n in node_items if gpu_workloads.offers_device_plugin_gpus(n))
    return sorted(set(nodes) - offering)


class GpuManagerWait:
    def __init__(self, kube, clock=time.monotonic):
        self.kube = kube
        self.clock = clock

    def _wait(self, lister, list_fn, left, description, deadline, **kwargs):
        watcher = watch.kube_watcher(list_fn, self.kube.api, **kwargs)
        try:
            watch.wait_until(lister, watcher, lambda items: not left(items), max(1, deadline - self.clock()),
                             description, clock=self.clock)
        except watch.WaitTimeout as exc:
            raise watch.WaitTimeout("%s; still there: %s" % (exc, ", ".join(left(exc.state))), exc.state)

    def dra_gone(self, nodes, driver, plugin_namespace, plugin_pod_selector, timeout):
        deadline = self.clock() + timeout
        if plugin_namespace and plugin_pod_selector:
            kwargs = {"namespace": plugin_namespace, "label_selector": plugin_pod_selector}
            self._wait(lambda: self.kube.list_all(self.kube.core.list_namespaced_pod, **kwargs),
                       self.kube.core.list_namespaced_pod, lambda pods: plugin_pods_on(pods, nodes),
                       "the DRA kubelet-plugin pods (%s in %s) to leave %s"
                       % (plugin_pod_selector, plugin_namespace, ", ".join(nodes)), deadline, **kwargs)

        def list_fn(**kw):
            return self.kube.custom.list_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "resourceslices",
                                                               **kw)

        field = {"field_selector": "spec.driver=" + driver}
        self._wait(lambda: self.kube.slices(driver), list_fn, lambda items: slices_on(items, nodes, driver),
                   "the ResourceSlices of %s on %s to be gone" % (driver, ", ".join(nodes)), deadline, **field)

    def device_plugin_serving(self, nodes, timeout):
        self._wait(lambda: self.kube.list_all(self.kube.core.list_node), self.kube.core.list_node,
                   lambda items: not_serving(items, nodes),
                   "%s to offer nvidia.com/gpu again (the device plugin back)" % ", ".join(nodes),
                   self.clock() + timeout)
