# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DeviceClasses: validate with the API server, preview matches, apply idempotently.

Classes are written by server-side apply with the field manager ``dra.gpu``: the applied body
holds only what this module declares (the name, the labels it is given, the spec), so labels
and annotations other managers set are never in it and survive. Conflicts are forced: the
body names no field but this module's own, so forcing only takes back those fields (a
selector someone edited by hand, a class an older release of this collection wrote with a
full replace) and can never touch anything else.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_taints, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.cel import cel
from ansible_collections.dra.gpu.plugins.module_utils.sharing import opaque_config
from ansible_collections.dra.gpu.plugins.module_utils.dra import slices as slice_info
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import (
    RESOURCE_GROUP,
    RESOURCE_VERSION,
    ApiException,
    api_error_message,
    request_json,
)

PLURAL = "deviceclasses"
FIELD_MANAGER = "dra.gpu"
APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
# Metadata the API server keeps for itself: never part of what a class says, so never a change.
BOOKKEEPING = ("managedFields", "resourceVersion", "generation", "creationTimestamp", "uid")


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
    # The API server takes any opaque parameters; NVIDIA's plugin decodes its own strictly
    # only when a pod starts, so its configs are checked here, before anything is applied.
    problems = opaque_config.config_problems(config, "config")
    if problems:
        raise DeviceClassError("%s - NVIDIA's DRA driver would refuse this when a pod starts"
                               % "; ".join(problems))


def content(obj):
    """A DeviceClass without the server's bookkeeping (managedFields, resourceVersion,
    generation, creationTimestamp, uid): what a diff shows and a change is measured by."""
    if obj is None:
        return None
    metadata = dict((k, v) for k, v in (obj.get("metadata") or {}).items() if k not in BOOKKEEPING)
    return dict(obj, metadata=metadata)


def ownership(obj, manager=FIELD_MANAGER):
    """The fields ``manager`` holds by Apply, as managedFields records them (without the time
    of the last apply), or None when it holds none."""
    for entry in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == manager and entry.get("operation") == "Apply" and not entry.get("subresource"):
            return {"apiVersion": entry.get("apiVersion"), "fieldsV1": entry.get("fieldsV1")}
    return None


def apply_changes(live, applied):
    """Whether applying would change the class: it does not exist yet, what it says would differ,
    or the fields this module owns would (a first apply over a class another tool wrote, a
    field someone else took over since). ``applied`` is the dry-run apply's answer."""
    return live is None or content(live) != content(applied) or ownership(live) != ownership(applied)


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

    def apply(self, body, dry_run):
        """Server-side apply of ``body`` (created when missing) as field manager ``dra.gpu``,
        conflicts forced; with ``dry_run`` the server answers the class it would store."""
        try:
            return apply_request(self.kube.api, body, dry_run)
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


def apply_query(dry_run):
    """The apply call's query parameters."""
    return [("fieldManager", FIELD_MANAGER), ("force", "true")] + ([("dryRun", "All")] if dry_run else [])


def apply_request(api, body, dry_run):
    """PATCH ``body`` as an apply patch through the ApiClient ``api``; returns the class the
    server answers, parsed. The body goes as JSON text (JSON is YAML), so no client version's
    own body encoding or argument checks are in the way; a non-2xx answer raises ApiException."""
    path = "/apis/%s/%s/%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION, PLURAL, body["metadata"]["name"])
    return request_json(api, "PATCH", path, apply_query(dry_run), body, APPLY_CONTENT_TYPE)


EXTENDED_RESOURCE_HELP = (
    "this API server (%s) does not keep spec.extendedResourceName: the DRAExtendedResource feature is alpha "
    "and off by default in Kubernetes 1.35 and beta from 1.36. Remove extended_resource_name, or enable the "
    "DRAExtendedResource feature gate on the API server and scheduler")


