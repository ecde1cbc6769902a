# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes versions, skew rules and upgrade plans (pure logic, no cluster access).

The rules are kubeadm's and the version-skew policy's: one minor per hop, control planes
first, kubelets never newer than the API server and at most three minors older, plus the
blockers of the 1.35-1.37 range (cgroup v1, containerd 1.x, kubeadm v1beta3).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity, kubeadm_config, node_rules

_VERSION = r"^v?(\d+)\.(\d+)(?:\.(\d+))?"
_VERSION_RE = re.compile(_VERSION)
# What a person writes: the whole text is the version ("1.3x" is refused, not read as 1.3).
_INPUT_RE = re.compile(_VERSION + "$")
KUBELET_MAX_SKEW = 3
# The newest minor this collection has been tested on (labs at 1.37.2 in make test): the target
# of cluster_upgrade_target's default, ``tested``, and the highest target accepted. Raise it only
# together with tests on the new minor; the docs point here instead of repeating it.
NEWEST_TESTED = "1.37"
TESTED, LATEST = "tested", "latest"
# The lowest version DRA is installed on (resource.k8s.io/v1 with the features the roles use).
DRA_MINIMUM = "1.35"
# Minors announced but not released, with the newest pre-release published (dra-facts.md):
# refused as targets, whatever the repository offers, until released and tested.
PRE_RELEASES = {"1.38": "1.38.0-beta.0"}
# A pre-release as Kubernetes tags it (1.38.0-beta.0) or as pkgs.k8s.io's packages spell it
# (1.38.0~beta.0-1.1); never a version to upgrade to.
_PRE_RELEASE_RE = re.compile(_VERSION + r"[-~.]?(alpha|beta|rc)\b", re.IGNORECASE)


class VersionError(ValueError):
    pass


class PreReleaseError(VersionError):
    """A pre-release (alpha, beta, rc) where a released version is needed."""


def pre_release_refusal(name, text):
    """Why ``text``, a pre-release given as ``name``, is refused, with the fix; None when it is none."""
    match = _PRE_RELEASE_RE.match(str(text if text is not None else "").strip())
    if not match:
        return None
    minor = "%s.%s" % match.groups()[:2]
    return ("%s is %r, a pre-release of Kubernetes %s (%s), which this collection has not tested; upgrades go to "
            "released versions only: target %s, the newest minor tested (the default, %s)"
            % (name, text, minor, match.group(4), NEWEST_TESTED, TESTED))


def parse(text):
    """'v1.35.4-eks-1' -> (1, 35, 4); '1.35' -> (1, 35, None)."""
    match = _VERSION_RE.match(str(text or "").strip())
    if not match:
        raise VersionError("%r is not a Kubernetes version (examples: 1.35, 1.35.4, v1.35.4)" % (text,))
    return _numbers(match)


def _numbers(match):
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch) if patch is not None else None


def parse_input(text):
    """A version a person typed (target, minimum, available versions): '1.35', '1.35.4', 'v1.35.4'.

    Unlike :func:`parse`, which reads what clusters report ('v1.35.4-eks-1'), nothing may
    follow the version; a pre-release ('1.38.0-beta.0') is refused as such."""
    refusal = pre_release_refusal("the version", text)
    if refusal:
        raise PreReleaseError(refusal)
    match = _INPUT_RE.match(str(text if text is not None else "").strip())
    if not match:
        raise VersionError("%r is not a Kubernetes version (write it like 1.35 or 1.35.4)" % (text,))
    return _numbers(match)


def text(version):
    major, minor, patch = version
    return "%d.%d" % (major, minor) if patch is None else "%d.%d.%d" % (major, minor, patch)


def minor_of(version):
    return version[0], version[1]


def meets(version, minimum):
    """Whether ``version`` is at least ``minimum``; a minimum without a patch ('1.35') asks for the minor only."""
    if minor_of(version) != minor_of(minimum):
        return minor_of(version) > minor_of(minimum)
    return minimum[2] is None or (version[2] or 0) >= minimum[2]


