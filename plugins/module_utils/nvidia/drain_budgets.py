# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which PodDisruptionBudgets keep a drain from finishing, as data over listed objects.

The eviction API refuses (429) to evict a pod that a budget of its namespace selects while
that budget allows no disruption. It does not ask the budget for a pod that is Pending,
finished or already terminating, and a drain with ignore_daemonsets leaves DaemonSet pods and
mirror pods alone; those pods cannot be what blocks it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia.gpu_handover import selector_matches

# Phases in which the eviction API lets a pod go without asking its budget.
NOT_GUARDED = ("Pending", "Succeeded", "Failed")
MIRROR = "kubernetes.io/config.mirror"


def allows_no_disruption(budget):
    """A budget the eviction API refuses evictions for: its status allows no disruption (none
    counted yet counts as none), or the disruption controller has not yet seen its last change."""
    status = budget.get("status") or {}
    if (status.get("observedGeneration") or 0) < ((budget.get("metadata") or {}).get("generation") or 0):
        return True
    return (status.get("disruptionsAllowed") or 0) <= 0


def guarded(pod):
    """Whether evicting ``pod`` in a drain (ignore_daemonsets) asks its budgets."""
    metadata = pod.get("metadata") or {}
    if metadata.get("deletionTimestamp") or MIRROR in (metadata.get("annotations") or {}):
        return False
    if any(owner.get("kind") == "DaemonSet" for owner in metadata.get("ownerReferences") or []):
        return False
    return (pod.get("status") or {}).get("phase") not in NOT_GUARDED


def selects(budget, pod):
    """A budget selects the pods of its own namespace its selector matches; in policy/v1 an empty
    selector selects every pod of the namespace and a missing one none."""
    selector = (budget.get("spec") or {}).get("selector")
    if selector is None:
        return False
    if (budget.get("metadata") or {}).get("namespace") != (pod.get("metadata") or {}).get("namespace"):
        return False
    return selector_matches(selector, (pod.get("metadata") or {}).get("labels"))


def name(obj):
    metadata = obj.get("metadata") or {}
    return "%s/%s" % (metadata.get("namespace"), metadata.get("name"))


def blocking(budgets, pods=None):
    """'<namespace>/<name>' of each budget that allows no disruption, sorted. With ``pods`` (the
    drained node's), only those that select one of its pods an eviction would ask them about."""
    zero = [b for b in budgets if allows_no_disruption(b)]
    if pods is not None:
        candidates = [p for p in pods if guarded(p)]
        zero = [b for b in zero if any(selects(b, p) for p in candidates)]
    return sorted(set(name(b) for b in zero))
