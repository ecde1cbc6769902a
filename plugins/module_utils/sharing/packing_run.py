# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a gpu_fit plan's workloads as real pods, read what the scheduler placed, remove them again.

The plan is made from the cluster as it is just before the pods are created, so that both see the
same free devices. Each workload's pods are created once the previous workload's are all
decided (scheduled or Unschedulable), the order gpu_fit plans in. The verdicts and the comparison
are in packing.py; removal is smoke_cleanup's SmokeCleanup, on failure too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time
import uuid

from ansible_collections.dra.gpu.plugins.module_utils.dra import slices
from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.sharing import fit_workloads, gpu_fit, packing
from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke, smoke_cleanup
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import PLURALS, RESOURCE_GROUP, RESOURCE_VERSION, ApiException, api_error_message


class PackingFailure(Exception):
    """The run could not say what the scheduler did (refused object, timeout); the message says which."""


def plan(kube, params):
    """gpu_fit's plan of ``params["workloads"]`` over the cluster as it is now."""
    slice_list, _version = kube.slices(params["driver"])
    classes = kube.list_resource("deviceclasses")[0]
    return gpu_fit.from_slices(slice_list, kube.claims(), params["workloads"], params["driver"], None, classes,
                               slices.taint_rules(kube))


def run_and_clean_up(kube, params, clock=time.monotonic):
    """The plan, the pods, the scheduler's verdicts and the comparison; then removal of what the
    run made. Returns (passed, result) for exit_json or fail_json."""
    run_id = uuid.uuid4().hex[:8]
    made, result = [], None
    try:
        the_plan = plan(kube, params)
        _ensure_namespace(kube, params["namespace"], made)
        deadline = clock() + params["timeout"]
        outcomes = []
        for workload in fit_workloads.parse_workloads(params["workloads"]):
            _create(kube, params["namespace"], made,
                    packing.template(workload, params["strategy"], run_id, "%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION)))
            for index in range(workload["replicas"]):
                _create(kube, params["namespace"], made, packing.pod(workload, index, run_id, params["image"]))
            verdicts = _wait_decided(kube, params["namespace"], run_id, workload, deadline - clock(), clock)
            outcomes.append(packing.workload_outcome(workload, verdicts))
        claims, _version = kube.list_resource(PLURALS["ResourceClaim"], namespace=params["namespace"])
        allocated = packing.allocations(claims, run_id)
        found = packing.differences(the_plan, params["strategy"], outcomes, allocated)
        result = {"plan": the_plan, "scheduler": outcomes, "allocations": allocated, "agrees": not found,
                  "differences": found, "summary": packing.summary(params["strategy"], the_plan, outcomes, found)}
    except (PackingFailure, watch.WaitTimeout) as exc:
        result = {"msg": str(exc)}
    except ApiException as exc:
        result = {"msg": "the packing check could not talk to the API server: %s" % api_error_message(exc)}
    left = smoke_cleanup.SmokeCleanup(kube, params["namespace"], run_id, clock).remove(made, True)
    if left:
        result["left_behind"] = left
        result["msg"] = (result.get("msg", "the packing check ran") + "; could not remove %s" % ", ".join(left))
    if "msg" in result:
        return False, result
    return True, dict(result, changed=False)


def _ensure_namespace(kube, namespace, made):
    """A namespace of the run's own, so that removing it removes everything the run made."""
    try:
        kube.core.read_namespace(namespace)
        raise PackingFailure("namespace %s exists: the packing check makes a namespace of its own and deletes it "
                             "afterwards; name one that does not exist (option namespace)" % namespace)
    except ApiException as exc:
        if exc.status != 404:
            raise
    # The pods run pause only: the restricted Pod Security level admits them.
    _create(kube, namespace, made, smoke.namespace_manifest(namespace, "restricted"))
    smoke_cleanup.wait_for_default_service_account(kube, time.monotonic, namespace)
    return True


def _create(kube, namespace, made, body):
    kind = body["kind"]
    try:
        if kind == "Namespace":
            kube.core.create_namespace(body)
        elif kind == "Pod":
            kube.core.create_namespaced_pod(namespace, _restricted(body))
        else:
            kube.custom.create_namespaced_custom_object(RESOURCE_GROUP, RESOURCE_VERSION, namespace, PLURALS[kind], body)
    except ApiException as exc:
        raise PackingFailure("the API server refused the packing check's %s %s: %s"
                             % (kind, body["metadata"]["name"], api_error_message(exc)))
    made.append((kind, body["metadata"]["name"]))


def _restricted(body):
    """The pod as the restricted Pod Security level wants it (pause runs as non-root anyway)."""
    spec = body["spec"]
    spec["securityContext"] = {"runAsNonRoot": True, "runAsUser": 65535, "seccompProfile": {"type": "RuntimeDefault"}}
    for container in spec["containers"]:
        container["securityContext"] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    return body


def _wait_decided(kube, namespace, run_id, workload, remaining, clock):
    """Watch the workload's pods until the scheduler decided on each (timeout: what is left of the run's)."""
    selector = "%s=%s,%s=%s" % (packing.RUN_LABEL, run_id, packing.WORKLOAD_LABEL, workload["name"])
    list_fn = kube.core.list_namespaced_pod
    return smoke_cleanup.wait_for(
        kube, clock, lambda: kube.list_all(list_fn, namespace=namespace, label_selector=selector), list_fn,
        lambda pods: packing.decided(pods, workload["replicas"]),
        "the scheduler to place or refuse every pod of workload %s (%d)" % (workload["name"], workload["replicas"]),
        max(1, remaining), namespace=namespace, label_selector=selector)
