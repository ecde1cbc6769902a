# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Smoke-test objects and verdicts: what to create, and whether the result proves a GPU.

Pure functions over plain dicts; the orchestration against the API is in smoke_run.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import namedtuple

from ansible_collections.dra.gpu.plugins.module_utils.dra import capacity_shares, device_taints
from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
from ansible_collections.dra.gpu.plugins.module_utils.dra import slice_devices
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration
from ansible_collections.dra.gpu.plugins.module_utils.dra.slice_devices import plain_attribute
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, human_bytes, parse_quantity

RUN_LABEL = "dra.gpu/smoke-test-run"
# The module's first name; kept on the objects it makes so that selectors people wrote go on matching.
MANAGED_BY = {"app.kubernetes.io/managed-by": "dra.gpu.claim_smoke_test"}

# What each probe prints, and how its output is matched against the allocation.
PROBES = {
    # nvidia-smi -L: "GPU 0: NVIDIA A10 (UUID: GPU-...)" and "  MIG 1g.5gb Device 0: (UUID: MIG-...)"
    "nvidia": {"pattern": r"\(UUID: ((?:GPU|MIG)-[0-9a-fA-F-]+)\)", "attribute": "uuid"},
    # dra-example-driver: GPU_DEVICE_0=gpu-0
    "example": {"pattern": r"^GPU_DEVICE_\d+=(\S+)\s*$", "attribute": None},
}


DEFAULT_COMMAND = ["sh", "-c", "{ nvidia-smi -L; env | grep '^CUDA_MPS_' || true; } | tee /dev/termination-log"]

# The options of module claim_smoke_check (documented there).
ARGUMENT_SPEC = dict(
    namespace=dict(type="str", default="dra-gpu-smoke-test"),
    device_class=dict(type="str", default="gpu.nvidia.com"),
    count=dict(type="int", default=1),
    selectors=dict(type="list", elements="str", default=[]),
    first_available=dict(type="list", elements="dict"),
    pods=dict(type="int", default=1),
    image=dict(type="str", default="nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04"),
    command=dict(type="list", elements="str", default=DEFAULT_COMMAND),
    probe=dict(type="str", choices=["nvidia", "example", "custom"], default="nvidia"),
    probe_pattern=dict(type="str"),
    probe_attribute=dict(type="str"),
    verify=dict(type="str", choices=["allocation", "container"], default="container"),
    driver=dict(type="str", default="gpu.nvidia.com"),
    expect=dict(type="dict"),
    node_selector=dict(type="dict"),
    tolerations=dict(type="list", elements="dict"),
    pod_security=dict(type="str", choices=["restricted", "baseline", "privileged", "none"], default="restricted"),
    pod_annotations=dict(type="dict"),
    timeout=dict(type="int", default=300),
    keep=dict(type="bool", default=False),
    share_memory=dict(type="str"),
)

# One smoke test's settings, read once from the module's options under names that say what
# they hold; built by settings().
Settings = namedtuple("Settings", [
    "namespace",           # where the test objects go (created, and removed afterwards, when missing)
    "device_class",        # the DeviceClass requested
    "devices_per_claim",   # devices in the one exact request (option count)
    "selectors",           # CEL selectors of that request
    "first_available",     # a prioritized list of alternatives instead (option first_available), or []
    "probe_pods",          # how many probe pods (more than one share one ResourceClaim; option pods)
    "image",               # the probe's image
    "command",             # the probe's command
    "probe",               # how its output is read: nvidia, example or custom
    "probe_pattern",       # with probe custom: the regular expression capturing one device identifier
    "probe_attribute",     # with probe custom: the attribute those identifiers equal (device name if None)
    "verify_container",    # True: check the probe's output too (verify=container); False: the allocation only
    "driver",              # the DRA driver expected to provide the devices
    "expect",              # checks on the allocated devices, or {}
    "node_selector",       # node selector for the probe pods, or {}
    "tolerations",         # tolerations for the probe pods, or None
    "namespace_security",  # Pod Security level to label a namespace the run creates with, None for none
    "probe_security",      # the Pod Security level the probe's securityContext satisfies
    "pod_annotations",     # annotations for the probe pods, or None
    "timeout",             # seconds for allocation, binding and the probe's completion
    "keep_objects",        # leave the test objects in place (option keep)
    "share_memory",        # a share of a card each of two pods claims on one device, or None (option share_memory)
])


