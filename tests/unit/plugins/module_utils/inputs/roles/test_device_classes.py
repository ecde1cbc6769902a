from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import device_classes
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException

MANAGED = {"device_classes_managed_label_key": "app.kubernetes.io/managed-by",
           "device_classes_managed_label_value": "dra.gpu.device_classes"}


# ----- problems -------------------------------------------------------------------------------

def test_device_classes_role_refuses_a_class_named_twice_and_bad_entries():
    values = {"device_classes_state": "present",
              "device_classes_list": [{"name": "gpu", "selectors": ["true"]}, {"name": "gpu", "selectors": ["x"]},
                                      {"name": "Bad_Name", "selectors": [""]},
                                      {"name": "cfg", "config": [{"driver": "x"}]}],
              "device_classes_managed_label_key": "app.kubernetes.io/managed-by",
              "device_classes_managed_label_value": "dra.gpu.device_classes"}
    found = device_classes.problems(values, [])
    text = " | ".join(found)
    assert "names gpu more than once" in text
    assert "device_classes_list[2] (Bad_Name).name" in text
    assert "device_classes_list[2] (Bad_Name).selectors[0]" in text
    assert "device_classes_list[3] (cfg).config[0]" in text


def test_a_class_list_that_is_not_a_list_is_the_only_problem_named():
    assert device_classes.problems(dict(MANAGED, device_classes_list={"name": "gpu"}), []) == [
        "device_classes_list is {'name': 'gpu'}; it must be a list of classes, each with name and selectors"]


def test_an_entry_that_is_not_a_mapping_is_named_by_its_index():
    found = device_classes.problems(dict(MANAGED, device_classes_list=[
        {"name": "gpu", "selectors": ["true"]}, "gpu-2"]), [])
    assert found == ["device_classes_list[1] is 'gpu-2'; each class is a mapping with name and selectors"]


def test_classes_are_not_checked_when_they_are_to_be_removed():
    values = dict(MANAGED, device_classes_state="absent", device_classes_list="not even a list")
    assert device_classes.problems(values, []) == []
    bad_key = dict(values, device_classes_managed_label_key="bad key")
    assert "device_classes_managed_label_key has the key 'bad key'" in device_classes.problems(bad_key, [])[0]


def test_good_classes_pass():
    values = dict(MANAGED, device_classes_list=[{"name": "gpu.example.com", "selectors": ["true"],
                                                 "labels": {"team": "ml"}}])
    assert device_classes.problems(values, []) == []


# ----- cluster_problem ------------------------------------------------------------------------

def forbidden():
    exc = ApiException(status=403)
    exc.body = '{"message": "nodes is forbidden"}'
    return exc


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
        monkeypatch.setattr(device_classes, "device_class", fake)
        return fake
    return install


def test_every_class_is_checked_in_one_call_with_the_roles_settings(device_class):
    fake = device_class()
    assert device_classes.cluster_problem("kube", CLASSES) is None
    assert fake.calls == [("kube", CLASSES["device_classes_list"], True,
                           {"app.kubernetes.io/managed-by": "dra.gpu.device_classes"})]


def test_refused_classes_are_counted_and_named(device_class):
    device_class(refused=["a: selector does not compile", "c: matches no device"])
    assert device_classes.cluster_problem("kube", CLASSES) == (
        "device_classes: 2 of 3 class(es) in device_classes_list cannot be applied, so none was applied and nothing "
        "was changed: a: selector does not compile; c: matches no device. Fix those entries of device_classes_list "
        "and run again.")


def test_a_removal_checks_nothing(device_class):
    fake = device_class(refused=["never asked"])
    assert device_classes.cluster_problem("kube", dict(CLASSES, device_classes_state="absent")) is None
    assert fake.calls == []


def test_a_failed_read_of_the_slices_is_named(device_class):
    device_class(error=forbidden())
    assert device_classes.cluster_problem("kube", CLASSES) == (
        "could not read the ResourceSlices the classes are checked against: nodes is forbidden")


def test_no_list_and_no_require_match_are_passed_as_empty_and_false(device_class):
    fake = device_class()
    assert device_classes.cluster_problem("kube", {}) is None
    assert fake.calls[0][1:3] == ([], False)