def newest_patch(available, minor):
    """The newest available version of a minor, or None."""
    candidates = [v for v in (parse_input(a) for a in available or []) if minor_of(v) == minor and v[2] is not None]
    return max(candidates) if candidates else None


def resolve_target(target, available):
    """'tested', 'latest', '1.35' or '1.35.4' -> a version tuple (patch None when unknown).
    'latest' is the newest released version offered (pre-releases are never offered: the
    repository reading skips them, and a typed one is refused)."""
    if target == TESTED:
        target = NEWEST_TESTED
    if target == LATEST:
        parsed = [v for v in (parse_input(a) for a in available or []) if v[2] is not None]
        if not parsed:
            raise VersionError("target 'latest' needs available_versions (the versions the package repository offers)")
        return max(parsed)
    version = parse_input(target)
    if version[2] is None:
        return newest_patch(available, minor_of(version)) or version
    return version


def hops(current, target, available):
    """One minor at a time from ``current`` to ``target``: each hop's newest patch."""
    path = []
    minor = current[1] + 1
    while minor <= target[1]:
        if minor == target[1]:
            path.append(target)
        else:
            path.append(newest_patch(available, (current[0], minor)) or (current[0], minor, None))
        minor += 1
    if not path and target[2] is not None and current[2] is not None and target > current:
        path.append(target)  # a patch upgrade within the same minor
    return path


def _issue(code, message, fix):
    return {"code": code, "message": message, "fix": fix}


def untested(wanted):
    """A blocker when ``wanted`` is past the newest minor tested (a pre-release minor named so)."""
    newest = parse_input(NEWEST_TESTED)
    if minor_of(wanted) <= minor_of(newest):
        return []
    minor = "%d.%d" % minor_of(wanted)
    why = ("%s is a pre-release (newest published: %s), not released yet" % (minor, PRE_RELEASES[minor])
           if minor in PRE_RELEASES else "%s is newer than this collection" % minor)
    return [_issue("untested_target", "cluster_upgrade_target resolves to %s: %s, and not tested by this collection "
                   "(newest tested: %s)" % (text(wanted), why, NEWEST_TESTED),
                   "set cluster_upgrade_target to %s (or leave it at its default, %s)" % (NEWEST_TESTED, TESTED))]


def _full(version):
    return version[:2] + (version[2] or 0,)


def lagging(current, nodes):
    """The nodes whose kubelet is older than the API server (``current``): a failed run resumed."""
    return [n["name"] for n in nodes if _full(parse(n.get("kubelet") or "0.0")) < _full(current)]


def passes_needed(current, path, nodes):
    """How many passes of cluster_upgrade the whole path takes: one per hop, plus one first
    when kubelets lag behind the API server."""
    return len(path) + (1 if lagging(current, nodes) else 0)


def too_many_passes(current, path, nodes, passes_left):
    """A blocker when the path needs more passes than the run has left, naming the minor to
    stop at first (where the passes left will have brought the cluster)."""
    needed = passes_needed(current, path, nodes)
    if not passes_left or needed <= passes_left:
        return []
    resume = needed - len(path)
    stop_at = path[passes_left - resume - 1] if passes_left > resume else current
    steps = " -> ".join(text(v) for v in [current] + list(path))
    return [_issue("too_many_passes", "the path %s needs %d passes and this run has %d left" % (
        steps, needed, passes_left), "run with cluster_upgrade_target=%d.%d first, then again with the target" % (
        minor_of(stop_at)))]


def next_pass(current, path, order):
    """What one pass of cluster_upgrade does: bring lagging kubelets up to the API server's
    version first (a failed run resumed), else the next hop for the whole cluster."""
    behind = lagging(current, order)
    if behind:
        return {"version": text(current), "minor": "%d.%d" % minor_of(current), "control_plane_upgrade": False,
                "nodes": behind}
    if path:
        return {"version": text(path[0]), "minor": "%d.%d" % minor_of(path[0]), "control_plane_upgrade": True,
                "nodes": [n["name"] for n in order]}
    return None


