"""A role variable is written in one place, its role's meta/argument_specs.yml: the role's
defaults/main.yml and its README's variable table are what tools/role_variables.py makes from
it (`make role-variables`), and every name starts with the role's name. A default or a meaning
changed in a generated file instead of argument_specs.yml fails here (issue 32), as does a
generator that would write YAML meaning something else than the spec.

Runs in `make units` (no lab)."""

import os
import re
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import role_variables  # noqa: E402  pylint: disable=wrong-import-position

ROLES = role_variables.roles()


def test_every_role_has_a_spec():
    assert sorted(os.listdir(os.path.join(ROOT, "roles"))) == ROLES


@pytest.mark.parametrize("role", ROLES)
def test_the_committed_files_are_what_argument_specs_gives(role):
    for path, text in role_variables.generated(role).items():
        with open(os.path.join(ROOT, path)) as handle:
            assert handle.read() == text, (
                "%s differs from what roles/%s/meta/argument_specs.yml gives: change the variable there and run "
                "`make role-variables`" % (path, role))


@pytest.mark.parametrize("role", ROLES)
def test_defaults_main_sets_each_default_of_the_spec_and_nothing_else(role):
    # The generator's YAML read back: the values Ansible will load, not only the text, are the spec's.
    with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml")) as handle:
        loaded = yaml.safe_load(handle) or {}
    options = role_variables.options(role)
    assert loaded == dict((name, spec["default"]) for name, spec in options.items() if "default" in spec)


@pytest.mark.parametrize("role", ROLES)
def test_an_option_of_several_entry_points_is_written_once_and_aliased(role):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        text = handle.read()
    written = {}
    for name in re.findall(r"^ {6}(%s_\w+):(?! \*)" % role, text, re.MULTILINE):
        written[name] = written.get(name, 0) + 1
    again = sorted(name for name, count in written.items() if count > 1)
    assert not again, ("roles/%s/meta/argument_specs.yml writes these in several entry points; write each once under "
                       "main as `name: &name` and take it elsewhere as `name: *name`: %s" % (role, again))


@pytest.mark.parametrize("role", ROLES)
def test_options_are_prefixed_with_the_role_name(role):
    unprefixed = sorted(name for name in role_variables.options(role) if not name.startswith(role + "_"))
    assert not unprefixed, "roles/%s: options not prefixed with the role's name: %s" % (role, unprefixed)


@pytest.mark.parametrize("role", ROLES)
def test_the_readme_table_has_a_row_per_option(role):
    with open(os.path.join(ROOT, "roles", role, "README.md")) as handle:
        readme = handle.read()
    table = readme.split(role_variables.TABLE_START, 1)[1].split(role_variables.TABLE_END, 1)[0]
    rows = [line.split("`")[1] for line in table.strip().splitlines()[2:]]
    assert rows == list(role_variables.options(role))


# The generator's own rules, on specs written here.

def test_values_that_yaml_would_read_otherwise_are_quoted():
    value = {"empty": "", "jinja": "{{ playbook_dir }}/x", "version": "1.35", "yes": "yes", "plain": "gpu.nvidia.com",
             "colon": "a: b", "nested": [{"a": [1, {"b": None}], "c": {}}, "x", []], "flag": False}
    text = "v:" + "\n".join([" " + role_variables._block(value, 0)[0]] + role_variables._block(value, 0)[1:])
    assert yaml.safe_load(text) == {"v": value}


def test_flow_form_reads_back_as_the_value():
    value = [{"name": "a", "mps": {"limit": "8Gi", "on": True}}, "1.36", ""]
    assert yaml.safe_load(role_variables._flow(value)) == value


def test_documentation_markup_becomes_markdown():
    assert role_variables.markdown("O(a_b=x) gives V(1), C(kubectl get) and L(docs,https://x/y) I(now)") == (
        "`a_b=x` gives `1`, `kubectl get` and [docs](https://x/y) *now*")


def test_a_long_default_is_linked_and_a_required_option_says_so():
    assert role_variables._default_cell({"default": ["x" * 70]}) == "see [defaults/main.yml](defaults/main.yml)"
    assert role_variables._default_cell({"required": True}) == "required"
    assert role_variables._default_cell({"default": "8Gi"}) == "`8Gi`"


def test_a_readme_without_the_markers_is_refused_with_the_lines_to_add():
    with pytest.raises(role_variables.SpecError, match="lacks the lines that mark its variable table"):
        role_variables.readme_file("host_facts", "# a README\n")


def test_an_option_written_differently_in_two_entry_points_is_refused(tmp_path, monkeypatch):
    spec = {"argument_specs": {"main": {"options": {"r_a": {"type": "int", "default": 1}}},
                               "other": {"options": {"r_a": {"type": "int", "default": 2}}}}}
    (tmp_path / "roles" / "r" / "meta").mkdir(parents=True)
    (tmp_path / "roles" / "r" / "meta" / "argument_specs.yml").write_text(yaml.safe_dump(spec))
    monkeypatch.setattr(role_variables, "ROOT", str(tmp_path))
    with pytest.raises(role_variables.SpecError, match="r_a is written differently in the entry point other"):
        role_variables.options("r")
