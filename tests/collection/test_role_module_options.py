"""A role variable a role hands straight to one of the collection's modules
(``version: "{{ gpu_operator_version }}"``) is the same option on both sides: the same type,
choices and element type, and, where both have a default, the same default. The role's
meta/argument_specs.yml and the module's DOCUMENTATION may each say it, but they cannot drift
apart (issue 32: one variable was spelled in up to seven places).

Runs in `make units` (no lab)."""

import ast
import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES = sorted(os.listdir(os.path.join(ROOT, "roles")))
# "{{ gpu_operator_version }}" or "{{ gpu_operator_chart_dir | default(omit, true) }}": passed as is.
PASSED_AS_IS = re.compile(r"^\{\{\s*(\w+)\s*(?:\|\s*default\(omit(?:,\s*true)?\)\s*)?\}\}$")
COMPARED = ("type", "choices", "elements")


def module_options(name):
    """The options of dra.gpu.NAME as its DOCUMENTATION (or its .yml sidecar) declares them."""
    sidecar = os.path.join(ROOT, "plugins", "modules", name + ".yml")
    if os.path.exists(sidecar):
        with open(sidecar) as handle:
            return yaml.safe_load(handle)["DOCUMENTATION"]["options"]
    with open(os.path.join(ROOT, "plugins", "modules", name + ".py")) as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DOCUMENTATION":
            return yaml.safe_load(node.value.value)["options"]
    raise AssertionError("plugins/modules/%s.py has no DOCUMENTATION" % name)


def role_options(role):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        entries = yaml.safe_load(handle)["argument_specs"].values()
    options = {}
    for entry in entries:
        options.update(entry.get("options") or {})
    return options


def _tasks(tasks):
    for task in tasks or []:
        if isinstance(task, dict):
            yield task
            for key in ("block", "rescue", "always"):
                yield from _tasks(task.get(key))


def handed_over(role):
    """(task file, module, module option, role variable) for every role variable passed as is."""
    found = []
    variables = role_options(role)
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", role, "tasks", "*.yml"))):
        with open(path) as handle:
            for task in _tasks(yaml.safe_load(handle)):
                for key, args in task.items():
                    if not key.startswith("dra.gpu.") or not isinstance(args, dict):
                        continue
                    for option, value in args.items():
                        match = PASSED_AS_IS.match(value) if isinstance(value, str) else None
                        if match and match.group(1) in variables:
                            found.append((os.path.basename(path), key[len("dra.gpu."):], option, match.group(1)))
    return found


def _same(field, role_spec, module_spec):
    ours, theirs = role_spec.get(field), module_spec.get(field)
    if field == "type":
        ours, theirs = ours or "str", theirs or "str"
    return ours == theirs


def test_roles_hand_variables_to_modules():
    # The check below must have something to check: gpu_operator hands over some thirty.
    assert len(handed_over("gpu_operator")) > 20


@pytest.mark.parametrize("role", ROLES)
def test_a_variable_handed_to_a_module_is_the_same_option_there(role):
    variables, wrong = role_options(role), []
    for task_file, module, option, variable in handed_over(role):
        options = module_options(module)
        if option not in options:
            continue  # a connection option from kubernetes.core's doc fragment
        ours, theirs = variables[variable], options[option]
        for field in COMPARED:
            if not _same(field, ours, theirs):
                wrong.append("%s: %s %s is %r in meta/argument_specs.yml but %s's %s is %r"
                             % (task_file, variable, field, ours.get(field), module, option, theirs.get(field)))
        if "default" in ours and theirs.get("default") is not None and ours["default"] != theirs["default"]:
            wrong.append("%s: %s defaults to %r but %s's %s to %r"
                         % (task_file, variable, ours["default"], module, option, theirs["default"]))
    assert wrong == []
