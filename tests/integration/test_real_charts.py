"""NVIDIA's real charts rendered with the values gov.plan() computes, and their images checked.

Runs only where NVIDIA's repositories are at hand (they are not part of this project and CI
does not download them): set DRA_GPU_REAL_CHARTS_OPERATOR_REPO and DRA_GPU_REAL_CHARTS_DRA_REPO
to git directories (bare mirrors are fine) of NVIDIA/gpu-operator and
kubernetes-sigs/dra-driver-nvidia-gpu. The lab part of real_charts.py (site.yml) is not run
here: `make real-charts` does that.
"""

import os

import pytest

import real_charts

OPERATOR_REPO = os.environ.get("DRA_GPU_REAL_CHARTS_OPERATOR_REPO")
DRA_REPO = os.environ.get("DRA_GPU_REAL_CHARTS_DRA_REPO")

pytestmark = pytest.mark.skipif(
    not (OPERATOR_REPO and DRA_REPO),
    reason="NVIDIA's chart repositories are not at hand: set DRA_GPU_REAL_CHARTS_OPERATOR_REPO and "
           "DRA_GPU_REAL_CHARTS_DRA_REPO to git directories of NVIDIA/gpu-operator and "
           "kubernetes-sigs/dra-driver-nvidia-gpu")


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    # The values-without-effect search renders once per planned value; it reports, it does
    # not fail, so the test leaves it to real_charts.py.
    return real_charts.check(real_charts.find_helm(), str(tmp_path_factory.mktemp("real-charts")),
                             real_charts.DEFAULT_MIRROR, OPERATOR_REPO, DRA_REPO, effect_check=False)


def test_every_chart_the_plan_pairs_is_in_the_repositories(summary):
    assert summary["missing_charts"] == []


def test_every_supported_combination_renders_with_the_planned_values(summary):
    failed = {r["combination"]: [rel.get("error") or "no chart" for rel in r["releases"] if not rel.get("rendered")]
              for r in summary["renders"] if real_charts.render_status(r) != "ok"}
    assert failed == {}


def test_with_a_mirror_every_deployed_image_comes_from_it_under_nvidias_path(summary):
    offenders = {r["combination"]: r["mirror_offenders"] for r in summary["renders"] if r.get("mirror_offenders")}
    assert offenders == {}


def test_every_deployed_image_is_in_the_plans_image_list(summary):
    comparisons = [r for r in summary["renders"] if r.get("plan_images") is not None]
    if not comparisons:
        pytest.skip("gov.plan() returns no images list yet")
    missing = {r["combination"]: r["plan_images"]["not_in_plan"] for r in comparisons
               if r["plan_images"]["not_in_plan"]}
    assert missing == {}
