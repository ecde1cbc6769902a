# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files the connection settings name, checked before a client is built.

A certificate file that is missing, or a kubeconfig that is missing, unreadable, not YAML or not
a kubeconfig, or whose context or cluster is not in it, raises ConnectionProblem with one
sentence that names the setting and the fix. The kubeconfigs are merged as KUBECONFIG merges
them, and the context, server and user they give are kept for connection_failures' messages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.k8s.connection_settings import (
    PREFIX, ConnectionProblem, kubeconfig_fix, kubeconfig_where)


def check_files(found, reader=None):
    """Raise ConnectionProblem for a certificate file or kubeconfig that cannot work.

    Leaves the parsed kubeconfig in ``found["_parsed"]`` (for the server's name in later
    messages)."""
    reader = reader or _read
    for name, what in (("ca_cert", "the cluster's CA certificate (certificate-authority in a kubeconfig)"),
                       ("client_cert", "your client certificate"), ("client_key", "your client certificate's key")):
        setting = found.get(name)
        if setting is None or not setting.value:
            continue
        path = os.path.expanduser(str(setting.value))
        if not os.path.isfile(path):
            raise ConnectionProblem(PREFIX + "%s %s (%s) does not exist. To fix: set %s to the file of %s"
                                    % (name, setting.value, setting.where(), name, what))
    kubeconfig = found.get("_kubeconfig")
    if kubeconfig is None:
        return
    if isinstance(kubeconfig.value, dict):
        documents = [("(inline kubeconfig)", kubeconfig.value)]
    else:
        documents = _read_kubeconfigs(kubeconfig, reader)
    merged = _merge(documents, kubeconfig)
    found["_parsed"] = merged
    _check_context(found, merged)


def _read(path):
    with open(path) as handle:
        return handle.read()


def _read_kubeconfigs(setting, reader):
    import yaml
    paths = [p for p in str(setting.value).split(os.pathsep) if p]
    documents, missing = [], []
    for path in paths:
        full = os.path.expanduser(path)
        if not os.path.exists(full):
            missing.append(path)
            continue
        if os.path.isdir(full):
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) is a directory, not a kubeconfig file. To fix: %s"
                                    % (path, kubeconfig_where(setting), kubeconfig_fix(setting)))
        try:
            text = reader(full)
        except (IOError, OSError) as exc:
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) cannot be read: %s. To fix: make it readable "
                                    "for this user, or %s" % (path, kubeconfig_where(setting),
                                                              getattr(exc, "strerror", None) or exc,
                                                              kubeconfig_fix(setting)))
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = " (line %d)" % (mark.line + 1) if mark is not None else ""
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) is not a kubeconfig: it is not valid YAML%s. "
                                    "To fix: %s" % (path, kubeconfig_where(setting), where,
                                                    kubeconfig_fix(setting)))
        if not _looks_like_kubeconfig(document):
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) is not a kubeconfig: it has no clusters and "
                                    "contexts (a kubeconfig is YAML with apiVersion: v1, kind: Config, clusters, "
                                    "users and contexts). To fix: %s"
                                    % (path, kubeconfig_where(setting), kubeconfig_fix(setting)))
        documents.append((path, document))
    if not documents:
        shown = ", ".join(missing)
        if setting.source == "default":
            raise ConnectionProblem(PREFIX + "no connection settings: neither the kubeconfig nor the host option is "
                                    "set, KUBECONFIG is not set, and %s does not exist. To fix: %s"
                                    % (shown, kubeconfig_fix(setting)))
        raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) does not exist. To fix: %s"
                                % (shown, kubeconfig_where(setting), kubeconfig_fix(setting)))
    return documents


def _looks_like_kubeconfig(document):
    if not isinstance(document, dict):
        return False
    return any(isinstance(document.get(key), list) for key in ("clusters", "contexts")) or \
        bool(document.get("current-context"))


def _merge(documents, setting):
    """KUBECONFIG's merge: the first file that names an entry wins, as does its current-context."""
    merged = {"current-context": None, "contexts": {}, "clusters": {}, "users": {}, "files": [],
              "setting": setting}
    for path, document in documents:
        merged["files"].append(path)
        if not merged["current-context"] and document.get("current-context"):
            merged["current-context"] = document["current-context"]
        for key in ("contexts", "clusters", "users"):
            for entry in document.get(key) or []:
                if isinstance(entry, dict) and entry.get("name") and entry["name"] not in merged[key]:
                    merged[key][entry["name"]] = entry.get(key[:-1]) or {}
    return merged


def _check_context(found, merged):
    setting = merged["setting"]
    files = ", ".join(merged["files"])
    names = sorted(merged["contexts"])
    context = found.get("context")
    wanted = context.value if context is not None and context.value else merged["current-context"]
    if not wanted:
        raise ConnectionProblem(PREFIX + "kubeconfig %s has no current-context and the context option is not set. "
                                "To fix: set context to one of: %s" % (files, ", ".join(names) or "(none)"))
    if wanted not in merged["contexts"]:
        if context is not None and context.value:
            raise ConnectionProblem(PREFIX + "context %r (%s) is not in kubeconfig %s, whose contexts are: %s. "
                                    "To fix: set context to one of them, or leave it unset for the "
                                    "current-context%s" % (wanted, context.where(), files, ", ".join(names) or
                                                           "(none)", " %r" % merged["current-context"]
                                                           if merged["current-context"] else ""))
        raise ConnectionProblem(PREFIX + "the current-context %r of kubeconfig %s is not one of its contexts (%s). "
                                "To fix: set context to one of them, or repair current-context in %s"
                                % (wanted, files, ", ".join(names) or "none", files))
    cluster_name = (merged["contexts"][wanted] or {}).get("cluster")
    cluster = merged["clusters"].get(cluster_name)
    host = found.get("host")
    if host is None and (cluster is None or not cluster.get("server")):
        raise ConnectionProblem(PREFIX + "context %r of kubeconfig %s names cluster %r, which %s. To fix: add the "
                                "cluster with its server to %s, or set host"
                                % (wanted, files, cluster_name, "has no server" if cluster is not None
                                   else "is not in it", files))
    merged["context"] = wanted
    merged["server"] = (cluster or {}).get("server")
    merged["user"] = (merged["contexts"][wanted] or {}).get("user")