def settings(params):
    """Settings from the module's ``params``; an option missing from them takes its default."""
    def option(name):
        return params.get(name, ARGUMENT_SPEC[name].get("default"))

    level = option("pod_security")
    return Settings(
        namespace=option("namespace"), device_class=option("device_class"), devices_per_claim=option("count"),
        selectors=option("selectors") or [], first_available=option("first_available") or [],
        probe_pods=option("pods"), image=option("image"), command=option("command"), probe=option("probe"),
        probe_pattern=option("probe_pattern"), probe_attribute=option("probe_attribute"),
        verify_container=option("verify") == "container", driver=option("driver"), expect=option("expect") or {},
        node_selector=option("node_selector") or {}, tolerations=option("tolerations"),
        namespace_security=None if level == "none" else level,
        probe_security="privileged" if level == "none" else level,
        pod_annotations=option("pod_annotations"), timeout=option("timeout"), keep_objects=bool(option("keep")),
        share_memory=option("share_memory") or None)


class SmokeFailure(Exception):
    """A failed smoke test, told in a user's words; ``kind`` names the failure class."""

    def __init__(self, kind, message, **details):
        super(SmokeFailure, self).__init__(message)
        self.kind = kind
        self.details = details


def input_checks(params, prefix=""):
    """The checks of a smoke test's options (``prefix`` names role variables, e.g. smoke_test_)."""
    def name(option):
        return prefix + option

    checks = [
        lambda: inputs.integer(name("count"), params.get("count"), 1, "devices in the claim"),
        lambda: inputs.integer(name("pods"), params.get("pods"), 1, "probe pods"),
        lambda: inputs.seconds(name("timeout"), params.get("timeout")),
        lambda: inputs.dns_label(name("namespace"), params.get("namespace")),
        lambda: inputs.dns_subdomain(name("device_class"), params.get("device_class"), "DeviceClass"),
        lambda: inputs.strings(name("selectors"), params.get("selectors")),
        lambda: inputs.labels(name("node_selector"), params.get("node_selector")),
    ]
    alternatives = params.get("first_available") or []
    checks.append(lambda: inputs.unique(name("first_available"), [a.get("name") for a in alternatives
                                                                  if isinstance(a, dict) and a.get("name")],
                                        "alternative name"))
    for index, alt in enumerate(alternatives):
        label = "%s[%d]" % (name("first_available"), index)
        if not isinstance(alt, dict):
            checks.append(lambda label=label, alt=alt: _raise("%s is %r; each alternative is a mapping with name, "
                                                              "device_class, count and selectors" % (label, alt)))
            continue
        if alt.get("name") is not None:
            checks.append(lambda label=label, alt=alt: inputs.dns_label(label + ".name", alt["name"], "request"))
        checks.append(lambda label=label, alt=alt: inputs.integer(label + ".count", alt.get("count", 1), 1,
                                                                  "devices of this alternative"))
        checks.append(lambda label=label, alt=alt: inputs.strings(label + ".selectors", alt.get("selectors")))
        if alt.get("device_class") is not None:
            checks.append(lambda label=label, alt=alt: inputs.dns_subdomain(label + ".device_class",
                                                                            alt["device_class"], "DeviceClass"))
    if params.get("share_memory") not in (None, ""):
        checks.append(lambda: workload_migration.check_memory(name("share_memory"), params["share_memory"]))
        checks.append(lambda: _share_alone(params, name))
    expect = params.get("expect") or {}
    unknown = sorted(set(expect) - set(("product_contains", "min_memory", "attributes")))
    if unknown:
        checks.append(lambda: _raise("%s has %s, which it does not know; use product_contains, min_memory and "
                                     "attributes" % (name("expect"), ", ".join(unknown))))
    if expect.get("min_memory") is not None:
        checks.append(lambda: _quantity(name("expect") + ".min_memory", expect["min_memory"]))
    return checks


