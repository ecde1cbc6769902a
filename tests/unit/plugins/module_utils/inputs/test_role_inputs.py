from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs import role_inputs
from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import (
    cluster_upgrade, device_classes, gpu_maintenance, gpu_operator, gpu_sharing, preflight, smoke_test,
    workload_migration)

FILES = {"cluster_upgrade": cluster_upgrade, "device_classes": device_classes, "gpu_maintenance": gpu_maintenance,
         "gpu_operator": gpu_operator, "gpu_sharing": gpu_sharing, "preflight": preflight, "smoke_test": smoke_test,
         "workload_migration": workload_migration}


def test_an_unknown_role_is_named_with_the_known_ones():
    assert role_inputs.problems("gpu_magic", {}) == [
        "role must be one of %s, not 'gpu_magic'" % ", ".join(role_inputs.ROLES)]


def test_the_roles_are_input_checks_choices_in_order():
    assert role_inputs.ROLES == ("cluster_upgrade", "device_classes", "gpu_maintenance", "gpu_operator",
                                 "gpu_sharing", "preflight", "smoke_test", "workload_migration")


@pytest.mark.parametrize("role", sorted(FILES))
def test_problems_reaches_the_roles_own_file(role, monkeypatch):
    calls = []
    monkeypatch.setattr(FILES[role], "problems", lambda values, inventory: calls.append((values, inventory)) or ["x"])
    assert role_inputs.problems(role, {"a": 1}, ("h1", "h2")) == ["x"]
    # no values and no inventory reach the role as an empty mapping and an empty list
    assert role_inputs.problems(role, None) == ["x"]
    assert calls == [({"a": 1}, ["h1", "h2"]), ({}, [])]


@pytest.mark.parametrize("role", ["device_classes", "smoke_test"])
def test_cluster_problem_runs_the_roles_check(role, monkeypatch):
    monkeypatch.setattr(FILES[role], "cluster_problem", lambda kube, values: "%s: %s %r" % (role, kube, values))
    assert role_inputs.cluster_problem(role, "kube", {"a": 1}) == "%s: kube {'a': 1}" % role


@pytest.mark.parametrize("role", sorted(set(FILES) - set(["device_classes", "smoke_test"])) + ["gpu_magic"])
def test_cluster_problem_is_none_for_a_role_without_one(role):
    assert role_inputs.cluster_problem(role, None, {"anything": 1}) is None


class NoNodes:
    def node_names(self, selector):
        return [] if selector else ["cp"]


class OneRefusal:
    """device_class.list_problems refusing every class list with one problem."""

    def list_problems(self, kube, entries, require_match, managed):
        return ["x"]


def test_cluster_problem_runs_the_roles_check_and_nothing_for_roles_without_one(monkeypatch):
    monkeypatch.setattr(device_classes, "device_class", OneRefusal())
    assert role_inputs.cluster_problem("device_classes", "kube", {"device_classes_list": [{}]}).startswith(
        "device_classes: 1 of 1 class(es)")
    assert role_inputs.cluster_problem("smoke_test", NoNodes(), {"smoke_test_wait_node_selector": "a=b"}).startswith(
        "smoke_test: smoke_test_wait_node_selector a=b")
    assert role_inputs.cluster_problem("gpu_operator", None, {"anything": 1}) is None
