# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for nodes to come back Ready at a kubelet version (after an upgrade)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions
from ansible_collections.dra.gpu.plugins.module_utils.k8s.nodes import summary


def version_matches(kubelet, wanted):
    """'v1.35.4' matches '1.35.4' and '1.35'; None matches anything."""
    if not wanted:
        return True
    have, want = versions.parse(kubelet or "0.0"), versions.parse(wanted)
    return have[:2] == want[:2] and (want[2] is None or have[2] == want[2])


def shortfall(node, wanted_version):
    """Why a node summary is not yet what the upgrade waits for, or None."""
    if node is None:
        return "not registered"
    reasons = []
    if not node["ready"]:
        reasons.append("not Ready")
    if not version_matches(node["kubelet"], wanted_version):
        reasons.append("kubelet %s, waiting for %s" % (node["kubelet"], wanted_version))
    return ", ".join(reasons) or None


class NotANode(Exception):
    """A named node is not in the cluster: waiting cannot make it appear."""


def wait(kube, names, wanted_version, timeout):
    """Return the summaries of ``names`` once all are Ready at ``wanted_version``.

    A name that is no node of the cluster fails at once (NotANode), not at the timeout: an
    upgrade restarts kubelets, it does not register nodes."""
    missing = []

    def condition(items):
        found = dict((n["name"], n) for n in (summary(i) for i in items))
        absent = [name for name in names if name not in found]
        if absent:
            missing[:] = absent
            return "missing"
        if all(shortfall(found.get(name), wanted_version) is None for name in names):
            return [found[name] for name in names]
        return None

    selector = "metadata.name=%s" % names[0] if len(names) == 1 else None
    kwargs = {"field_selector": selector} if selector else {}

    def lister():
        return kube.list_all(kube.core.list_node, **kwargs)

    watcher = watch.kube_watcher(kube.core.list_node, kube.api, **kwargs)
    description = "node(s) %s to be Ready%s" % (", ".join(names), (
        " with kubelet %s" % wanted_version) if wanted_version else "")
    try:
        result, _stats = watch.wait_until(lister, watcher, condition, timeout, description)
    except watch.WaitTimeout as exc:
        found = dict((n["name"], n) for n in (summary(i) for i in exc.state))
        details = ["%s: %s" % (name, shortfall(found.get(name), wanted_version)) for name in names
                   if shortfall(found.get(name), wanted_version)]
        raise watch.WaitTimeout("%s (%s)" % (exc, "; ".join(details)), exc.state)
    if result == "missing":
        absent = missing
        known = sorted(n["metadata"]["name"] for n in kube.list_all(kube.core.list_node)[0])
        raise NotANode("%s %s not a node of the cluster (its nodes: %s); check the name%s, e.g. with "
                       "`kubectl get nodes`" % (", ".join(absent), "is" if len(absent) == 1 else "are",
                                                ", ".join(known) or "none", "s" if len(absent) > 1 else ""))
    return result