def _share_alone(params, name):
    """share_memory runs pods of its own, each with one claim of one device."""
    taken = [name(option) for option in ("pods", "count") if str(params.get(option) or 1).strip() != "1"]
    if params.get("first_available"):
        taken.append(name("first_available"))
    if taken:
        _raise("%s runs two pods with a claim of its own each, for one device; leave %s unset"
               % (name("share_memory"), " and ".join(taken)))


def _raise(message):
    raise inputs.InputError(message)


def _quantity(label, value):
    try:
        parse_quantity(str(value))
    except QuantityError:
        raise inputs.InputError("%s is %r, which is not a quantity; write it like 16Gi or 24000Mi" % (label, value))


def _request(device_class, count, selectors):
    request = {"deviceClassName": device_class, "count": int(count)}
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return request


def claim_spec(device_class, count=1, selectors=None, first_available=None):
    """``spec`` of a ResourceClaim: one exact request, or a prioritized list."""
    if first_available:
        alternatives = []
        for index, alt in enumerate(first_available):
            sub = _request(alt.get("device_class") or device_class, alt.get("count", 1),
                           alt.get("selectors"))
            sub["name"] = alt.get("name") or "alt%d" % index
            alternatives.append(sub)
        return {"devices": {"requests": [{"name": "gpu", "firstAvailable": alternatives}]}}
    return {"devices": {"requests": [{"name": "gpu", "exactly": _request(device_class, count, selectors)}]}}


def security_context(level):
    """Container securityContext that satisfies the namespace's Pod Security level."""
    if level != "restricted":
        return {}
    return {"runAsNonRoot": True, "runAsUser": 65534, "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def pod_manifest(name, run_id, image, command, claim_ref, node_selector=None, tolerations=None,
                 security_level="restricted", annotations=None):
    """The probe pod: runs once, writes its output to the termination log."""
    labels = dict(MANAGED_BY)
    labels[RUN_LABEL] = run_id
    spec = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "resourceClaims": [dict({"name": "gpu"}, **claim_ref)],
        "containers": [{"name": "probe", "image": image, "command": list(command),
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                        "resources": {"claims": [{"name": "gpu"}]},
                        "securityContext": security_context(security_level)}],
    }
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = list(tolerations)
    meta = {"name": name, "labels": labels}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def chosen_alternative(results):
    """The firstAvailable alternative the scheduler chose ("gpu/alt1" -> "alt1"), or None."""
    for result in results:
        if "/" in (result.get("request") or ""):
            return result["request"].split("/", 1)[1]
    return None


def check_allocation(pod, claim, slices, driver, rules=()):
    """Every allocated device exists in a slice of ``driver`` on the pod's node, is not tainted
    NoSchedule/NoExecute (by its driver's health check or a DeviceTaintRule in ``rules``), and the
    claim is reserved for the pod. Returns the allocated devices with their attributes."""
    node = pod["spec"].get("nodeName")
    results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
    if not results:
        raise SmokeFailure("not_allocated", "claim %s has no allocation" % claim["metadata"]["name"])
    reserved = [r.get("name") for r in (claim.get("status") or {}).get("reservedFor") or []]
    if pod["metadata"]["name"] not in reserved:
        raise SmokeFailure("not_reserved", "claim %s is not reserved for pod %s (reserved for: %s)"
                           % (claim["metadata"]["name"], pod["metadata"]["name"], ", ".join(reserved) or "nobody"))
    published = {}
    for item in slices:
        spec = item.get("spec") or {}
        for device in spec.get("devices") or []:
            published[(spec.get("driver"), spec["pool"]["name"], device["name"])] = (spec.get("nodeName"), device)
    devices = []
    for result in results:
        key = (result.get("driver"), result.get("pool"), result.get("device"))
        if result.get("driver") != driver:
            raise SmokeFailure("wrong_driver", "device %s was allocated by driver %s, expected %s"
                               % (result.get("device"), result.get("driver"), driver))
        if key not in published:
            raise SmokeFailure("unknown_device", "allocated device %s/%s/%s is in no ResourceSlice" % key)
        slice_node, device = published[key]
        if slice_node and slice_node != node:
            raise SmokeFailure("wrong_node", "device %s is published by node %s but the pod runs on %s"
                               % (result.get("device"), slice_node, node))
        taints = device_taints.effective(result["driver"], result["pool"], device, rules)
        if device_taints.blocks(taints):
            # A pass on a GPU out of service would prove nothing about the GPUs users get.
            raise SmokeFailure("tainted_device", "device %s on node %s is tainted (%s): it is out of service, so the "
                               "smoke test does not pass on it; repair it (docs/maintenance.md) or choose other GPUs "
                               "(smoke_test_selectors, smoke_test_node_selector)"
                               % (result.get("device"), node, "; ".join(device_taints.describe(t) for t in taints)))
        attributes = dict((k, plain_attribute(v)) for k, v in (device.get("attributes") or {}).items())
        devices.append({"driver": result["driver"], "pool": result["pool"], "name": result["device"],
                        "request": result.get("request"), "node": node, "attributes": attributes,
                        "capacity": dict((k, (v or {}).get("value")) for k, v in (device.get("capacity") or {}).items())})
    return devices


