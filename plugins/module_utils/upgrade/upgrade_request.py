# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml upgrades a cluster only when asked (pure logic, no cluster access).

A run that installs DRA must not drain every node on its way. So site.yml works out the lowest
Kubernetes version the features it was asked for need (``version_needed``), plans the way there
from the live cluster with dra.gpu.upgrade_plan, and, when the cluster is older and no upgrade
was asked for, stops before any change with that plan and the command that asks for it
(``stop_message``). The versions come from the tables written once elsewhere: the DRA minimum
in versions.py, each feature's first default-on minor in dra_features.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions

# The variable that asks site.yml to upgrade, and says where to.
REQUEST = "cluster_upgrade_target"
# The gpu_operator setting that needs consumable capacity (memory shares and the other share modes).
SHARES = "gpu_operator_dra_consumable_shares"


def version_needed(settings, dra_min=versions.DRA_MINIMUM):
    """The lowest minor the run's settings need, with why: {"version": "1.36", "reasons": [...]}.
    ``settings``: the run's variables that ask for version-bound features (SHARES)."""
    minimum = versions.minor_of(versions.parse_input(dra_min))
    needs = [(minimum, "DRA needs Kubernetes %d.%d or later" % minimum)]
    shares = str((settings or {}).get(SHARES) or "").strip()
    if shares:
        feature = "consumable_capacity"
        needs.append(((minimum[0], dra_features.first_on(feature)), "%s: %s (%s) %s" % (
            SHARES, shares, dra_features.title(feature), dra_features.needs(feature))))
    highest = max(minor for minor, _why in needs)
    return {"version": "%d.%d" % highest, "reasons": [why for minor, why in needs if minor == highest]}


def command(inventories, playbook, version):
    """The command line that asks for the upgrade: the run's own inventories and playbook."""
    sources = "".join(" -i %s" % source for source in inventories or [])
    return "ansible-playbook%s %s -e %s=%s" % (sources, playbook, REQUEST, version)


def stop_message(plan, needed, inventories, playbook):
    """Why an unasked run stops, with the plan it would run and how to ask for it; None when the
    cluster already runs the needed version (``plan``: dra.gpu.upgrade_plan's result to it)."""
    if not plan.get("hops"):
        return None
    hops = " -> ".join([plan["current"]] + [hop["version"] for hop in plan["hops"]])
    nodes = ", ".join("%s (%s, kubelet %s)" % (node["name"], node["role"], node.get("kubelet") or "?")
                      for node in plan.get("node_order") or [])
    lines = [
        "The cluster runs Kubernetes %s, older than this run needs: %s." % (plan["current"], "; ".join(needed["reasons"])),
        "site.yml upgrades a cluster only when asked, and nothing was changed.",
        "The upgrade it would run: %s, one minor per pass; each pass drains and upgrades the nodes in this order: %s."
        % (hops, nodes or "none listed"),
    ]
    for kind, issues in (("Blocker", plan.get("blockers")), ("Warning", plan.get("cautions"))):
        lines.extend("%s: %s (to fix: %s)." % (kind, issue["message"], issue["fix"]) for issue in issues or [])
    lines.append("To upgrade to %s and go on, run again with %s=%s, keeping your other options: %s "
                 "(add --check first to see each pass's plan without changing anything)."
                 % (needed["version"], REQUEST, needed["version"], command(inventories, playbook, needed["version"])))
    return " ".join(lines)
