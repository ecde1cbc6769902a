# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the cluster's answers mean to a smoke test: a pod that will never complete its probe, pods
that are done, the kubelet's prepare failures, a node selector or CEL selector to refuse before
anything is made, and which claims are the run's.

Pure functions over plain dicts; smoke_run.py watches, these functions decide.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke import RUN_LABEL, SmokeFailure
from ansible_collections.dra.gpu.plugins.module_utils.smoke.smoke_checks import probe_output

IMAGE_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
START_ERRORS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff")
# Scheduler messages that mean no device can satisfy the claim (rather than "not yet").
UNSATISFIABLE = ("cannot allocate", "unsatisfiable", "does not exist", "insufficient")
PREPARE_FAILED_REASON = "FailedPrepareDynamicResources"

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