# The kubelet's FailedPrepareDynamicResources event wraps several kinds of error. Only the
# driver's own per-claim answer ("NodePrepareResources failed for ResourceClaim ...") is a
# verdict on the claim; the kubelet retries everything else (it could not read the claim,
# e.g. while the node authorizer's graph has not yet linked the pod to it; the driver is not
# registered yet; the gRPC call failed), and so does the NVIDIA driver's lock timeout.
DRIVER_REFUSAL = "NodePrepareResources failed for ResourceClaim"
DRIVER_RETRIES = ("error acquiring prep/unprep lock",)


def prepare_failure_is_final(message):
    """True when the kubelet's prepare-failure ``message`` is the driver refusing the claim
    (the pod will not start however long one waits); False for errors the kubelet retries."""
    message = message or ""
    return DRIVER_REFUSAL in message and not any(retry in message for retry in DRIVER_RETRIES)


def probe_output(pod):
    """The probe's termination message (the container's own report)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (status.get("state") or {}).get("terminated") or {}
        if terminated.get("message"):
            return terminated["message"]
    return ""


def check_container(output, devices, probe, pattern=None, attribute=None):
    """The probe saw exactly the allocated devices, and no other GPU."""
    if probe in PROBES:
        pattern, attribute = PROBES[probe]["pattern"], PROBES[probe]["attribute"]
    seen = re.findall(pattern, output or "", flags=re.MULTILINE)
    if not seen:
        raise SmokeFailure("probe_output", "the probe printed no device the verification recognises "
                           "(pattern %s); its output was: %s" % (pattern, (output or "(empty)").strip()[:1000]))
    expected = set()
    for device in devices:
        value = device["name"] if attribute is None else device["attributes"].get(attribute)
        expected.add(value)
        if probe == "nvidia" and device["attributes"].get("parentUUID"):
            # nvidia-smi -L lists the parent GPU above its MIG devices.
            expected.add(device["attributes"]["parentUUID"])
    seen = set(seen)
    extra, missing = sorted(seen - expected), sorted(expected - seen)
    if missing and extra:
        raise SmokeFailure("mismatch", "the container sees %s but was allocated %s" % (
            ", ".join(extra), ", ".join(missing)), seen=sorted(seen), expected=sorted(expected))
    if extra:
        raise SmokeFailure("extra_devices", "the container sees devices it was not allocated: %s (a runtime or "
                           "image that exposes every GPU, e.g. NVIDIA_VISIBLE_DEVICES=all?)" % ", ".join(extra),
                           seen=sorted(seen), expected=sorted(expected))
    if missing:
        raise SmokeFailure("missing_devices", "the container does not see allocated devices: %s"
                           % ", ".join(missing), seen=sorted(seen), expected=sorted(expected))
    return sorted(seen)


def check_expectations(devices, expect):
    """``expect``: product_contains, min_memory, attributes (exact values)."""
    problems = []
    for device in devices:
        attrs = device["attributes"]
        if expect.get("product_contains") and expect["product_contains"] not in str(attrs.get("productName", "")):
            problems.append("%s is a %s, not a %s"
                            % (device["name"], attrs.get("productName"), expect["product_contains"]))
        if expect.get("min_memory"):
            try:
                have = parse_quantity(device["capacity"].get("memory") or "0")
                want = parse_quantity(expect["min_memory"])
            except QuantityError as exc:
                raise SmokeFailure("bad_input", "expect.min_memory: %s" % exc)
            if have < want:
                problems.append("%s has %s of memory, less than %s"
                                % (device["name"], device["capacity"].get("memory"), expect["min_memory"]))
        for key, value in (expect.get("attributes") or {}).items():
            if str(attrs.get(key)) != str(value):
                problems.append("%s has %s=%s, expected %s" % (device["name"], key, attrs.get(key), value))
    if problems:
        raise SmokeFailure("expectation", "allocated devices do not meet expectations: " + "; ".join(problems))


# ----- shared claims ---------------------------------------------------------------------
# What NVIDIA's plugin puts into every container of an MPS claim (its CDI edits): the pipe
# directory of the claim's MPS control daemon. The limits are set in that daemon, not here.
MPS_PIPE_VARIABLE = "CUDA_MPS_PIPE_DIRECTORY"
_STRATEGY_KEYS = {"TimeSlicing": "time_slicing", "MPS": "mps"}
NOT_SHARED = "exclusive: one claim, its devices used as a whole (nothing else shares them)"


def effective_sharing(claim, driver):
    """The sharing config NVIDIA's plugin applies to the claim, read from the allocation as
    the driver reads it: class configs first, the claim's own after them, the last wins."""
    entries = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("config") or []
    ordered = [e for e in entries if e.get("source") == "FromClass"] + \
              [e for e in entries if e.get("source") == "FromClaim"]
    found = None
    for entry in ordered:
        opaque = entry.get("opaque") or {}
        if opaque.get("driver") == driver and (opaque.get("parameters") or {}).get("sharing"):
            found = {"source": entry.get("source"), "parameters": opaque["parameters"]}
    if found is None:
        return {"strategy": None, "source": None, "parameters": None, "enforces": NOT_SHARED}
    strategy = found["parameters"]["sharing"].get("strategy")
    key = "mig" if found["parameters"].get("kind") == sharing_config.MIG_CONFIG else _STRATEGY_KEYS.get(strategy)
    enforces = sharing_config.STRATEGIES[key]["enforces"] if key else "unknown strategy %r" % strategy
    if key == "mig" and strategy == "MPS":
        enforces += "; MPS inside the partition caps each client as configured"
    return dict(found, strategy=strategy, enforces=enforces)


