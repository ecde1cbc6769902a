# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for nodes to come back Ready at a kubelet version (after an upgrade)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils import versions, watch
from ansible_collections.dra.gpu.plugins.module_utils.nodes import summary


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


def wait(kube, names, wanted_version, timeout):
    """Return the summaries of ``names`` once all are Ready at ``wanted_version``."""
    def condition(items):
        found = dict((n["name"], n) for n in (summary(i) for i in items))
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
    return result
