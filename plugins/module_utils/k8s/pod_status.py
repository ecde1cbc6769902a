# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pod's state in a line a person can act on: what waits, what exited, what the scheduler said."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def state(pod):
    """A Pod as the API returns it -> {name, node, phase, problem}; problem is None for a pod
    whose containers neither wait nor failed and that is Running (or the first reason found)."""
    status = pod.get("status") or {}
    problem = None
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        container = cs.get("state") or {}
        if container.get("waiting"):
            problem = "%s: %s %s" % (cs.get("name"), container["waiting"].get("reason"),
                                     container["waiting"].get("message") or "")
            break
        if container.get("terminated") and container["terminated"].get("exitCode"):
            problem = "%s exited with %s (%s)" % (cs.get("name"), container["terminated"].get("exitCode"),
                                                  container["terminated"].get("reason"))
            break
    if problem is None and status.get("phase") != "Running":
        problem = "phase %s%s" % (status.get("phase"), _first_condition(status))
    return {"name": pod["metadata"]["name"], "node": (pod.get("spec") or {}).get("nodeName"),
            "phase": status.get("phase"), "problem": problem.strip() if problem else None}


def _first_condition(status):
    """': <message>' of the first condition that is not True and says why, else ''."""
    conditions = [c for c in status.get("conditions") or [] if c.get("status") != "True" and c.get("message")]
    return (": " + conditions[0]["message"]) if conditions else ""


def ready(pod):
    status = pod.get("status") or {}
    if status.get("phase") == "Succeeded":
        return True  # a finished Job's pod is done, not stuck
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def not_ready(pods):
    """'<namespace>/<name> on <node> is <phase> (<why>)' for each pod that is not ready."""
    lines = []
    for pod in pods:
        if ready(pod):
            continue
        seen = state(pod)
        why = seen["problem"] or ("not Ready" + _first_condition(pod.get("status") or {}))
        where = seen["node"] or "no node"
        lines.append("%s/%s on %s is %s (%s)" % (pod["metadata"].get("namespace"), seen["name"], where, seen["phase"], why))
    return lines