def check_same_devices(seen_by_pod):
    """Every pod of a shared claim saw the same devices. ``seen_by_pod``: {pod: [ids]}."""
    distinct = set(tuple(ids) for ids in seen_by_pod.values())
    if len(distinct) > 1:
        raise SmokeFailure("not_shared", "the pods of one shared claim saw different devices: %s" % "; ".join(
            "%s: %s" % (pod, ", ".join(ids)) for pod, ids in sorted(seen_by_pod.items())), seen=seen_by_pod)


def check_mps(output, pod):
    """The container of an MPS claim was connected to the claim's MPS control daemon."""
    if not re.search(r"^%s=\S+" % MPS_PIPE_VARIABLE, output or "", flags=re.MULTILINE):
        raise SmokeFailure("mps_not_connected", "the claim is prepared with MPS but pod %s has no %s, so its CUDA "
                           "work would not go through the MPS control daemon and its limits; print the variable in "
                           "the probe (the default command does) or check the driver's MPSSupport gate"
                           % (pod, MPS_PIPE_VARIABLE))


# ----- the run's verdicts ------------------------------------------------------------------
IMAGE_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
START_ERRORS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff")
# Scheduler messages that mean no device can satisfy the claim (rather than "not yet").
UNSATISFIABLE = ("cannot allocate", "unsatisfiable", "does not exist", "insufficient")
PREPARE_FAILED_REASON = "FailedPrepareDynamicResources"


