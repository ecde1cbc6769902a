# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Restoring a kubeadm cluster's stacked etcd from a snapshot (pure logic, no host access).

Every member is restored from the same snapshot as a member of a new cluster (a fresh token)
before any starts again: one restored member beside running ones would hold a history they do
not share. Each member keeps its name and peer URL, read from its own static pod manifest
(kubeadm writes them as flags of the etcd command), so the certificates still match.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MANIFEST = "/etc/kubernetes/manifests/etcd.yaml"
# What the Kubernetes guide to restoring etcd uses: far past any revision written since.
BUMP_REVISION = "1000000000"


class RestoreError(ValueError):
    pass


def _flags(command):
    found = {}
    for word in command or []:
        name, sep, value = str(word).partition("=")
        if name.startswith("--") and sep:
            found[name[2:]] = value
    return found


def member(manifest_text, host):
    """{name, peer_url, data_dir} of the etcd member whose manifest this is (read on ``host``)."""
    # Imported here, as the other module_utils do: it runs on the controller (a filter), where
    # ansible-core brings PyYAML; a module's import of this file must not need it.
    import yaml
    try:
        pod = yaml.safe_load(manifest_text) or {}
        containers = pod["spec"]["containers"]
    except (yaml.YAMLError, KeyError, TypeError):
        raise RestoreError("%s on %s is not a static pod manifest: is this a kubeadm control plane with stacked etcd?"
                           % (MANIFEST, host))
    etcd = next((c for c in containers if c.get("name") == "etcd"), containers[0] if containers else {})
    flags = _flags(etcd.get("command"))
    missing = [f for f in ("name", "initial-advertise-peer-urls", "data-dir") if not flags.get(f)]
    if missing:
        raise RestoreError("%s on %s lacks %s in the etcd command; kubeadm writes them for stacked etcd"
                           % (MANIFEST, host, ", ".join("--" + f for f in missing)))
    return {"name": flags["name"], "peer_url": flags["initial-advertise-peer-urls"].split(",")[0],
            "data_dir": flags["data-dir"].rstrip("/")}


def restore_argv(snapshot, this, members, token, etcdutl="etcdutl"):
    """etcdutl's command that restores ``snapshot`` into this member's new data directory
    (``<data_dir>-restored``), ``members`` being every member's ``member()`` result."""
    names = [m["name"] for m in members]
    if len(set(names)) != len(names):
        raise RestoreError("two control planes name the same etcd member (%s): each needs its own --name"
                           % ", ".join(sorted(set(n for n in names if names.count(n) > 1))))
    cluster = ",".join("%s=%s" % (m["name"], m["peer_url"]) for m in sorted(members, key=lambda m: m["name"]))
    return [etcdutl, "snapshot", "restore", snapshot, "--name", this["name"],
            "--initial-advertise-peer-urls", this["peer_url"], "--initial-cluster", cluster,
            "--initial-cluster-token", token, "--data-dir", this["data_dir"] + "-restored",
            # Revisions past any a watcher saw, compacted: the API server's and controllers' watches
            # list again instead of waiting for revisions the restored history never reaches.
            "--bump-revision", BUMP_REVISION, "--mark-compacted"]
