# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role that stopped half-way tells the user: where it stopped, why, what it had changed
and what it had not, and how to go on. Read from the role's registered loop results, so the
rescue blocks of gpu_operator and device_classes hold one filter call instead of Jinja arithmetic
(the filters operator_stopped and classes_stopped)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _results(registered):
    """The per-item results of a registered loop (none when it did not run or was skipped)."""
    return list((registered or {}).get("results") or []) if isinstance(registered, dict) else []


def _names(items):
    return ", ".join(items) or "none"


def _not_in(planned, done):
    return [name for name in planned if name not in done]


def failure_reason(failed_result):
    """The failed item's message of a loop, else the task's own message."""
    for item in _results(failed_result):
        if item.get("failed"):
            return str(item.get("msg", "failed")).strip()
    return str((failed_result or {}).get("msg", "failed")).strip()


def operator_stopped(failed_task, failed_result, plan, label_steps, installs):
    """gpu_operator's message: the node labels (``label_steps``: the registered loops that label
    nodes) and Helm releases (``installs``) done and not done, against the plan's."""
    labelled = [r["item"]["node"] for step in label_steps for r in _results(step) if r.get("changed")]
    installed = [r["item"]["name"] for r in _results(installs) if "status" in r]
    planned_nodes = [p["node"] for p in (plan or {}).get("node_patches") or []]
    planned_releases = [r["name"] for r in (plan or {}).get("releases") or []]
    return ("gpu_operator stopped at \"%s\": %s. Node labels changed: %s; not changed: %s. Releases installed: %s; "
            "not installed: %s. Fix the cause and run again (what is done reports no change), or undo with "
            "gpu_operator_state=absent." % (
                failed_task, failure_reason(failed_result), _names(labelled),
                _names(_not_in(_unique(planned_nodes), labelled)), _names(installed),
                _names(_not_in(_unique(planned_releases), installed))))


def classes_stopped(failed_task, failed_result, listed, applied, pruned):
    """device_classes' message: the classes of ``listed`` (the role's list) applied (and which of
    them changed), not applied, and those pruned, from the registered loops."""
    done = [r for r in _results(applied) if not r.get("failed")]
    done_names = [r["item"]["name"] for r in done]
    item_failures = "".join(" (%s: %s)" % (_item_name(r["item"]), r.get("msg"))
                            for r in _results(failed_result) if r.get("failed"))
    removed = [str(r["item"]) for r in _results(pruned) if r.get("changed")]
    return ("device_classes stopped at \"%s\": %s%s. Applied: %s (%s changed). Not applied: %s. Removed: %s. Run the "
            "role again once the cause is fixed: finished classes report no change." % (
                failed_task, str((failed_result or {}).get("msg", "failed")).strip(), item_failures,
                _names(done_names), _names([r["item"]["name"] for r in done if r.get("changed")]),
                _names(_not_in(_unique([c["name"] for c in listed or []]), done_names)), _names(removed)))


def _item_name(item):
    return item.get("name", item) if isinstance(item, dict) else item


def _unique(names):
    """The names once each, in their first order (as Ansible's difference filter returns them)."""
    return list(dict.fromkeys(names))