def namespace_manifest(name, security_level):
    """A namespace for the test, labelled with its Pod Security level (None: unlabelled)."""
    labels = dict(MANAGED_BY)
    if security_level:
        labels["pod-security.kubernetes.io/enforce"] = security_level
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def claim_object(name, run_id, spec, shared, api_version):
    """(body, the pods' claim reference): one ResourceClaim every pod shares when ``shared``,
    else a ResourceClaimTemplate that gives each pod its own claim."""
    labels = dict(MANAGED_BY, **{RUN_LABEL: run_id})
    if shared:
        return ({"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": name, "labels": labels},
                 "spec": spec}, {"resourceClaimName": name})
    return ({"apiVersion": api_version, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "labels": labels},
             "spec": {"metadata": {"labels": labels}, "spec": spec}}, {"resourceClaimTemplateName": name})


def pod_failure(pod, prepare_failures):
    """Why ``pod`` will never complete its probe, as a SmokeFailure, or None while it still may.
    ``prepare_failures``: pod name -> the driver's refusal to prepare its claim."""
    status = pod.get("status") or {}
    name = pod["metadata"]["name"]
    if name in prepare_failures:
        return SmokeFailure("prepare_failed", "the DRA driver refused to prepare the claim of pod %s, so its "
                            "container cannot start: %s" % (name, prepare_failures[name]), event=prepare_failures[name])
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
            message = condition.get("message") or ""
            if any(marker in message for marker in UNSATISFIABLE):
                return SmokeFailure("unschedulable", "no device can satisfy the claim of pod %s: %s"
                                    % (name, message), scheduler_message=message)
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in IMAGE_ERRORS:
            return SmokeFailure("image_pull", "pod %s cannot pull image %s: %s %s" % (
                name, cs.get("image"), waiting["reason"], waiting.get("message") or ""))
        if waiting.get("reason") in START_ERRORS:
            return SmokeFailure("container_start", "pod %s cannot start its probe: %s %s" % (
                name, waiting["reason"], waiting.get("message") or ""))
    if status.get("phase") == "Failed":
        return SmokeFailure("probe_failed", "the probe in pod %s failed: %s" % (
            name, probe_output(pod).strip() or "(no output)"), output=probe_output(pod))
    return None


def pods_verdict(pods, expected, prepare_failures):
    """None while waiting; ("done", pods) when all ``expected`` pods completed; ("failed", SmokeFailure)."""
    for pod in pods:
        failure = pod_failure(pod, prepare_failures)
        if failure is not None:
            return "failed", failure
    if len(pods) == expected and all((p.get("status") or {}).get("phase") == "Succeeded" for p in pods):
        return "done", pods
    return None


def describe_pods(pods):
    """Where each pod stands, for a timeout message."""
    if not pods:
        return "no smoke-test pod exists"
    parts = []
    for pod in pods:
        status = pod.get("status") or {}
        detail = status.get("phase") or "Pending"
        for condition in status.get("conditions") or []:
            if condition.get("status") != "True" and condition.get("message"):
                detail += " (%s)" % condition["message"]
                break
        parts.append("pod %s: %s" % (pod["metadata"]["name"], detail))
    return "; ".join(parts)


def with_every_reservation(claim, known):
    """``claim`` with every pod it was reserved for during the run (``known``: the claim as last
    recorded, or None): the controller releases a finished pod's reservation, so with several pods
    on one claim the first can be gone before the last is reserved."""
    status = claim.get("status") or {}
    reserved = list(((known or {}).get("status") or {}).get("reservedFor") or [])
    reserved += [r for r in status.get("reservedFor") or [] if r not in reserved]
    return dict(claim, status=dict(status, reservedFor=reserved))


def prepare_event(event, pod_prefix):
    """(pod name, message, final) of a FailedPrepareDynamicResources event about a pod whose name
    starts with ``pod_prefix``, else None. ``final``: the driver refused (see prepare_failure_is_final)."""
    involved = event.get("involvedObject") or event.get("involved_object") or {}
    name, message = involved.get("name") or "", event.get("message") or ""
    if not name.startswith(pod_prefix):
        return None
    return name, message, prepare_failure_is_final(message)


def claim_names(pod):
    """Names of the ResourceClaims ``pod`` uses, generated (from its status) and named (in its spec)."""
    names = [s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []]
    names += [r.get("resourceClaimName") for r in pod["spec"].get("resourceClaims") or []]
    return [name for name in names if name]