def check(kube, name, selectors, config=None, extended_resource_name=None, labels=None, require_match=False,
          slices=None):
    """Everything the API server and the live devices say about one class, changing nothing.

    A server-side dry-run apply, the selectors evaluated against the
    published devices (a non-bool result, no match when one is required), and whether the
    server keeps extendedResourceName. Returns ``{live, body, dry, preview, changed}``; raises
    DeviceClassError with the reason. ``slices`` lets a caller checking many classes list the
    ResourceSlices once.
    """
    validate_input(selectors, config)
    classes = DeviceClasses(kube)
    live = classes.get(name)
    if slices is None:
        slices, _version = kube.slices()
    problem = cel.non_bool_problem([("selectors[%d]" % i, e) for i, e in enumerate(selectors or [])], None, slices)
    if problem:
        raise DeviceClassError(problem)
    body = desired_object(name, selectors, config, extended_resource_name, labels)
    dry = classes.apply(body, dry_run=True)
    if extended_resource_name and not (dry.get("spec") or {}).get("extendedResourceName"):
        raise DeviceClassError(EXTENDED_RESOURCE_HELP % kube.server_version())
    result = preview(selectors, slices, slice_info.taint_rules(kube))
    if result.get("only_tainted"):
        result["note"] = only_tainted_note(name, result["matched_devices"])
    if require_match:
        if not result["evaluated"]:
            raise DeviceClassError("require_match cannot be checked: %s" % result["reason"], preview=result)
        if not result["matched_devices"]:
            lines = explain_no_match(selectors, slices)
            raise DeviceClassError("DeviceClass %s would match no device: %s" % (name, "; ".join(lines)),
                                   explanation=lines, preview=result)
        if result.get("only_tainted"):
            raise DeviceClassError(result["note"], preview=result)
    return {"live": live, "body": body, "dry": dry, "preview": result,
            "changed": apply_changes(live, dry)}


def list_problems(kube, entries, require_match=False, labels=None):
    """``check`` for every entry of a role's class list, the slices listed once: one
    ``"name: reason"`` per class that cannot be applied, so a role applies all or none.
    ``labels`` are added to every class (the role's managed label); an entry's own
    ``require_match`` wins over the role's."""
    slices, _version = kube.slices()
    problems = []
    for entry in entries:
        wanted = dict(entry.get("labels") or {}, **(labels or {}))
        own = entry.get("require_match")
        try:
            check(kube, entry["name"], entry.get("selectors") or [], entry.get("config") or None,
                  entry.get("extended_resource_name") or None, wanted,
                  require_match if own is None else own, slices=slices)
        except DeviceClassError as exc:
            problems.append("%s: %s" % (entry["name"], exc))
        except ApiException as exc:
            problems.append("%s: %s" % (entry["name"], api_error_message(exc)))
    return problems


def only_tainted_note(name, matched):
    """The words for a class whose every matching device is tainted NoSchedule or NoExecute."""
    return ("DeviceClass %s matches only tainted devices, which no claim without tolerations gets: %s (see "
            "docs/maintenance.md; dra.gpu.gpu_maintenance state in_service for this collection's rules)"
            % (name, "; ".join("%s/%s %s" % (d["node"] or d["pool"], d["name"], ", ".join(d["taints"]))
                               for d in matched)))


def preview(selectors, slices, rules=()):
    """Which live devices the selectors match; never guesses. Each match says whether it is tainted
    NoSchedule/NoExecute (its driver's taint or a DeviceTaintRule's in ``rules``), and
    ``only_tainted`` whether every match is.

    Returns a dict with ``evaluated`` (False with ``reason`` when the local evaluator cannot
    answer), ``matched_devices``, ``devices_considered`` and ``runtime_errors`` (devices where
    an expression fails at run time, which leaves pods Pending on a real cluster).
    """
    usable, _problems = slice_devices.usable_pools(slices)
    try:
        compiled = cel.Selectors(selectors)
        matched, errors, considered = [], [], 0
        for item in usable:
            spec = item["spec"]
            for device in spec.get("devices") or []:
                considered += 1
                ok, error = compiled.match(spec["driver"], device)
                flat = slice_devices.flatten_device(item, device, {}, rules)
                if ok:
                    matched.append({"node": flat["node"], "driver": flat["driver"], "pool": flat["pool"],
                                    "name": flat["name"], "model": slice_devices.device_model(flat),
                                    "memory": flat["capacity"].get("memory"), "tainted": flat["tainted"],
                                    "taints": [device_taints.describe(t) for t in flat["taints"]]})
                elif error and len(errors) < 5:
                    errors.append({"device": "%s/%s/%s" % (flat["driver"], flat["pool"], flat["name"]),
                                   "error": error})
    except cel.Unsupported as exc:
        return {"evaluated": False, "reason": str(exc), "matched_devices": None, "devices_considered": None,
                "runtime_errors": []}
    return {"evaluated": True, "reason": None, "matched_devices": matched, "devices_considered": considered,
            "runtime_errors": errors, "only_tainted": bool(matched) and all(d["tainted"] for d in matched)}


def explain_no_match(selectors, slices):
    """What the slices do publish, so a person can fix a selector that matches nothing."""
    usable, _problems = slice_devices.usable_pools(slices)
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
                                               slice_devices.plain_attribute(value))
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
