"""Each role variable is written the same way wherever it is written: every variable a role's
defaults/main.yml sets is an option of its meta/argument_specs.yml with the same default, every
option is named in the role's README, and every name starts with the role's name. A variable
renamed, added or re-defaulted in one of the three and not the others fails here (issue 32).

Runs in `make units` (no lab)."""

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES = sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
               for p in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")))


def _load(role, *parts):
    path = os.path.join(ROOT, "roles", role, *parts)
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return yaml.safe_load(handle.read())


def spec_options(role):
    """Option name -> its spec, over the role's entry points (main and any tasks_from entry)."""
    options = {}
    for entry in (_load(role, "meta", "argument_specs.yml") or {})["argument_specs"].values():
        options.update(entry.get("options") or {})
    return options


def test_every_role_has_a_spec():
    assert sorted(os.listdir(os.path.join(ROOT, "roles"))) == ROLES


@pytest.mark.parametrize("role", ROLES)
def test_defaults_are_options_with_the_same_default(role):
    defaults = _load(role, "defaults", "main.yml") or {}
    options = spec_options(role)
    unspecified = sorted(set(defaults) - set(options))
    assert not unspecified, "roles/%s/defaults/main.yml sets what meta/argument_specs.yml does not name: %s" % (
        role, unspecified)
    differ = dict((name, {"defaults/main.yml": value, "argument_specs.yml": options[name].get("default")})
                  for name, value in defaults.items()
                  if "default" in options[name] and options[name]["default"] != value)
    assert not differ, "roles/%s: the default differs between defaults/main.yml and argument_specs.yml: %s" % (
        role, differ)


@pytest.mark.parametrize("role", ROLES)
def test_options_are_prefixed_and_in_the_readme(role):
    options = spec_options(role)
    with open(os.path.join(ROOT, "roles", role, "README.md")) as handle:
        readme = handle.read()
    named = set(re.findall(r"`(%s_\w+)`" % role, readme))
    # The variable tables' first column; elsewhere the README may name facts the role sets and
    # host variables it reads, which are not options.
    tabled = set(name for cell in re.findall(r"^\| *(`[^|]*)\|", readme, re.MULTILINE)
                 for name in re.findall(r"`(%s_\w+)`" % role, cell))
    unprefixed = sorted(name for name in options if not name.startswith(role + "_"))
    assert not unprefixed, "roles/%s: options not prefixed with the role's name: %s" % (role, unprefixed)
    missing = sorted(set(options) - named)
    assert not missing, "roles/%s/README.md does not name: %s" % (role, missing)
    unknown = sorted(tabled - set(options))
    assert not unknown, "roles/%s/README.md's tables name variables its argument_specs.yml does not have: %s" % (role, unknown)


def _readme_defaults(readme, role):
    """{variable: the default its README row shows} for rows whose Default cell is one backticked
    value per variable (`a` / `b` for a row naming two); rows that say it in words are skipped."""
    shown = {}
    for first, second in re.findall(r"^\| *(`[^|]*)\| *([^|]*)\|", readme, re.MULTILINE):
        names = re.findall(r"`(%s_\w+)`" % role, first)
        values = [v.strip() for v in second.strip().split(" / ")]
        if names and len(values) == len(names) and all(re.match(r"^`[^`]*`$", v) for v in values):
            shown.update(zip(names, (v[1:-1] for v in values)))
    return shown


def _as_yaml(text):
    try:
        return yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text  # a Jinja default ({{ playbook_dir }}/...): compared as written


@pytest.mark.parametrize("role", ROLES)
def test_the_readme_shows_each_default_as_argument_specs_sets_it(role):
    options = spec_options(role)
    with open(os.path.join(ROOT, "roles", role, "README.md")) as handle:
        shown = _readme_defaults(handle.read(), role)
    differ = {}
    for name, text in shown.items():
        if name in options and "default" in options[name]:
            if text != str(options[name]["default"]) and _as_yaml(text) != options[name]["default"]:
                differ[name] = {"README.md": text, "argument_specs.yml": options[name]["default"]}
    assert not differ, "roles/%s: the README's Default column differs from argument_specs.yml: %s" % (role, differ)


def test_the_readme_defaults_are_read_at_all():
    # The check above must compare something: the gpu_operator README shows some thirty defaults.
    with open(os.path.join(ROOT, "roles", "gpu_operator", "README.md")) as handle:
        assert len(_readme_defaults(handle.read(), "gpu_operator")) > 20