def not_offered(path, available, require_offered=False):
    """Blockers for hops whose version the package repository does not offer.

    Checked when ``available`` lists versions, or always with ``require_offered`` (the role
    read the repository: a minor it found nothing for is not offered either)."""
    if not available and not require_offered:
        return []
    offered = sorted(set(v for v in (parse_input(a) for a in available or []) if v[2] is not None))
    issues = []
    for hop in path:
        same_minor = [text(v) for v in offered if minor_of(v) == minor_of(hop)]
        if hop[2] is not None and hop in offered:
            continue
        if same_minor:
            message = "%s is not offered by the package repository (it offers %s of %d.%d)" % (
                text(hop), ", ".join(same_minor), hop[0], hop[1])
            fix = "choose an offered version as the target (%s), or a repository that has %s" % (
                same_minor[-1], text(hop))
        else:
            message = "the package repository offers no %d.%d version%s" % (
                hop[0], hop[1], " (it offers %s)" % ", ".join(text(v) for v in offered) if offered else "")
            fix = "choose a target the repository offers, or point the repository URL (cluster_upgrade_repo_url) " \
                  "or available_versions at one that has %d.%d" % (hop[0], hop[1])
        issues.append(_issue("not_offered", message, fix))
    return issues


def unknown_nodes(hosts, nodes):
    """Blockers for inventory hosts whose node name is no node of the cluster."""
    names = set(n["name"] for n in nodes)
    issues = []
    for host, node_name in sorted((hosts or {}).items()):
        if node_name not in names:
            issues.append(_issue("unknown_node", "inventory host %s (node name %s) is not a node of the cluster "
                                 "(nodes: %s)" % (host, node_name, ", ".join(sorted(names)) or "none"),
                                 "set the host variable cluster_upgrade_node_name of %s to its Kubernetes node name, "
                                 "or remove the host from the upgrade's groups" % host))
    return issues


