# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm versions a pkgs.k8s.io-style repository offers, from what apt and dnf return.

The apt index lists every package of the minor's repository (cri-tools, kubernetes-cni,
kubeadm, ...), each in its own paragraph; only kubeadm's own Version lines count (reading
the next Version after "Package: kubeadm" across paragraphs once took cri-tools' version).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions as kubernetes_versions

PACKAGE = "kubeadm"
# Debian versions carry a revision ("1.35.4-1.1"); rpm's NEVRA a release ("1.35.4-150500.1.1").
_UPSTREAM = re.compile(r"^(\d+\.\d+\.\d+)(?:-|$)")
# HTTP statuses that are answers: the index, or a minor the repository does not have.
ANSWERED = (200, 404)


def from_apt_index(text, package=PACKAGE):
    """'Package: kubeadm\\nVersion: 1.35.4-1.1\\n...' paragraphs -> ['1.35.4', ...]."""
    found = []
    for paragraph in re.split(r"\n\s*\n", str(text or "")):
        fields = dict(_field(line) for line in paragraph.splitlines() if ":" in line and not line[:1].isspace())
        if fields.get("Package") == package:
            match = _UPSTREAM.match(fields.get("Version", ""))
            if match:
                found.append(match.group(1))
    return found


def _field(line):
    name, _sep, value = line.partition(":")
    return name.strip(), value.strip()


def from_dnf_list(text, package=PACKAGE):
    """`dnf list --showduplicates kubeadm` lines ('kubeadm.x86_64  1.35.4-150500.1.1  k8s-1.35') -> versions."""
    found = []
    for line in str(text or "").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].split(".", 1)[0] == package:
            match = _UPSTREAM.match(parts[1])
            if match:
                found.append(match.group(1))
    return found


def offered(apt_results=None, dnf_results=None):
    """Registered loop results of ansible.builtin.uri (apt indexes) and ansible.builtin.command
    (dnf lists) -> {versions: sorted unique, unread: [{url, msg, text}] of the indexes that did not answer}.

    Skipped items (the other package manager) carry neither ``status`` nor ``stdout``."""
    versions, unread = set(), []
    for result in (apt_results or {}).get("results") or []:
        if "status" not in result:
            continue
        if result["status"] == 200:
            versions.update(from_apt_index(result.get("content")))
        elif result["status"] not in ANSWERED:
            where = result.get("url") or (result.get("item") or {}).get("minor")
            why = result.get("msg") or "no answer"
            unread.append({"url": where, "msg": why, "text": "%s: %s" % (where, why)})
    for result in (dnf_results or {}).get("results") or []:
        versions.update(from_dnf_list(result.get("stdout")))
    return {"versions": sorted(versions, key=kubernetes_versions.parse), "unread": unread}
