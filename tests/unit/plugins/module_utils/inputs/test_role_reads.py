from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs import role_reads
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException


class NodeKube:
    """node_names(selector): the nodes a selector matches; None asks for every node."""

    def __init__(self, matches, every=("cp", "w1"), error=None):
        self.matches, self.every, self.error = matches, list(every), error
        self.asked = []

    def node_names(self, selector):
        self.asked.append(selector)
        if self.error is not None:
            raise self.error
        return self.every if selector is None else self.matches.get(selector, [])


def forbidden():
    exc = ApiException(status=403)
    exc.body = '{"message": "nodes is forbidden"}'
    return exc


# ----- smoke_test -----------------------------------------------------------------------------

def test_without_node_selectors_the_cluster_is_not_asked():
    kube = NodeKube({})
    assert role_reads.smoke_test(kube, {"smoke_test_node_selector": {}, "smoke_test_wait_node_selector": ""}) is None
    assert kube.asked == []


def test_selectors_that_match_nodes_pass():
    kube = NodeKube({"gpu=true,pool=a": ["w1"], "nvidia.com/gpu.present=true": ["w1"]})
    values = {"smoke_test_node_selector": {"pool": "a", "gpu": True},
              "smoke_test_wait_node_selector": "nvidia.com/gpu.present=true"}
    assert role_reads.smoke_test(kube, values) is None
    # the probe's selector as key=value text, sorted, booleans as Kubernetes writes them
    assert kube.asked == ["gpu=true,pool=a", "nvidia.com/gpu.present=true"]


def test_a_probe_node_selector_that_matches_nothing_says_what_would_happen_and_how_to_look():
    message = role_reads.smoke_test(NodeKube({}), {"smoke_test_node_selector": {"pool": "training"}})
    assert message == ("smoke_test: smoke_test_node_selector pool=training matches no node (nodes: cp, w1), so the "
                       "probe could never be scheduled; nothing was changed. Correct smoke_test_node_selector "
                       "(`kubectl get nodes -l 'pool=training'`)")


def test_a_wait_selector_that_matches_nothing_is_named_with_its_consequence():
    message = role_reads.smoke_test(NodeKube({}, every=()), {"smoke_test_wait_node_selector": "gpu=yes"})
    assert "smoke_test_wait_node_selector gpu=yes matches no node (nodes: none)" in message
    assert "the wait for their ResourceSlices could only time out" in message


def test_the_probe_selector_is_reported_first():
    message = role_reads.smoke_test(NodeKube({}), {"smoke_test_node_selector": {"a": "b"},
                                                   "smoke_test_wait_node_selector": "c=d"})
    assert message.startswith("smoke_test: smoke_test_node_selector a=b")


def test_a_refused_read_names_the_variable_and_the_servers_message():
    message = role_reads.smoke_test(NodeKube({}, error=forbidden()), {"smoke_test_wait_node_selector": "gpu=true"})
    assert message == "could not read the nodes for smoke_test_wait_node_selector: nodes is forbidden"


# ----- device_classes -------------------------------------------------------------------------

class FakeDeviceClass:
    """device_class.list_problems: each class that cannot be applied, in words."""

    def __init__(self, refused=(), error=None):
        self.refused, self.error, self.calls = list(refused), error, []

    def list_problems(self, kube, entries, require_match, managed):
        self.calls.append((kube, entries, require_match, managed))
        if self.error is not None:
            raise self.error
        return self.refused


CLASSES = {"device_classes_list": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
           "device_classes_require_match": "yes",
           "device_classes_managed_label_key": "app.kubernetes.io/managed-by",
           "device_classes_managed_label_value": "dra.gpu.device_classes"}


@pytest.fixture
def device_class(monkeypatch):
    def install(**kwargs):
        fake = FakeDeviceClass(**kwargs)
        monkeypatch.setattr(role_reads, "device_class", fake)
        return fake
    return install


def test_every_class_is_checked_in_one_call_with_the_roles_settings(device_class):
    fake = device_class()
    assert role_reads.device_classes("kube", CLASSES) is None
    assert fake.calls == [("kube", CLASSES["device_classes_list"], True,
                           {"app.kubernetes.io/managed-by": "dra.gpu.device_classes"})]


def test_refused_classes_are_counted_and_named(device_class):
    device_class(refused=["a: selector does not compile", "c: matches no device"])
    assert role_reads.device_classes("kube", CLASSES) == (
        "device_classes: 2 of 3 class(es) in device_classes_list cannot be applied, so none was applied and nothing "
        "was changed: a: selector does not compile; c: matches no device. Fix those entries of device_classes_list "
        "and run again.")


def test_a_removal_checks_nothing(device_class):
    fake = device_class(refused=["never asked"])
    assert role_reads.device_classes("kube", dict(CLASSES, device_classes_state="absent")) is None
    assert fake.calls == []


def test_a_failed_read_of_the_slices_is_named(device_class):
    device_class(error=forbidden())
    assert role_reads.device_classes("kube", CLASSES) == (
        "could not read the ResourceSlices the classes are checked against: nodes is forbidden")


def test_no_list_and_no_require_match_are_passed_as_empty_and_false(device_class):
    fake = device_class()
    assert role_reads.device_classes("kube", {}) is None
    assert fake.calls[0][1:3] == ([], False)


# ----- problem --------------------------------------------------------------------------------

def test_problem_runs_the_roles_check_and_nothing_for_roles_without_one(device_class):
    device_class(refused=["x"])
    assert role_reads.problem("device_classes", "kube", {"device_classes_list": [{}]}).startswith(
        "device_classes: 1 of 1 class(es)")
    assert role_reads.problem("smoke_test", NodeKube({}), {"smoke_test_wait_node_selector": "a=b"}).startswith(
        "smoke_test: smoke_test_wait_node_selector a=b")
    assert role_reads.problem("gpu_operator", None, {"anything": 1}) is None
