# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a planned chart comes from, and what Helm says about it (chart metadata, CRDs).

gpu_operator_plan asks Helm before anything is installed, so that an unreachable repository, a
version that does not exist or a directory without the chart fails the plan with Helm's own
words. ``run`` is AnsibleModule.run_command (or a fake in tests); ``timeout_bin`` the path of
coreutils' ``timeout`` when there is one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os


class ChartError(ValueError):
    """A chart that cannot be found or read; the message says where it was looked for."""


def location(params, release, operator_chart):
    """(chart_ref, chart_repo_url) for one planned release and the chosen source
    (params: chart_source, chart_repo_url, dra_driver_chart_repo_url, oci_repository,
    dra_driver_oci_repository, chart_dir)."""
    chart = release["chart"]
    is_dra = chart != operator_chart
    source = params["chart_source"]
    if source == "repo":
        url = params["dra_driver_chart_repo_url"] if is_dra and params["dra_driver_chart_repo_url"] \
            else params["chart_repo_url"]
        return chart, url
    if source == "oci":
        prefix = params["dra_driver_oci_repository"] if is_dra and params["dra_driver_oci_repository"] \
            else params["oci_repository"]
        if not prefix:
            raise ChartError("chart_source oci needs oci_repository (for example oci://registry.example.com/charts)")
        return "%s/%s" % (prefix.rstrip("/"), chart), None
    directory = params["chart_dir"]
    if not directory or not os.path.isdir(directory):
        raise ChartError("chart_source local needs chart_dir, a directory with the charts (got %r)" % (directory,))
    bare = release["chart_version"].lstrip("v")
    # NVIDIA's DRA chart spells versions without "v" (0.4.1), the operator's with it (v26.3.1).
    for name in ("%s-%s.tgz" % (chart, bare), "%s-v%s.tgz" % (chart, bare), chart):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return path, None
    raise ChartError("no %s chart for version %s in %s (looked for %s-%s.tgz and %s/)"
                     % (chart, release["chart_version"], directory, chart, release["chart_version"], chart))


def _helm(run, timeout_bin, timeout, helm, what, ref, repo_url, version, local):
    cmd = [helm, "show", what, ref]
    if repo_url:
        cmd += ["--repo", repo_url]
    if not local:
        cmd += ["--version", version]
    if timeout_bin:
        cmd = [timeout_bin, str(timeout)] + cmd
    rc, out, err = run(cmd)
    if rc != 0:
        reason = (err or out or "").strip().splitlines()
        reason = reason[-1] if reason else "exit code %d" % rc
        if rc == 124:
            reason = "no answer within %ds" % timeout
        raise ChartError("chart %s version %s is not available from %s: %s" % (ref, version, repo_url or ref, reason))
    return out


def show_chart(run, timeout_bin, timeout, helm, ref, repo_url, version, local):
    """The chart's Chart.yaml as a dict ({} when Helm printed something unreadable)."""
    import yaml
    try:
        return yaml.safe_load(_helm(run, timeout_bin, timeout, helm, "chart", ref, repo_url, version, local)) or {}
    except yaml.YAMLError:
        return {}


def show_crds(run, timeout_bin, timeout, helm, ref, repo_url, version, local):
    """The CustomResourceDefinitions in the chart's crds/ directory, as dicts: Helm installs them
    on a first install only, so an upgrade that changes them applies them first."""
    import yaml
    text = _helm(run, timeout_bin, timeout, helm, "crds", ref, repo_url, version, local)
    try:
        return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict) and doc.get("kind")]
    except yaml.YAMLError as exc:
        raise ChartError("the CRDs of chart %s version %s are not readable YAML: %s" % (ref, version, exc))


def check(meta, ref, chart, version):
    """The version Helm found, after checking it is the chart and version the plan needs."""
    found = str(meta.get("version", ""))
    if meta.get("name") != chart or found.lstrip("v") != str(version).lstrip("v"):
        raise ChartError("%s holds chart %s %s, but the plan needs %s %s" % (ref, meta.get("name"), found, chart, version))
    return found


def check_planned(run, timeout_bin, helm, params, planned, operator_chart):
    """Where each planned release's chart comes from (set on it as chart_ref and chart_repo_url)
    and, with params check_charts, what Helm says of it: ([{chart, version, ref}], [CRD dicts]).

    The chart's version is replaced by the one Helm reports, as the chart spells it, because Helm
    compares a release's chart with "<name>-<version>". The DRA chart's CRDs are read only when
    ``planned["dra_driver_upgrade"]["apply_crds"]``: Helm would not apply them on an upgrade."""
    local = params["chart_source"] == "local"
    checked, crds = [], []
    for release in planned["releases"]:
        ref, repo_url = location(params, release, operator_chart)
        release["chart_ref"], release["chart_repo_url"] = ref, repo_url
        if not params["check_charts"]:
            continue
        meta = show_chart(run, timeout_bin, params["helm_timeout"], helm, ref, repo_url, release["chart_version"], local)
        release["chart_version"] = check(meta, ref, release["chart"], release["chart_version"])
        checked.append({"chart": release["chart"], "version": release["chart_version"], "ref": ref})
        if release["chart"] != operator_chart and planned["dra_driver_upgrade"]["apply_crds"]:
            crds = show_crds(run, timeout_bin, params["helm_timeout"], helm, ref, repo_url, release["chart_version"], local)
    return checked, crds
