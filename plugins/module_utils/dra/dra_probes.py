# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which DRA features the live API server serves, one server-side dry run per feature.

A feature gate that is off makes the API server drop the feature's fields silently on write, so
the answer comes from dry runs (dryRun=All: validated, nothing stored), not from the version: a
gate can be turned on or off by hand. The bodies and the reading of the answers are pure; only
``probe`` talks to the server. The probes of consumable capacity, device taints and extended
resources are those of consumable_capacity.py, device_taint_support.py and extended_resource.py,
which the roles use for their refusals, reused here. ResourceClaim ``status.devices`` cannot be
probed without writing a claim's status: dra_features.report takes it from the table.

What a dry run cannot see: the gates of kube-scheduler, kube-controller-manager and the kubelets.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import consumable_capacity, device_taint_support, extended_resource
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message

PROBE_NAMESPACE = consumable_capacity.PROBE_NAMESPACE
PROBE_PREFIX = "dra-gpu-feature-probe"


def _claim(name, request):
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "ResourceClaim",
            "metadata": {"name": "%s-%s" % (PROBE_PREFIX, name), "namespace": PROBE_NAMESPACE},
            "spec": {"devices": {"requests": [dict({"name": "gpu"}, **request)]}}}


def first_available_claim():
    return _claim("first-available", {"firstAvailable": [{"name": "any", "deviceClassName": consumable_capacity.PROBE_CLASS}]})


def admin_access_claim():
    return _claim("admin-access", {"exactly": {"deviceClassName": consumable_capacity.PROBE_CLASS, "adminAccess": True}})


def counters_slice():
    """A slice with shared counters only (no devices), for all nodes: kept only with DRAPartitionableDevices."""
    name = "%s-counters" % PROBE_PREFIX
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {"driver": "probe.dra.gpu", "allNodes": True,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "1Gi"}}}]}}


def _request(answer):
    return ((((answer or {}).get("spec") or {}).get("devices") or {}).get("requests") or [{}])[0]


def keeps_first_available(answer):
    return bool(_request(answer).get("firstAvailable"))


def keeps_admin_access(answer):
    return bool((_request(answer).get("exactly") or {}).get("adminAccess"))


def keeps_counters(answer):
    return bool(((answer or {}).get("spec") or {}).get("sharedCounters"))


def keeps_extended_resource_name(answer):
    return bool(((answer or {}).get("spec") or {}).get("extendedResourceName"))


def _found(on, how):
    return {"on": on, "how": how}


def _dry_run(create, body, keeps, what, known_refusal=None):
    """One dry run: on when the field survives. A refusal with ``known_refusal`` in its words comes
    only from a server that knows the field (on: adminAccess outside an admin namespace); any other
    400/422 means the field was dropped and what was left is invalid (off)."""
    try:
        answer = create(body)
    except ApiException as exc:
        words = api_error_message(exc)
        if exc.status == 403 and not (known_refusal and known_refusal in words):
            return _found(None, "not probed: this identity may not create %s (%s)" % (what, words))
        if exc.status in (400, 403, 422) and known_refusal and known_refusal in words:
            return _found(True, "a server-side dry run of a %s was refused over it, so the server knows the field "
                                "(%s)" % (what, words))
        if exc.status in (400, 422):
            return _found(False, "a server-side dry run of a %s was refused: %s" % (what, words))
        raise
    kept = keeps(answer)
    return _found(kept, "a server-side dry run of a %s %s it" % (what, "kept" if kept else "dropped"))


def probe(kube):
    """{feature: {on: True/False/None, how}} for the live API server, from server-side dry runs
    (nothing is stored). None where this identity may not create the probe's object."""
    custom = kube.custom

    def claim(body):
        return custom.create_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, PROBE_NAMESPACE,
                                                      "resourceclaims", body, dry_run="All")

    def cluster(plural):
        return lambda body: custom.create_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, plural, body,
                                                                dry_run="All")

    found = {
        "prioritized_list": _dry_run(claim, first_available_claim(), keeps_first_available,
                                     "ResourceClaim with firstAvailable"),
        # Outside a namespace labelled resource.kubernetes.io/admin-access the server refuses
        # adminAccess only when it knows the field.
        "admin_access": _dry_run(claim, admin_access_claim(), keeps_admin_access, "ResourceClaim with adminAccess",
                                 known_refusal="admin-access"),
        # A refusal that names sharedCounters comes from a server that validated them (on): one that
        # is off drops them before validation.
        "partitionable_devices": _dry_run(cluster("resourceslices"), counters_slice(), keeps_counters,
                                          "ResourceSlice with sharedCounters", known_refusal="sharedCounters"),
        "consumable_capacity": _dry_run(claim, consumable_capacity.probe_claim(),
                                        consumable_capacity.keeps_capacity_requests,
                                        "ResourceClaim with capacity.requests"),
        "device_taints": _dry_run(cluster("resourceslices"), device_taint_support.probe_slice(),
                                  device_taint_support.keeps_slice_taints, "ResourceSlice with a device taint"),
        "extended_resource": _dry_run(cluster("deviceclasses"), extended_resource.probe_class(),
                                      keeps_extended_resource_name, "DeviceClass with extendedResourceName"),
    }
    try:
        refused = device_taint_support.rules_refused(kube)
        found["device_taint_rules"] = _found(refused is None, "a server-side dry run of a %s/%s DeviceTaintRule %s" % (
            RESOURCE_GROUP, RESOURCE_VERSION, "was accepted" if refused is None else "was refused: %s" % refused))
    except ApiException as exc:
        if exc.status != 403:
            raise
        found["device_taint_rules"] = _found(None, "not probed: this identity may not create DeviceTaintRules")
    return found