def plan(server_version, nodes, target, available=None, dra_min=DRA_MINIMUM, node_facts=None, kube_proxy_mode=None,
         kubeadm_config_api=None, require_offered=False, inventory_nodes=None, identity=None, passes_left=None,
         kubeadm_config_files=None, migrate_kubeadm_config=False):
    """The whole plan: hops, node order, blockers and warnings. ``nodes`` are dicts with
    name, kubelet, runtime, control_plane (bool), labels and provider_id. ``inventory_nodes``
    maps the inventory hosts to upgrade to their node names (each must be a node). ``identity``
    is cluster_identity.identify's verdict; anything but kubeadm is refused (read from the
    nodes' marks when not given). ``passes_left``: how many passes the run has left (None: no limit).
    ``kubeadm_config_api`` is the API version of kube-system/kubeadm-config's ClusterConfiguration;
    ``kubeadm_config_files`` maps hosts to their kubeadm configuration files ({path: [api versions]}),
    each v1beta3 one a blocker on the way to 1.37 unless ``migrate_kubeadm_config`` (then a migration)."""
    node_facts = node_facts or {}
    current = parse(server_version)
    wanted = resolve_target(target, available)
    blockers, warnings = unknown_nodes(inventory_nodes, nodes), []
    refusal = cluster_identity.upgrade_refusal(identity or cluster_identity.identify(server_version, nodes))
    if minor_of(wanted) < minor_of(current) or (minor_of(wanted) == minor_of(current) and wanted[2] is not None
                                                and current[2] is not None and wanted < current):
        blockers.append(_issue("downgrade", "target %s is older than the cluster's %s" % (text(wanted), text(current)),
                               "Kubernetes does not support downgrades; pick a target at or above %s" % text(current)))
    dra_minimum = parse_input(dra_min)
    if minor_of(wanted) < minor_of(dra_minimum):
        blockers.append(_issue("below_dra_minimum", "target %s is below the DRA minimum %s" % (
            text(wanted), text(dra_minimum)), "choose a target of %s or later" % text(minor_of(dra_minimum) + (None,))))
    blockers.extend(untested(wanted))
    path = [] if any(b["code"] in ("downgrade", "untested_target") for b in blockers) \
        else hops(current, wanted, available)
    blockers.extend(not_offered(path, available, require_offered))
    blockers.extend(too_many_passes(current, path, nodes, passes_left))
    if any(h[2] is None for h in path):
        unknown = ", ".join(text(h) for h in path if h[2] is None)
        warnings.append(_issue("unknown_patch", "the newest patch of %s is not known" % unknown,
                               "pass available_versions (the role reads them from the package repository) "
                               "so each hop uses its newest patch"))
    first = path[0] if path else current
    for node in nodes:
        kubelet = parse(node.get("kubelet") or server_version)
        if minor_of(kubelet) > minor_of(current):
            blockers.append(_issue("kubelet_newer", "kubelet on %s (%s) is newer than the API server (%s)" % (
                node["name"], text(kubelet), text(current)), "upgrade the control plane first"))
        if first[1] - kubelet[1] > KUBELET_MAX_SKEW:
            blockers.append(_issue("kubelet_skew", "kubelet on %s is %s, more than %d minors behind %s" % (
                node["name"], text(kubelet), KUBELET_MAX_SKEW, text(first)),
                "upgrade that node's kubelet to at least %d.%d before the control plane moves" % (
                    first[0], first[1] - KUBELET_MAX_SKEW)))
        for finding in (node_rules.cgroup(node["name"], (node_facts.get(node["name"]) or {}).get("cgroup_fs"),
                                          wanted[1]),
                        node_rules.containerd_version(node["name"], node.get("runtime"), wanted[1])):
            if finding:
                (blockers if finding["severity"] == node_rules.BLOCKER else warnings).append(
                    _issue(finding["code"], finding["message"], finding["fix"]))
    if kube_proxy_mode == "ipvs" and wanted[1] >= 35:
        warnings.append(_issue("kube_proxy_ipvs", "kube-proxy runs in ipvs mode, deprecated from 1.35",
                               "plan a move to nftables or iptables mode"))
    kubeadm_blockers, kubeadm_cautions, migrations = kubeadm_config.plan_issues(
        current, path, kubeadm_config_files, kubeadm_config_api, migrate_kubeadm_config)
    blockers.extend(kubeadm_blockers)
    warnings.extend(kubeadm_cautions)
    order = sorted(nodes, key=lambda n: (not n.get("control_plane"), n["name"]))
    up_to_date = not path and not any(b["code"] in ("downgrade", "untested_target") for b in blockers) \
        and not lagging(current, nodes)
    # Another distribution's cluster already at the target is fine (site.yml goes on); one
    # with work left must be upgraded with that distribution's own tool.
    refusal = None if up_to_date else refusal
    if refusal:
        blockers.insert(0, refusal)
    return {
        "next_pass": next_pass(current, path, order),
        "passes_needed": passes_needed(current, path, nodes),
        "current": text(current),
        "target": text(wanted),
        "hops": [{"version": text(h), "minor": "%d.%d" % minor_of(h)} for h in path],
        "node_order": [{"name": n["name"], "role": "control-plane" if n.get("control_plane") else "worker",
                        "kubelet": n.get("kubelet")} for n in order],
        "blockers": blockers,
        "cautions": warnings,
        "cluster_refusal": refusal,
        "up_to_date": up_to_date,
        "kubeadm_config_migrations": [] if blockers else migrations,
        "kubeadm_v1beta3_removal_ahead": kubeadm_config.removal_ahead(current, path),
    }
