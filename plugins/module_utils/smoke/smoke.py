# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke test's options and the objects it makes: what to create.

Pure functions over plain dicts. Whether the result proves a GPU is smoke_checks.py's, what the
pods' states mean while the run waits smoke_verdicts.py's, a share of a card (share_memory)
smoke_share.py's; the run against the API is smoke_run.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.workloads import workload_migration_share
from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import QuantityError, parse_quantity

RUN_LABEL = "dra.gpu/smoke-test-run"
# The module's first name; kept on the objects it makes so that selectors people wrote go on matching.
MANAGED_BY = {"app.kubernetes.io/managed-by": "dra.gpu.claim_smoke_test"}
# What a pod does in the run: the probe, a pod that holds a claim while the probes run (a shared
# claim; each share of share_memory), or the pod asking share_memory's claim too large.
ROLE_LABEL = "dra.gpu/smoke-test-pod"
HOLDER, PROBE, TOO_BIG = "holder", "probe", "too-big"

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


def input_problems(params, prefix=""):
    """The problems with a smoke test's options (``prefix`` names role variables, e.g. smoke_test_)."""
    def name(option):
        return prefix + option

    problems = inputs.Problems()
    problems.check(inputs.integer, name("count"), params.get("count"), 1, "devices in the claim")
    problems.check(inputs.integer, name("pods"), params.get("pods"), 1, "probe pods")
    problems.check(inputs.seconds, name("timeout"), params.get("timeout"))
    problems.check(inputs.dns_label, name("namespace"), params.get("namespace"))
    problems.check(inputs.dns_subdomain, name("device_class"), params.get("device_class"), "DeviceClass")
    problems.check(inputs.strings, name("selectors"), params.get("selectors"))
    problems.check(inputs.labels, name("node_selector"), params.get("node_selector"))
    alternatives = params.get("first_available") or []
    problems.check(inputs.unique, name("first_available"),
                   [a.get("name") for a in alternatives if isinstance(a, dict) and a.get("name")], "alternative name")
    for index, alt in enumerate(alternatives):
        label = "%s[%d]" % (name("first_available"), index)
        if not isinstance(alt, dict):
            problems.add("%s is %r; each alternative is a mapping with name, device_class, count and selectors"
                         % (label, alt))
            continue
        if alt.get("name") is not None:
            problems.check(inputs.dns_label, label + ".name", alt["name"], "request")
        problems.check(inputs.integer, label + ".count", alt.get("count", 1), 1, "devices of this alternative")
        problems.check(inputs.strings, label + ".selectors", alt.get("selectors"))
        if alt.get("device_class") is not None:
            problems.check(inputs.dns_subdomain, label + ".device_class", alt["device_class"], "DeviceClass")
    if params.get("share_memory") not in (None, ""):
        problems.check(workload_migration_share.check_memory, name("share_memory"), params["share_memory"])
        problems.extend(_share_alone(params, name))
    expect = params.get("expect") or {}
    unknown = sorted(set(expect) - set(("product_contains", "min_memory", "attributes")))
    if unknown:
        problems.add("%s has %s, which it does not know; use product_contains, min_memory and attributes"
                     % (name("expect"), ", ".join(unknown)))
    if expect.get("min_memory") is not None:
        problems.check(_quantity, name("expect") + ".min_memory", expect["min_memory"])
    return problems.found


def _share_alone(params, name):
    """share_memory runs pods of its own, each with one claim of one device."""
    taken = [name(option) for option in ("pods", "count") if str(params.get(option) or 1).strip() != "1"]
    if params.get("first_available"):
        taken.append(name("first_available"))
    if taken:
        return ["%s runs two pods with a claim of its own each, for one device; leave %s unset"
                % (name("share_memory"), " and ".join(taken))]
    return []


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