def add_devices(devices, allocated):
    """Append to ``devices`` those of ``allocated`` it does not hold yet (one pool and name each)."""
    for device in allocated:
        if (device["pool"], device["name"]) not in [(d["pool"], d["name"]) for d in devices]:
            devices.append(device)


def run_result(pods, devices, outputs, chosen, seen_by_pod, sharing):
    """The module's result of a verified run (timings and namespace are added by the run)."""
    nodes = sorted(set(p["spec"].get("nodeName") for p in pods))
    shared = {"pods": len(pods), "same_devices": len(seen_by_pod) > 1,
              "seen": sorted(set(i for ids in seen_by_pod.values() for i in ids))} if len(pods) > 1 else None
    return {"node": nodes[0] if len(nodes) == 1 else nodes, "devices": devices,
            "first_available_choice": chosen, "probe_outputs": outputs, "shared": shared, "sharing": sharing}


def node_selector_text(selector):
    """A label selector string for the node selector mapping (booleans as Kubernetes writes them)."""
    return ",".join("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in sorted(selector.items()))


def no_node_matches(text, every_node):
    return SmokeFailure("bad_input", "node_selector %s matches no node (nodes: %s), so the probe could never be "
                        "scheduled; correct node_selector, check the labels with `kubectl get nodes -l '%s'`"
                        % (text, ", ".join(every_node) or "none", text))


def selector_expressions(selectors, first_available):
    """Every CEL selector of the options, [(where it was given, expression)]."""
    expressions = [("selectors[%d]" % i, e) for i, e in enumerate(selectors or [])]
    for index, alt in enumerate(first_available or []):
        expressions += [("first_available[%d].selectors[%d]" % (index, i), e)
                        for i, e in enumerate(alt.get("selectors") or [])]
    return expressions


def own_claims(claims, run_id, pod_names):
    """Names of the ResourceClaims the run made (its label) or the controller made for its pods."""
    names = []
    for claim in claims:
        owners = [o.get("name") for o in claim["metadata"].get("ownerReferences") or []]
        labels = claim["metadata"].get("labels") or {}
        if labels.get(RUN_LABEL) == run_id or set(owners) & set(pod_names):
            names.append(claim["metadata"]["name"])
    return names


# ----- a share of a card (share_memory) -----------------------------------------------------
# Two pods, each with a ResourceClaim of its own asking for share_memory of one device. A probe
# exits within seconds and its claim is released when it ends, so each share is held by a pod
# that runs until the test removes it (restartPolicy Always, bounded by activeDeadlineSeconds in
# case the cleanup cannot run), and the probe uses the same claim beside it: both shares are
# allocated at once, while the probes read the GPU and while a claim too large is tried.
ROLE_LABEL = "dra.gpu/smoke-test-pod"
HOLDER, PROBE, TOO_BIG = "holder", "probe", "too-big"
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


def claim_holder(name, run_id, settings, claim_name, hold_seconds):
    """A pod that keeps a shared claim reserved while the probes run. A claim no pod holds is
    deallocated: were the first probe done before the next one is scheduled, the scheduler would
    allocate the claim anew, maybe on another node, and the probes would not share one GPU. It
    runs the probe's own image and command (so it needs nothing the probe does not) and restarts
    them until the cleanup: a pod that restarts never ends, so the claim stays reserved for it."""
    s = settings
    pod = pod_manifest(name, run_id, s.image, s.command, {"resourceClaimName": claim_name}, s.node_selector,
                       s.tolerations, s.probe_security, None)
    pod["metadata"]["labels"][ROLE_LABEL] = HOLDER
    pod["spec"]["restartPolicy"] = "Always"
    pod["spec"]["activeDeadlineSeconds"] = int(hold_seconds)
    return pod


def holder_scheduled(pods):
    """None while waiting; ("done", pod) once the scheduler bound the holder (its claim is then
    allocated and reserved for it); ("failed", SmokeFailure) when it cannot be."""
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName"):
            return "done", pod
        failure = pod_failure(pod, {})
        if failure is not None:
            return "failed", failure
    return None


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
