# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke test of a share of a card (share_memory): the objects it makes and its verdicts.

Pure functions over plain dicts; smoke_share_run.py runs it against the API.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.dra.slice_devices import plain_attribute
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import human_bytes, parse_quantity
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import MANAGED_BY, PROBE, ROLE_LABEL, RUN_LABEL, SmokeFailure, pod_manifest
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke_verdicts import UNSATISFIABLE, pod_failure

# Two pods, each with a ResourceClaim of its own asking for share_memory of one device. A probe
# exits within seconds and its claim is released when it ends, so each share is held by a pod
# that runs until the test removes it (restartPolicy Always, bounded by activeDeadlineSeconds in
# case the cleanup cannot run), and the probe uses the same claim beside it: both shares are
# allocated at once, while the probes read the GPU and while a claim too large is tried.
SHARE_PODS = 2
MEBIBYTE = 2 ** 20


def share_claim(name, run_id, device_class, memory, selectors, api_version):
    """A ResourceClaim asking for ``memory`` of one device of ``device_class``."""
    request = {"deviceClassName": device_class, "capacity": {"requests": {"memory": str(memory)}}}
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    labels = dict(MANAGED_BY, **{RUN_LABEL: run_id})
    return {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": name, "labels": labels},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}


def share_pod(role, name, run_id, settings, claim_name, hold_seconds):
    """A pod of the share test using claim ``claim_name``: the probe (runs once), or one that
    holds the claim (``holder``; a claim too large, ``too-big``, is asked for the same way)."""
    s = settings
    command = s.command if role == PROBE else ["sleep", str(hold_seconds)]
    pod = pod_manifest(name, run_id, s.image, command, {"resourceClaimName": claim_name}, s.node_selector,
                       s.tolerations, s.probe_security, s.pod_annotations if role == PROBE else None)
    pod["metadata"]["labels"][ROLE_LABEL] = role
    if role != PROBE:
        pod["spec"]["restartPolicy"] = "Always"
        pod["spec"]["activeDeadlineSeconds"] = int(hold_seconds)
    return pod


def pin_selector(driver, device):
    """A CEL selector that only ``device`` matches (its uuid attribute), for the second share."""
    uuid = published_attribute(device, "uuid")
    if not uuid:
        raise SmokeFailure("bad_input", "share_memory puts the second share on the first one's device by its uuid "
                           "attribute, which device %s does not publish" % device.get("name"))
    return "device.attributes['%s'].uuid == '%s'" % (driver, uuid)


def published_attribute(device, name):
    """A device attribute's plain value, as the slice publishes it ({"string": ...}), or None."""
    value = (device.get("attributes") or {}).get(name)
    return plain_attribute(value) if value is not None else None


def holder_verdict(pods):
    """None while waiting; ("done", pod) when the one holder runs; ("failed", SmokeFailure)."""
    for pod in pods:
        failure = pod_failure(pod, {})
        if failure is not None:
            return "failed", failure
        if (pod.get("status") or {}).get("phase") == "Running":
            return "done", pod
    return None


def share_of(claim):
    """The first allocation result of ``claim``: its device and what it consumed."""
    results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
    if not results:
        raise SmokeFailure("not_allocated", "claim %s has no allocation" % claim["metadata"]["name"])
    result = results[0]
    return {"claim": claim["metadata"]["name"], "driver": result.get("driver"), "pool": result.get("pool"),
            "device": result.get("device"), "share_id": result.get("shareID"),
            "consumed": dict(result.get("consumedCapacity") or {})}


def check_shares(shares, memory):
    """Both claims on one device, each a share (a shareID) that consumed what it asked for."""
    devices = set((s["driver"], s["pool"], s["device"]) for s in shares)
    if len(devices) != 1:
        raise SmokeFailure("not_shared", "the two claims of %s were given different devices: %s" % (
            memory, ", ".join("%s/%s/%s" % d for d in sorted(devices))))
    for share in shares:
        if not share["share_id"]:
            raise SmokeFailure("not_shared", "claim %s was given device %s whole, not a share (no shareID in its "
                               "allocation): the device does not take several allocations" % (
                                   share["claim"], share["device"]))
        consumed = share["consumed"].get("memory")
        if consumed is None or parse_quantity(consumed) < parse_quantity(memory):
            raise SmokeFailure("not_shared", "claim %s consumed %s of device %s's memory, less than the %s it asked for"
                               % (share["claim"], consumed or "nothing", share["device"], memory))


def free_shares(slices, claims, driver, matches):
    """Per device of ``driver`` that ``matches(device)`` selects: its memory, what the claims'
    allocations consume of it (a device given whole: all of it) and what is left, largest first.
    Only the devices the allocator sees (slice_devices.selected_devices: each pool's newest complete
    generation), so that a slice a driver is replacing neither counts a device twice nor names
    one that is gone."""
    allocated = capacity_shares.Allocated(claims)
    found = []
    entries, _problems = slice_devices.selected_devices(slices, driver=driver)
    for item, device, node in entries:
        published = capacity_shares.capacities(device) or {}
        if "memory" not in published or not matches(device):
            continue
        pool = item["spec"]["pool"]["name"]
        total = int(published["memory"].value)
        free = total - capacity_shares.memory_consumed(allocated.usage((driver, pool, device["name"])), total)
        found.append({"node": node, "pool": pool, "device": device["name"], "memory": human_bytes(total),
                      "free": human_bytes(free), "free_bytes": free})
    return sorted(found, key=lambda f: (-f["free_bytes"], f["node"] or "", f["device"]))


def too_big(free):
    """The memory of a claim larger than what is left on every device: 1Mi above the largest
    free share (the step of NVIDIA's request policy)."""
    largest = free[0]["free_bytes"] if free else 0
    return human_bytes(largest + MEBIBYTE)


def unschedulable_why(memory, free, scheduler_message):
    """The plain-words reason a claim of ``memory`` was Unschedulable, then the scheduler's own."""
    if free:
        largest = "the largest free share is %s (%s on %s)" % (free[0]["free"], free[0]["device"], free[0]["node"])
    else:
        largest = "the class selects no device with memory"
    return "no GPU has %s free: %s; the scheduler said: %s" % (memory, largest, scheduler_message)


def too_big_verdict(pods):
    """None while waiting; ("unschedulable", message) once the scheduler refused the pod for its
    claim; ("scheduled", pod) when it was placed after all."""
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName"):
            return "scheduled", pod
        for condition in (pod.get("status") or {}).get("conditions") or []:
            message = condition.get("message") or ""
            if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable" and \
                    any(marker in message for marker in UNSATISFIABLE):
                return "unschedulable", message
    return None


def share_report(share, product):
    """Lines a person reads of a share test that passed."""
    where = share["device"]
    lines = ["two pods, a claim of %s each, on one GPU: %s on %s (%s), both saw %s" % (
        share["memory"], where["name"], where["node"], product or "?", where["uuid"])]
    for claim in share["claims"]:
        consumed = ", ".join("%s %s" % (k, v) for k, v in sorted(claim["consumed"].items())) or "nothing"
        lines.append("claim %s: consumed %s, share %s" % (claim["claim"], consumed, claim["share_id"]))
    left = ", ".join("%s on %s %s" % (f["device"], f["node"], f["free"]) for f in share["free"])
    lines.append("left per GPU: %s" % (left or "no GPU of the class"))
    lines.append("a claim of %s: Unschedulable, as it must be: %s" % (share["too_big"]["memory"],
                                                                      share["too_big"]["why"]))
    lines.append("enforced: the scheduler's accounting only; nothing caps a pod's use of the GPU's memory")
    return lines
