"""The guides agree with the collection: every variable, module, playbook, make target and file
path a page names exists, and the test budget is stated in one place (issue 39, item 6).

Runs in `make units` (no lab). The names a page gives are read by doc_names.py."""

import os

import pytest

import doc_names

BUDGET_PAGE = os.path.join("docs", "testing.md")


@pytest.mark.parametrize("page", doc_names.guides())
def test_every_name_a_page_gives_exists(page):
    assert doc_names.problems(page) == []


def test_the_test_budget_is_stated_on_one_page_only():
    stated = dict((page, doc_names.budget_figures(doc_names.read(page))) for page in doc_names.guides())
    elsewhere = dict((page, figures) for page, figures in stated.items() if figures and page != BUDGET_PAGE)
    assert elsewhere == {}, "state the test budget only in %s and link to it" % BUDGET_PAGE
    assert stated[BUDGET_PAGE], "%s states no test budget" % BUDGET_PAGE


def _problems(text):
    """What a page at docs/page.md with ``text`` would be told."""
    return [p.split(" names ", 1)[1] for p in doc_names.problems(os.path.join("docs", "page.md"), text)]


def test_a_misspelled_variable_is_found():
    text = "Set `gpu_operator_dra_node` to the first node; `gpu_operator_dra_nodes` is right.\n"
    assert _problems(text) == [
        "`gpu_operator_dra_node`: no variable of role gpu_operator has that name "
        "(roles/gpu_operator/meta/argument_specs.yml)"]


def test_a_missing_path_a_wrong_module_and_a_wrong_target_are_found():
    text = ("Run `playbooks/sites.yml` or `dra.gpu.sites` with `make tests`; [the guide](upgrade.md); "
            "`playbooks/site.yml`, `dra.gpu.site`, [upgrades](upgrades.md) and `make test` exist.\n"
            "```\n`playbooks/not-checked-inside-a-fence.yml`\n```\n")
    assert sorted(_problems(text)) == sorted([
        "playbooks/sites.yml: no such file or folder in the repository",
        "dra.gpu.sites: no module, role, playbook or plugin of that name",
        "`make tests`: the Makefile has no such target",
        "upgrade.md: no such file or folder in the repository"])


def test_placeholders_are_patterns_not_names():
    assert _problems("`roles/<role>/README.md`, `cluster_upgrade_pass_<N>_workers`, `docs/*.md`.\n") == []


def test_budget_figures_are_read_in_both_spellings():
    assert doc_names.budget_figures("the 50-minute budget; the budget is 75 minutes.\n") == ["50", "75"]
