# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does the cluster honour device taints? Learned from the API server with server-side dry runs,
not from its version, because the gates can be turned on or off by hand:

- taints in ResourceSlices (DRADeviceTaints: alpha and off in 1.35, beta and on in 1.36, GA in
  1.37), which NVIDIA's health check (NVMLDeviceHealthCheck) publishes: where the gate is off, the
  API server drops them from the slices silently and a broken GPU keeps getting claims;
- DeviceTaintRules in resource.k8s.io/v1 (GA and on in 1.37), which dra.gpu.gpu_maintenance uses.

What a dry run cannot see: the gates of kube-scheduler and kube-controller-manager (which
evicts for NoExecute). They follow the API server's in a cluster set up as one version.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_maintenance as maint
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message

PROBE_SLICE = "dra-gpu-device-taint-probe"
PROBE_TAINT = {"key": "dra.gpu/probe", "effect": "NoSchedule"}


def probe_slice():
    """A ResourceSlice the dry run creates: one device with one taint, for all nodes (no node needed)."""
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "ResourceSlice",
            "metadata": {"name": PROBE_SLICE},
            "spec": {"driver": "probe.dra.gpu", "allNodes": True,
                     "pool": {"name": PROBE_SLICE, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "probe-0", "taints": [dict(PROBE_TAINT)]}]}}


def keeps_slice_taints(answer):
    devices = ((answer or {}).get("spec") or {}).get("devices") or [{}]
    return bool(devices[0].get("taints"))


def rules_refused(kube):
    """None where the API server serves resource.k8s.io/v1 DeviceTaintRules, else its refusal (404
    or 405) of a dry-run create of one, in words; changes nothing. Other errors (403 too) raise."""
    try:
        kube.custom.create_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, "devicetaintrules",
                                                 maint.probe_rule(), dry_run="All")
    except ApiException as exc:
        if exc.status in (404, 405):
            return api_error_message(exc)
        raise
    return None
