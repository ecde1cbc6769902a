# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeviceClasses: validate with the API server, preview matches, apply idempotently."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils import cel, inventory
from ansible_collections.dra.gpu.plugins.module_utils.client import (
    RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message)

PLURAL = "deviceclasses"


class DeviceClassError(Exception):
    def __init__(self, message, **details):
        super(DeviceClassError, self).__init__(message)
        self.details = details


def desired_object(name, selectors, config=None, extended_resource_name=None, labels=None):
    spec = {"selectors": [{"cel": {"expression": e}} for e in selectors or []]}
    if config:
        spec["config"] = config
    if extended_resource_name:
        spec["extendedResourceName"] = extended_resource_name
    metadata = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION), "kind": "DeviceClass",
            "metadata": metadata, "spec": spec}


def validate_input(selectors, config):
    for index, expression in enumerate(selectors or []):
        if not isinstance(expression, str) or not expression.strip():
            raise DeviceClassError("selectors[%d] must be a non-empty CEL expression string" % index)
    for index, entry in enumerate(config or []):
        opaque = entry.get("opaque") if isinstance(entry, dict) else None
        if not isinstance(opaque, dict) or not opaque.get("driver") or "parameters" not in opaque:
            raise DeviceClassError("config[%d] must look like {opaque: {driver: gpu.nvidia.com, parameters: {...}}}"
                                   % index)


def comparable(obj):
    """The parts of a DeviceClass this module manages: labels it sets and the spec."""
    if obj is None:
        return None
    return {"labels": (obj.get("metadata") or {}).get("labels") or {}, "spec": obj.get("spec") or {}}


class DeviceClasses:
    def __init__(self, kube):
        self.kube = kube

    def get(self, name):
        try:
            return self.kube.custom.get_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def write(self, body, live, dry_run):
        kwargs = {"dry_run": "All"} if dry_run else {}
        try:
            if live is None:
                return self.kube.custom.create_cluster_custom_object(
                    RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, body, **kwargs)
            body = dict(body, metadata=dict(body["metadata"], resourceVersion=live["metadata"]["resourceVersion"]))
            return self.kube.custom.replace_cluster_custom_object(
                RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, body["metadata"]["name"], body, **kwargs)
        except ApiException as exc:
            if exc.status in (400, 403, 422):
                raise DeviceClassError("the API server rejected DeviceClass %s: %s"
                                       % (body["metadata"]["name"], api_error_message(exc)))
            raise

    def delete(self, name, dry_run):
        kwargs = {"dry_run": "All"} if dry_run else {}
        try:
            self.kube.custom.delete_cluster_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, name, **kwargs)
        except ApiException as exc:
            if exc.status != 404:
                raise


def merge_labels(live, wanted):
    merged = dict(((live or {}).get("metadata") or {}).get("labels") or {})
    merged.update(wanted or {})
    return merged


def preview(selectors, slices):
    """Which live devices the selectors match; never guesses.

    Returns a dict with ``evaluated`` (False with ``reason`` when the local evaluator cannot
    answer), ``matched_devices``, ``devices_considered`` and ``runtime_errors`` (devices where
    an expression fails at run time, which leaves pods Pending on a real cluster).
    """
    usable, _problems = inventory.usable_pools(slices)
    try:
        compiled = cel.Selectors(selectors)
        matched, errors, considered = [], [], 0
        for item in usable:
            spec = item["spec"]
            for device in spec.get("devices") or []:
                considered += 1
                ok, error = compiled.match(spec["driver"], device)
                flat = inventory.flatten_device(item, device, {})
                if ok:
                    matched.append({"node": flat["node"], "driver": flat["driver"], "pool": flat["pool"],
                                    "name": flat["name"], "model": inventory.device_model(flat),
                                    "memory": flat["capacity"].get("memory")})
                elif error and len(errors) < 5:
                    errors.append({"device": "%s/%s/%s" % (flat["driver"], flat["pool"], flat["name"]),
                                   "error": error})
    except cel.Unsupported as exc:
        return {"evaluated": False, "reason": str(exc), "matched_devices": None, "devices_considered": None,
                "runtime_errors": []}
    return {"evaluated": True, "reason": None, "matched_devices": matched, "devices_considered": considered,
            "runtime_errors": errors}


def explain_no_match(selectors, slices):
    """What the slices do publish, so a person can fix a selector that matches nothing."""
    usable, _problems = inventory.usable_pools(slices)
    if not usable:
        return ["no ResourceSlice is published in this cluster yet, so no selector can match; "
                "install the DRA driver first (or wait for it with dra.gpu.resource_slice_wait)"]
    per_driver = {}
    for item in usable:
        driver = item["spec"]["driver"]
        entry = per_driver.setdefault(driver, {"count": 0, "attributes": {}, "capacity": {}})
        for device in item["spec"].get("devices") or []:
            entry["count"] += 1
            for name, value in (device.get("attributes") or {}).items():
                domain, short = cel.split_name(name, driver)
                entry["attributes"].setdefault("device.attributes['%s'].%s" % (domain, short),
                                               inventory.plain_attribute(value))
            for name, value in (device.get("capacity") or {}).items():
                domain, short = cel.split_name(name, driver)
                entry["capacity"].setdefault("device.capacity['%s'].%s" % (domain, short), (value or {}).get("value"))
    lines = []
    mentioned = set(re.findall(r"""["']([A-Za-z0-9.-]+\.[A-Za-z]{2,})["']""", " ".join(selectors)))
    for name in sorted(mentioned - set(per_driver)):
        near = [d for d in per_driver if d.endswith("." + name) or name in d]
        if near:
            lines.append("the selectors name %r, but the driver here is %s: use device.driver == '%s' and "
                         "device.attributes['%s']" % (name, " / ".join(near), near[0], near[0]))
    for driver, entry in sorted(per_driver.items()):
        attrs = ", ".join("%s (e.g. %r)" % (k, v) for k, v in sorted(entry["attributes"].items()))
        caps = ", ".join("%s (e.g. %s)" % (k, v) for k, v in sorted(entry["capacity"].items()))
        lines.append("driver %s publishes %d devices with attributes %s; capacity %s"
                     % (driver, entry["count"], attrs or "(none)", caps or "(none)"))
    return lines
