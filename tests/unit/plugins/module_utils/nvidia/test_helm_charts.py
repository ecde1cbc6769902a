from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import helm_charts

PARAMS = {"chart_source": "repo", "chart_repo_url": "https://helm.ngc.nvidia.com/nvidia", "dra_driver_chart_repo_url": None,
          "oci_repository": None, "dra_driver_oci_repository": None, "chart_dir": None}
OPERATOR = {"chart": "gpu-operator", "chart_version": "v26.3.3"}
DRA = {"chart": "dra-driver-nvidia-gpu", "chart_version": "0.4.1"}


def test_repository_and_oci_locations():
    assert helm_charts.location(PARAMS, DRA, "gpu-operator") == ("dra-driver-nvidia-gpu", PARAMS["chart_repo_url"])
    own = dict(PARAMS, dra_driver_chart_repo_url="https://example.com/dra")
    assert helm_charts.location(own, DRA, "gpu-operator")[1] == "https://example.com/dra"
    assert helm_charts.location(own, OPERATOR, "gpu-operator")[1] == PARAMS["chart_repo_url"]
    oci = dict(PARAMS, chart_source="oci", oci_repository="oci://registry.example.com/charts/")
    assert helm_charts.location(oci, DRA, "gpu-operator") == ("oci://registry.example.com/charts/dra-driver-nvidia-gpu", None)
    with pytest.raises(helm_charts.ChartError, match="needs oci_repository"):
        helm_charts.location(dict(oci, oci_repository=None), DRA, "gpu-operator")


@pytest.mark.parametrize("file_name", ["dra-driver-nvidia-gpu-0.4.1.tgz", "dra-driver-nvidia-gpu-v0.4.1.tgz",
                                       "dra-driver-nvidia-gpu"])
def test_local_directory_finds_either_spelling(tmp_path, file_name):
    (tmp_path / file_name).write_text("x")
    params = dict(PARAMS, chart_source="local", chart_dir=str(tmp_path))
    assert helm_charts.location(params, DRA, "gpu-operator") == (str(tmp_path / file_name), None)


def test_local_directory_without_the_chart_says_where_it_looked(tmp_path):
    params = dict(PARAMS, chart_source="local", chart_dir=str(tmp_path))
    with pytest.raises(helm_charts.ChartError, match="no gpu-operator chart for version v26.3.3 in"):
        helm_charts.location(params, OPERATOR, "gpu-operator")
    with pytest.raises(helm_charts.ChartError, match="needs chart_dir"):
        helm_charts.location(dict(params, chart_dir=str(tmp_path / "missing")), OPERATOR, "gpu-operator")


class FakeHelm(object):
    def __init__(self, rc=0, out="", err=""):
        self.rc, self.out, self.err, self.commands = rc, out, err, []

    def __call__(self, command):
        self.commands.append(command)
        return self.rc, self.out, self.err


def test_show_chart_asks_for_the_version_unless_local():
    helm = FakeHelm(out="name: dra-driver-nvidia-gpu\nversion: 0.4.1\n")
    meta = helm_charts.show_chart(helm, "/usr/bin/timeout", 60, "helm", "dra-driver-nvidia-gpu", "https://r", "0.4.1",
                                  False)
    assert meta == {"name": "dra-driver-nvidia-gpu", "version": "0.4.1"}
    assert helm.commands[0] == ["/usr/bin/timeout", "60", "helm", "show", "chart", "dra-driver-nvidia-gpu", "--repo",
                                "https://r", "--version", "0.4.1"]
    helm_charts.show_chart(helm, None, 60, "helm", "/charts/x.tgz", None, "0.4.1", True)
    assert helm.commands[1] == ["helm", "show", "chart", "/charts/x.tgz"]


def test_helms_failure_and_timeout_in_its_own_words():
    with pytest.raises(helm_charts.ChartError, match="not available from https://r: Error: chart not found"):
        helm_charts.show_chart(FakeHelm(1, err="Error: chart not found\n"), None, 60, "helm", "x", "https://r", "1",
                               False)
    with pytest.raises(helm_charts.ChartError, match="no answer within 5s"):
        helm_charts.show_chart(FakeHelm(124), "timeout", 5, "helm", "x", "https://r", "1", False)


