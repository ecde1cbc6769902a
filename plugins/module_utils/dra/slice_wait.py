# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait until a driver publishes enough devices, and explain why when it does not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.k8s import pod_status
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia
from ansible_collections.dra.gpu.plugins.module_utils.dra import slices as slice_report
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION

# The kubelet plugin pods of NVIDIA's DRA driver chart (v0.4+, then v25.x), and of the
# kubernetes-sigs example driver.
DEFAULT_PLUGIN_POD_SELECTORS = (
    nvidia.kubelet_plugin_pod_selector(nvidia.DRA_CHART),
    nvidia.kubelet_plugin_pod_selector(nvidia.OLD_DRA_CHART),
    "dra-example-driver-component=kubelet-plugin",
)


class Goal:
    """What "enough" means: a total, or a minimum on each awaited node."""

    def __init__(self, min_devices=None, min_devices_per_node=None, nodes=None):
        self.min_devices = min_devices
        self.min_devices_per_node = min_devices_per_node
        self.nodes = nodes

    def shortfall(self, devices):
        """Human-readable reasons the goal is not met yet; empty when it is."""
        missing = []
        if self.min_devices is not None and len(devices) < self.min_devices:
            missing.append("%d of %d devices published" % (len(devices), self.min_devices))
        if self.nodes is not None:
            per_node = {}
            for device in devices:
                per_node[device["node"]] = per_node.get(device["node"], 0) + 1
            need = self.min_devices_per_node or 1
            short = ["%s (%d of %d)" % (n, per_node.get(n, 0), need) for n in self.nodes if per_node.get(n, 0) < need]
            if short:
                missing.append("nodes short of devices: " + ", ".join(short))
        return missing


class InputError(ValueError):
    """An input that waiting cannot fix; the message names it and the fix."""


def check_inputs(kube, filters, selectors=None, selector_name="selector"):
    """Fail at once on what no wait can fix: a named node that is not in the cluster, and a
    selector that gives something other than a bool on a device (Kubernetes refuses such a
    selector; here it would match nothing until the timeout)."""
    if filters.nodes:
        known = set(kube.node_names(None))
        absent = [n for n in filters.nodes if n not in known]
        if absent:
            raise InputError("nodes names %s, which %s not a node of the cluster (its nodes: %s); correct the name%s "
                             "(`kubectl get nodes`)" % (", ".join(absent), "is" if len(absent) == 1 else "are",
                                                        ", ".join(sorted(known)) or "none",
                                                        "s" if len(absent) > 1 else ""))
    if selectors is None:
        return
    items, _version = kube.slices(filters.driver)
    problem = cel.non_bool_problem([(selector_name, e) for e in selectors.expressions], filters.driver, items)
    if problem:
        raise InputError(problem)


def wait_for_devices(kube, filters, goal, timeout, selectors=None, clock=time.monotonic):
    """Block until ``goal`` holds for the driver's slices; return the report plus timings."""
    node_names = goal.nodes
    started = clock()
    field_selector = "spec.driver=%s" % filters.driver if filters.driver else None
    kwargs = {"field_selector": field_selector} if field_selector else {}

    def lister():
        return kube.list_resource("resourceslices", **kwargs)

    def list_fn(**kw):
        return kube.custom.list_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "resourceslices", **kw)

    def condition(items):
        result = slice_report.report(items, [], filters, node_names, selectors)
        return None if goal.shortfall(result["devices"]) else result

    watcher = watch.kube_watcher(list_fn, kube.api, **kwargs)
    result, stats = watch.wait_until(lister, watcher, condition, timeout,
                                     "ResourceSlices of %s" % (filters.driver or "any driver"), clock=clock)
    result["elapsed"] = round(clock() - started, 3)
    result["watch"] = stats
    return result


def diagnose(kube, filters, goal, items, selectors=None, driver_namespace=None,
             plugin_pod_selectors=DEFAULT_PLUGIN_POD_SELECTORS):
    """What a person needs to act on after a timeout, as a list of sentences and a dict."""
    result = slice_report.report(items, [], filters, goal.nodes, selectors)
    lines = goal.shortfall(result["devices"])
    everything, _version = kube.list_resource("resourceslices")
    drivers = {}
    nodes_with_slices = set()
    for item in everything:
        spec = item.get("spec") or {}
        drivers[spec.get("driver")] = drivers.get(spec.get("driver"), 0) + len(spec.get("devices") or [])
        if spec.get("driver") == filters.driver and spec.get("nodeName"):
            nodes_with_slices.add(spec["nodeName"])
    if goal.nodes is not None:
        silent = [n for n in goal.nodes if n not in nodes_with_slices]
        if silent:
            lines.append("no %s ResourceSlice at all on: %s" % (filters.driver, ", ".join(silent)))
    if drivers:
        lines.append("drivers that did publish: " + ", ".join(
            "%s (%d devices)" % (d, n) for d, n in sorted(drivers.items(), key=lambda kv: str(kv[0]))))
    else:
        lines.append("no driver has published any ResourceSlice in this cluster")
    for problem in result["ignored_pools"]:
        lines.append("pool %s of %s ignored: %s" % (problem["pool"], problem["driver"], problem["reason"]))
    plugin_pods = []
    if driver_namespace:
        plugin_pods = _plugin_pods(kube, driver_namespace, plugin_pod_selectors)
        if not plugin_pods:
            lines.append("no kubelet-plugin pod (labels %s) in namespace %s: is the driver installed there?"
                         % (" or ".join(plugin_pod_selectors), driver_namespace))
        for pod in plugin_pods:
            if pod["problem"]:
                lines.append("kubelet-plugin pod %s on %s: %s" % (pod["name"], pod["node"] or "(unscheduled)",
                                                                  pod["problem"]))
    return lines, {"devices": result["devices"], "summary": result["summary"], "drivers": drivers,
                   "plugin_pods": plugin_pods}


def _plugin_pods(kube, namespace, selectors):
    pods = []
    for selector in selectors:
        items, _version = kube.list_all(kube.core.list_namespaced_pod, namespace=namespace, label_selector=selector)
        for pod in items:
            pods.append(pod_status.state(pod))
    return pods
