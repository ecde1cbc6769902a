from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs


@pytest.mark.parametrize("value", [0, -1, "0", "-3", True, None, "two", 1.5])
def test_counts_below_one_or_not_whole_are_refused(value):
    with pytest.raises(inputs.InputError) as err:
        inputs.integer("smoke_test_count", value)
    assert "smoke_test_count" in str(err.value) and "at least 1" in str(err.value) or "whole number" in str(err.value)


def test_counts_and_zero_where_allowed():
    assert inputs.integer("n", "3") == 3
    assert inputs.integer("grace", 0, minimum=0) == 0


@pytest.mark.parametrize("text", ["1.3x", "1.35.x", "v1.35.4.1", "1.35-rc", "latest1", "", "1"])
def test_versions_must_be_written_in_full(text):
    with pytest.raises(inputs.InputError) as err:
        inputs.version("cluster_upgrade_target", text, latest=True)
    assert "cluster_upgrade_target" in str(err.value) and "1.35" in str(err.value)


def test_good_versions():
    assert inputs.version("t", "1.35") == (1, 35, None)
    assert inputs.version("t", "v1.35.4") == (1, 35, 4)
    assert inputs.version("t", "latest", latest=True) == "latest"
    with pytest.raises(inputs.InputError, match="needs a patch"):
        inputs.version("available_versions[0]", "1.35", exact=True)


@pytest.mark.parametrize("check,value,words", [
    (inputs.dns_label, "Bad_NS", "namespace name"),
    (inputs.dns_label, "a" * 64, "at most 63"),
    (inputs.helm_release, "x" * 54, "at most 53"),
    (inputs.helm_release, "My-Release", "Helm refuses"),
    (inputs.dns_subdomain, "gpu_class", "lowercase"),
])
def test_names(check, value, words):
    with pytest.raises(inputs.InputError) as err:
        check("the_name", value)
    assert "the_name" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("selector,ok", [
    ("nvidia.com/gpu.present=true", True), ("a=b,c!=d", True), ("!a", True), ("a in (x, y)", True),
    ("a notin (x)", True), ("", True), ("a=b=c", False), ("=b", False), ("a in x", False), ("!a=b", False),
])
def test_label_selectors(selector, ok):
    if ok:
        inputs.label_selector("sel", selector)
    else:
        with pytest.raises(inputs.InputError, match="not a label selector"):
            inputs.label_selector("sel", selector)


def test_duplicates_and_inventory():
    with pytest.raises(inputs.InputError, match="names a more than once"):
        inputs.unique("device_classes_list", ["a", "b", "a"], "class")
    with pytest.raises(inputs.InputError) as err:
        inputs.in_inventory("preflight_gpu_hosts", ["gpu-9", "localhost"], ["gpu-1"])
    assert "gpu-9" in str(err.value) and "not in the inventory" in str(err.value) and "gpu-1" in str(err.value)


def test_labels_need_string_values():
    inputs.labels("node_selector", {"nvidia.com/gpu.present": "true", "x": True})
    with pytest.raises(inputs.InputError, match="label values are strings"):
        inputs.labels("node_selector", {"a": {"b": 1}})
    with pytest.raises(inputs.InputError, match="not a label key"):
        inputs.labels("node_selector", {"bad key": "x"})


def test_problems_reports_every_problem():
    problems = inputs.Problems()
    assert problems.check(inputs.integer, "a", 0) is None
    assert problems.check(inputs.integer, "b", 2) == 2
    assert problems.check(inputs.version, "c", "x") is None
    found = problems.found
    assert len(found) == 2 and found[0].startswith("a ") and found[1].startswith("c ")
    problems.add("d is wrong")
    problems.extend(["e is wrong", "f is wrong"])
    assert [p[0] for p in problems.found] == ["a", "c", "d", "e", "f"]


def test_problems_let_other_errors_through():
    with pytest.raises(TypeError):
        inputs.Problems().check(inputs.integer)


class _Module:
    def __init__(self):
        self.failed = None

    def fail_json(self, **kwargs):
        self.failed = kwargs


def test_refuse_fails_with_every_problem_and_only_then():
    module = _Module()
    inputs.refuse(module, [])
    assert module.failed is None
    inputs.refuse(module, ["a is 0", "c is x"])
    assert module.failed == {"msg": "a is 0; c is x", "problems": ["a is 0", "c is x"]}


def test_stripped_keeps_the_prefixed_variables_under_their_short_names():
    assert inputs.stripped({"smoke_test_count": 1, "smoke_test_slice_timeout": 0, "other": 2}, "smoke_test_") == {
        "count": 1, "slice_timeout": 0}
    assert inputs.stripped(None, "smoke_test_") == {}


def test_mappings_yields_each_mapping_and_names_each_other_entry():
    report = inputs.Problems()
    found = list(inputs.mappings([{"a": 1}, "b", {"c": 2}], "things", "thing is a mapping", report))
    assert found == [("things[0]", {"a": 1}), ("things[2]", {"c": 2})]
    assert report.found == ["things[1] is 'b'; each thing is a mapping"]