def test_show_crds_returns_the_documents():
    text = "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.example\n" \
           "---\n# only a comment\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" \
           "metadata:\n  name: b.example\n"
    crds = helm_charts.show_crds(FakeHelm(out=text), None, 60, "helm", "x", None, "0.4.1", True)
    assert [c["metadata"]["name"] for c in crds] == ["a.example", "b.example"]
    assert helm_charts.show_crds(FakeHelm(out=""), None, 60, "helm", "x", None, "0.4.1", True) == []


def test_check_accepts_either_spelling_and_returns_the_charts_own():
    assert helm_charts.check({"name": "dra-driver-nvidia-gpu", "version": "v0.4.1"}, "x", "dra-driver-nvidia-gpu",
                             "0.4.1") == "v0.4.1"
    with pytest.raises(helm_charts.ChartError, match="holds chart gpu-operator v26.3.1, but the plan needs"):
        helm_charts.check({"name": "gpu-operator", "version": "v26.3.1"}, "x", "gpu-operator", "v26.3.3")


class ChartsByRef(object):
    """Helm answering ``show chart`` and ``show crds`` per chart, from {ref: Chart.yaml text}."""

    def __init__(self, charts, crds=""):
        self.charts, self.crds, self.commands = charts, crds, []

    def __call__(self, command):
        self.commands.append(command)
        what, ref = command[2], command[3]
        return 0, self.crds if what == "crds" else self.charts[ref], ""


def planned(apply_crds=False):
    return {"releases": [dict(OPERATOR), dict(DRA)], "dra_driver_upgrade": {"apply_crds": apply_crds}}


CHECK = dict(PARAMS, check_charts=True, helm_timeout=60)
CHARTS = {"gpu-operator": "name: gpu-operator\nversion: v26.3.3\n",
          "dra-driver-nvidia-gpu": "name: dra-driver-nvidia-gpu\nversion: v0.4.1\n"}


def test_check_planned_sets_where_each_chart_comes_from_and_what_helm_says():
    plan = planned()
    checked, crds = helm_charts.check_planned(ChartsByRef(CHARTS), None, "helm", CHECK, plan, "gpu-operator")
    assert [(r["chart_ref"], r["chart_repo_url"]) for r in plan["releases"]] == \
        [("gpu-operator", PARAMS["chart_repo_url"]), ("dra-driver-nvidia-gpu", PARAMS["chart_repo_url"])]
    # The version as the chart spells it, which is what Helm compares a release with.
    assert plan["releases"][1]["chart_version"] == "v0.4.1"
    assert checked == [{"chart": "gpu-operator", "version": "v26.3.3", "ref": "gpu-operator"},
                       {"chart": "dra-driver-nvidia-gpu", "version": "v0.4.1", "ref": "dra-driver-nvidia-gpu"}]
    assert crds == []


def test_check_planned_reads_the_dra_charts_crds_only_for_an_upgrade_that_needs_them():
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.example\n"
    helm = ChartsByRef(CHARTS, crds=crd)
    _checked, crds = helm_charts.check_planned(helm, None, "helm", CHECK, planned(apply_crds=True), "gpu-operator")
    assert [c["metadata"]["name"] for c in crds] == ["a.example"]
    assert [c[2:4] for c in helm.commands if c[2] == "crds"] == [["crds", "dra-driver-nvidia-gpu"]]


def test_check_planned_without_check_charts_asks_helm_nothing():
    helm, plan = ChartsByRef(CHARTS), planned(apply_crds=True)
    assert helm_charts.check_planned(helm, None, "helm", dict(CHECK, check_charts=False), plan, "gpu-operator") == ([], [])
    assert helm.commands == [] and plan["releases"][0]["chart_ref"] == "gpu-operator"


def test_check_planned_fails_on_a_chart_that_is_not_the_planned_one():
    wrong = dict(CHARTS, **{"dra-driver-nvidia-gpu": "name: dra-driver-nvidia-gpu\nversion: 0.4.0\n"})
    with pytest.raises(helm_charts.ChartError, match="holds chart dra-driver-nvidia-gpu 0.4.0, but the plan needs"):
        helm_charts.check_planned(ChartsByRef(wrong), None, "helm", CHECK, planned(), "gpu-operator")
