# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which role's checks dra.gpu.input_check runs: one file per role in inputs/roles/ knows its variables.

A role's meta/argument_specs.yml checks types and choices; its file in inputs/roles/ checks what
types cannot say (counts of at least one, versions written in full, names Kubernetes and Helm
accept, each class once, hosts that are in the inventory), and, for some roles, what they mean
in the cluster. Every problem of one run is reported at once, each naming the variable and what
to write instead.

``problems(role, values, inventory)``: the role's problems, one sentence each, [] when all is
well. ``cluster_problem(role, kube, values)``: the message to fail with, or None (also for a
role that reads nothing before its first change).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import (
    cluster_upgrade, device_classes, gpu_maintenance, gpu_operator, gpu_sharing, preflight, smoke_test,
    workload_migration)

_FILES = {"cluster_upgrade": cluster_upgrade, "device_classes": device_classes, "gpu_maintenance": gpu_maintenance,
          "gpu_operator": gpu_operator, "gpu_sharing": gpu_sharing, "preflight": preflight, "smoke_test": smoke_test,
          "workload_migration": workload_migration}
ROLES = tuple(sorted(_FILES))


def problems(role, values, inventory=()):
    """Every problem with ``values`` (the role's variables) as sentences; [] when all is well."""
    if role not in ROLES:
        return ["role must be one of %s, not %r" % (", ".join(ROLES), role)]
    return _FILES[role].problems(values or {}, list(inventory or []))


def cluster_problem(role, kube, values):
    """What the role's inputs mean in the cluster, read through ``kube`` before the role's first change:
    the message to fail with, or None (always None for a role without such a check)."""
    check = getattr(_FILES.get(role), "cluster_problem", None)
    return check(kube, values) if check else None
