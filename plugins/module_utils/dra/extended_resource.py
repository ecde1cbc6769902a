# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The other way off the device plugin: DRA serving ``nvidia.com/gpu`` itself.

NVIDIA's DRA driver chart creates DeviceClass ``gpu.nvidia.com`` with
``spec.extendedResourceName: nvidia.com/gpu``. Where the DRAExtendedResource feature is on (beta
and on by default from Kubernetes 1.36; alpha and off in 1.34 and 1.35, where the API server
drops the field), the scheduler serves a pod that asks for ``nvidia.com/gpu`` on a node that
does not offer it (no device plugin) with a claim of that class, made for the pod and named in
its ``status.extendedResourceClaimStatus``: the workload keeps its spec. Whether the server
keeps the field is learned from the server itself (a class that carries it, or a dry-run
create), not from its version, because the gate can be turned on or off.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION
from ansible_collections.dra.gpu.plugins.module_utils.workloads.gpu_workloads import DEVICE_PLUGIN_RESOURCE

FEATURE = "extended_resource"
# A name no one uses, for the dry-run create that asks whether the server keeps the field.
PROBE_CLASS = "dra-gpu-extended-resource-probe"
PROBE_RESOURCE = "example.com/dra-gpu-probe"


def serving_classes(classes, resource=DEVICE_PLUGIN_RESOURCE):
    """The DeviceClasses whose extendedResourceName is ``resource``, by name."""
    return sorted(c["metadata"]["name"] for c in classes
                  if (c.get("spec") or {}).get("extendedResourceName") == resource)


def verdict(server_version, classes, server_keeps_field):
    """``{available, device_class, reason}``: whether pods asking for nvidia.com/gpu can be
    served by DRA unchanged, through which class, and if not, why and what to do."""
    serving = serving_classes(classes)
    if serving:
        return {"available": True, "device_class": serving[0],
                "reason": "DeviceClass %s carries extendedResourceName %s: the scheduler serves pods that ask "
                          "for it through DRA on nodes without the device plugin" % (serving[0], DEVICE_PLUGIN_RESOURCE)}
    if not server_keeps_field:
        return {"available": False, "device_class": None,
                "reason": "this API server (%s) does not keep a DeviceClass's spec.extendedResourceName: the "
                          "%s feature is off. Serving nvidia.com/gpu through DRA %s. Move the workload to a claim "
                          "(method claim), or upgrade to 1.%d (dra.gpu.cluster_upgrade), or turn the feature gate on"
                          % (server_version, dra_features.gate(FEATURE), dra_features.needs(FEATURE),
                             dra_features.first_on(FEATURE))}
    return {"available": False, "device_class": None,
            "reason": "this API server (%s) keeps extendedResourceName, but no DeviceClass names %s. NVIDIA's DRA "
                      "driver chart creates gpu.nvidia.com with it; a class created while the feature was off lost "
                      "the field: apply the chart again (or the class with dra.gpu.device_class and "
                      "extended_resource_name), or move the workload to a claim (method claim)"
                      % (server_version, DEVICE_PLUGIN_RESOURCE)}


def probe_class():
    """The DeviceClass a dry-run create asks about: kept with DRAExtendedResource on."""
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "DeviceClass",
            "metadata": {"name": PROBE_CLASS}, "spec": {"extendedResourceName": PROBE_RESOURCE}}


def availability(kube):
    """``verdict`` for the live cluster: the classes listed, and a dry-run create of a probe
    class only when none carries the field."""
    classes, _version = kube.list_resource("deviceclasses")
    keeps = True
    if not serving_classes(classes):
        dry = kube.custom.create_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "deviceclasses",
                                                       probe_class(), dry_run="All")
        keeps = bool((dry.get("spec") or {}).get("extendedResourceName"))
    return verdict(kube.server_version(), classes, keeps)


def pod_paths(pods):
    """Each pod of a workload on this path: its node, phase, and the claim the scheduler made for
    its nvidia.com/gpu (None while it is not served by DRA: Pending, or on a device-plugin node)."""
    found = []
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        status = pod.get("status") or {}
        found.append({"name": pod["metadata"]["name"], "node": (pod.get("spec") or {}).get("nodeName"),
                      "phase": status.get("phase"),
                      "claim": (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")})
    return found


def report(label, gpus, device_class, pods):
    """Lines a person reads for a workload that keeps nvidia.com/gpu."""
    lines = ["%s keeps %s: %d per pod; DeviceClass %s serves it through DRA (extendedResourceName), no rewrite"
             % (label, DEVICE_PLUGIN_RESOURCE, gpus, device_class)]
    for pod in pods:
        lines.append("pod %s (%s) on %s: %s" % (pod["name"], pod["phase"], pod["node"] or "no node yet",
                                                "claim %s made by the scheduler" % pod["claim"] if pod["claim"]
                                                else "not served by DRA yet (device-plugin node, or not placed)"))
    return lines
