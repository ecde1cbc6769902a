# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules about a node's host that Kubernetes 1.35+ and DRA impose: cgroup v2, the container
runtime's version and its CDI support. One place, one shape.

Each rule judges one node and returns a finding ``{code, severity, node, message, fix}`` or
None. ``readiness`` (is the cluster ready for DRA now?) gathers them into its checks;
``versions.plan`` (may the upgrade to a target start?) turns them into blockers and cautions.
Both therefore say the same thing about the same host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

BLOCKER, CAUTION = "blocker", "caution"
CGROUP_V2_FS = "cgroup2fs"
# The kubelet refuses cgroup v1 by default from this minor (failCgroupV1).
CGROUP_V1_REFUSED_FROM = 35
# containerd 1.x: 1.35 is its last minor; 1.36 needs containerd 2.0.
CONTAINERD_1_LAST_MINOR = 35
# Container runtimes and the first version that injects devices through CDI by default;
# containerd 1.7 does so only with enable_cdi = true.
CDI_BY_DEFAULT = {"containerd": (2, 0), "cri-o": (1, 27)}
CONTAINERD_CDI_OPT_IN = (1, 7)

CGROUP_V1_FIX = ("boot the host with cgroup v2 (systemd.unified_cgroup_hierarchy=1); from 1.35 the kubelet refuses "
                 "cgroup v1 unless failCgroupV1: false is set in its KubeletConfiguration, knowingly")


def runtime(text):
    """'containerd://2.1.4' -> ('containerd', (2, 1)); unknown parts -> None."""
    name, _sep, version = str(text or "").partition("://")
    parts = version.lstrip("v").split(".")
    try:
        return name, (int(parts[0]), int(parts[1]))
    except (IndexError, ValueError):
        return name or None, None


def _finding(code, severity, node, message, fix):
    return {"code": code, "severity": severity, "node": node, "message": message, "fix": fix}


def cgroup(node, cgroup_fs, target_minor=CGROUP_V1_REFUSED_FROM):
    """A blocker when the host runs cgroup v1 and the kubelet at ``target_minor`` refuses it.
    ``cgroup_fs`` is what `stat -fc %T /sys/fs/cgroup/` printed; None (not read) judges nothing."""
    if not cgroup_fs or cgroup_fs == CGROUP_V2_FS or target_minor < CGROUP_V1_REFUSED_FROM:
        return None
    return _finding("cgroup_v1", BLOCKER, node, "%s runs cgroup v1 (%s); from 1.35 the kubelet refuses it by default"
                    % (node, cgroup_fs), CGROUP_V1_FIX)


def containerd_version(node, runtime_text, target_minor):
    """containerd 1.x on the way to ``target_minor``: a blocker from 1.36, a caution at 1.35."""
    name, version = runtime(runtime_text)
    if name != "containerd" or version is None or version[0] >= 2 or target_minor < CONTAINERD_1_LAST_MINOR:
        return None
    if target_minor > CONTAINERD_1_LAST_MINOR:
        return _finding("containerd_1", BLOCKER, node, "%s runs %s; Kubernetes 1.36 needs containerd 2.0 or later"
                        % (node, runtime_text), "upgrade containerd to 2.x on that node before the 1.36 hop")
    return _finding("containerd_1", CAUTION, node, "%s runs %s; 1.35 is the last minor that supports containerd 1.x"
                    % (node, runtime_text), "plan containerd 2.x (also enables CDI by default)")


def cdi(node, runtime_text):
    """Whether the runtime hands CDI devices to containers: None when by default, a caution for
    containerd 1.7 (only with enable_cdi = true), a blocker otherwise or when unknown."""
    name, version = runtime(runtime_text)
    first = CDI_BY_DEFAULT.get(name)
    shown = "%s (%s)" % (node, runtime_text or "no runtime reported")
    if first is not None and version is not None and version >= first:
        return None
    if name == "containerd" and version is not None and version >= CONTAINERD_CDI_OPT_IN:
        return _finding("cdi_opt_in", CAUTION, node, "%s: containerd 1.7 injects CDI devices only when "
                        "enable_cdi = true" % shown,
                        "check enable_cdi = true in the CRI plugin section of /etc/containerd/config.toml, or move "
                        "to containerd 2.x (needed anyway before Kubernetes 1.36)")
    return _finding("no_cdi", BLOCKER, node, "%s cannot inject devices through CDI" % shown,
                    "run containerd 2.0 or later (CDI on by default), containerd 1.7 with enable_cdi = true, "
                    "or CRI-O 1.27 or later")
