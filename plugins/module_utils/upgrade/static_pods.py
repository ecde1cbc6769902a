# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which version a control plane's static pods run, from their manifests' image tags.

`kubeadm upgrade node` rewrites etcd first, then kube-apiserver, kube-controller-manager and
kube-scheduler; when those three name the target's tag, the step is done on that node. An
upgrade killed after it (before the node's kubelet moved) then skips it on the rerun.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

MANIFESTS = "/etc/kubernetes/manifests"
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
# `grep -H image: FILE...`: "/etc/kubernetes/manifests/kube-apiserver.yaml:  image: .../kube-apiserver:v1.35.4"
_LINE = re.compile(r"^(?:.*/)?(?P<file>[^/:]+)\.yaml:\s*(?:-\s*)?image:\s*['\"]?(?P<image>[^'\"\s]+)")


def versions(grep_output):
    """{component: version without "v"} of the manifests' images (a digest-only image has none)."""
    found = {}
    for line in (grep_output or "").splitlines():
        match = _LINE.match(line.strip())
        if not match or match.group("file") not in COMPONENTS:
            continue
        tag = match.group("image").split("@")[0].rsplit("/", 1)[-1].partition(":")[2]
        found[match.group("file")] = tag[1:] if tag.startswith("v") else tag
    return found


def at_version(grep_output, version):
    """True when every control-plane component's manifest names ``version`` (e.g. 1.35.4)."""
    found = versions(grep_output)
    wanted = str(version).lstrip("v")
    return all(found.get(component) == wanted for component in COMPONENTS)
