# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm configuration files, the API version they are written in, and their migration.

kubeadm 1.37 removed its v1beta3 configuration API (v1beta4 is the default from kubeadm 1.31).
Two things carry a configuration:

- the ClusterConfiguration in ``kube-system/kubeadm-config``, which is what ``kubeadm upgrade``
  reads. kubeadm writes it in its own API version at ``kubeadm init`` and again at every
  ``kubeadm upgrade apply`` (upload-config), so on a cluster that kubeadm 1.31 or later
  installed or upgraded it is v1beta4; it is v1beta3 only after a hand edit. The plan still
  blocks that case (``configmap_api``).
- files a site keeps on its hosts and passes with ``--config`` (``kubeadm init``/``join`` of new
  nodes, kubespray's ``kubeadm upgrade apply --config``). These are what break: kubeadm 1.37
  refuses a v1beta3 file, and cannot migrate one either, because ``kubeadm config migrate`` reads
  only the versions its own binary knows. So a file is migrated **before the 1.37 hop**, while
  the host's kubeadm is 1.36 or older, with ``kubeadm config migrate --old-config X --new-config Y``.

The pure part (which API versions a file holds, what the plan says) is separate from the one
function that runs kubeadm and writes (``migrate``), whose runner and clock are passed in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import tempfile

GROUP = "kubeadm.k8s.io"
OLD, NEW = "v1beta3", "v1beta4"
# The first minor whose kubeadm neither reads nor migrates v1beta3.
REMOVED_IN = (1, 37)
VARIABLE = "cluster_upgrade_migrate_kubeadm_config"
FILES_VARIABLE = "cluster_upgrade_kubeadm_config_files"
# Values of a kubeadm configuration that are credentials: bootstrap tokens (kubeadm's migrate
# fills in a fresh one where an InitConfiguration has none), join tokens, the certificate key.
_SECRET_RE = re.compile(r"^(?P<head>\s*(?:-\s+)?(?:token|certificateKey)\s*:\s*)(?P<value>\S.*)$",
                        re.MULTILINE)
MASK = "***"
# A top-level apiVersion of kubeadm's group in any document of a multi-document file.
_API_RE = re.compile(r"^apiVersion:\s*[\"']?%s/([A-Za-z0-9]+)[\"']?\s*$" % re.escape(GROUP), re.MULTILINE)


class MigrationError(Exception):
    """kubeadm could not migrate a file; nothing was changed."""


def api_versions(text):
    """The versions of kubeadm's API the file's documents are written in, sorted: ['v1beta3']."""
    return sorted(set(_API_RE.findall(str(text or ""))))


def masked(text):
    """The file's text with its credentials written as ***, for a diff a log may keep."""
    return _SECRET_RE.sub(lambda m: m.group("head") + MASK, str(text or ""))


def needs_migration(versions):
    return OLD in (versions or [])


def migrate_command(path, new_path, kubeadm="kubeadm"):
    return [kubeadm, "config", "migrate", "--old-config", path, "--new-config", new_path]


def backup_path(path, stamp):
    """Where the original is kept, beside it: '/etc/kubernetes/kubeadm.yaml.20261206T231500.v1beta3'."""
    return "%s.%s.%s" % (path, stamp, OLD)


def removal_ahead(current, path):
    """Whether the path crosses into 1.37 (the hosts' files must then be read, and migrated in time)."""
    return current[:2] < REMOVED_IN and any(hop[:2] >= REMOVED_IN for hop in path)


def plan_issues(current, path, files, configmap_api=None, migrate=False):
    """What the 1.37 hop means for kubeadm's configuration: (blockers, cautions, migrations).

    ``current`` is the API server's version tuple, ``path`` the hops (version tuples); ``files``
    maps each inventory host to its read files ({path: [api versions]}); ``migrate`` is the
    role's opt-in. Each v1beta3 file on the way to 1.37 is a blocker naming when and how to
    migrate it, or, with ``migrate``, one migration {host, path} the role does before any hop."""
    blockers, cautions, migrations = [], [], []
    old_files = sorted((host, name) for host, found in (files or {}).items()
                       for name, versions in (found or {}).items() if needs_migration(versions))
    now = "%d.%d" % current[:2]
    if removal_ahead(current, path):
        if configmap_api == OLD:
            blockers.append({
                "code": "kubeadm_v1beta3",
                "message": "kube-system/kubeadm-config holds a v1beta3 ClusterConfiguration (kubeadm writes its own "
                           "version, v1beta4, at init and upgrade apply: this one was edited by hand); kubeadm 1.37, "
                           "which the 1.37 hop runs, no longer reads v1beta3",
                "fix": "before the 1.37 hop, while kubeadm is %s: save the ClusterConfiguration to a file, run "
                       "`kubeadm config migrate --old-config <file> --new-config <new>` and upload it with "
                       "`kubeadm init phase upload-config kubeadm --config <new>`" % now})
        for host, name in old_files:
            if migrate:
                migrations.append({"host": host, "path": name})
                continue
            blockers.append({
                "code": "kubeadm_v1beta3",
                "message": "%s on %s is a kubeadm v1beta3 configuration (%s, read because it is listed in %s); "
                           "kubeadm 1.37 neither reads nor migrates v1beta3" % (name, host, GROUP + "/" + OLD,
                                                                                FILES_VARIABLE),
                "fix": "migrate it before the 1.37 hop, while kubeadm on %s is %s (1.36 or older): `%s` and move the "
                       "new file in place, or set %s: true and the role does it, keeping the original beside it "
                       "(%s)" % (host, now, " ".join(migrate_command(name, name + ".v1beta4")), VARIABLE,
                                 backup_path(name, "<time>"))})
    elif current[:2] >= REMOVED_IN:
        for host, name in old_files:
            cautions.append({
                "code": "kubeadm_v1beta3",
                "message": "%s on %s is a kubeadm v1beta3 configuration, which this cluster's kubeadm (%s) no longer "
                           "reads" % (name, host, now),
                "fix": "rewrite it as v1beta4: `kubeadm config migrate` of a kubeadm 1.36 or older binary can, "
                       "kubeadm %s cannot" % now})
    return blockers, cautions, migrations


def _stamp(now):
    return now.strftime("%Y%m%dT%H%M%S")


def read_file(path):
    """{path, exists, api_versions} of one file on this host."""
    if not os.path.isfile(path):
        return {"path": path, "exists": False, "api_versions": []}
    with open(path) as handle:
        return {"path": path, "exists": True, "api_versions": api_versions(handle.read())}


def migrate(path, run, now, kubeadm="kubeadm", check_mode=False):
    """Migrate one v1beta3 file to v1beta4 in place, keeping the original beside it.

    ``run(argv)`` returns (rc, stdout, stderr); ``now`` is a datetime. A file without v1beta3
    is left alone (idempotent). kubeadm writes to a temporary file in the same directory; only
    when that file holds v1beta4 and no v1beta3 is the original copied to its backup and the
    new file moved over it, so a refusal leaves everything as it was. Returns the file's state
    with ``changed``, ``backup`` and ``before``/``after`` texts for a diff."""
    state = read_file(path)
    state.update(changed=False, backup=None)
    if not state["exists"] or not needs_migration(state["api_versions"]):
        return state
    with open(path) as handle:
        before = handle.read()
    backup = backup_path(path, _stamp(now))
    state.update(changed=True, backup=backup, before=before)
    if check_mode:
        state["after"] = None
        return state
    directory = os.path.dirname(os.path.abspath(path))
    handle, new_path = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".v1beta4", dir=directory)
    os.close(handle)
    try:
        rc, out, err = run(migrate_command(path, new_path, kubeadm))
        if rc != 0:
            command = " ".join(migrate_command(path, "<new>", kubeadm))
            raise MigrationError("`%s` failed (rc %d): %s" % (command, rc, (err or out or "").strip()))
        with open(new_path) as new:
            after = new.read()
        found = api_versions(after)
        if NEW not in found or OLD in found:
            raise MigrationError("`kubeadm config migrate` of %s wrote %s, not %s/%s; is this kubeadm 1.31 to 1.36?"
                                 % (path, ", ".join(found) or "no kubeadm document", GROUP, NEW))
        shutil.copy2(path, backup)
        shutil.copymode(path, new_path)
        stat = os.stat(path)
        if hasattr(os, "chown") and os.geteuid() == 0:
            os.chown(new_path, stat.st_uid, stat.st_gid)
        os.replace(new_path, path)
    finally:
        if os.path.exists(new_path):
            os.unlink(new_path)
    state.update(after=after, api_versions=found)
    return state
