from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import chart_values as cv

VALUES = {"driver": {"enabled": False, "manager": {"repository": "nvcr.io/nvidia/cloud-native"}}, "gfd": None}


@pytest.mark.parametrize("dotted, found", [
    ("driver.manager.repository", "nvcr.io/nvidia/cloud-native"),
    ("driver.enabled", False),
    ("driver", VALUES["driver"]),
    ("gfd", None),
])
def test_lookup_finds_the_value_at_a_dotted_key(dotted, found):
    assert cv.lookup(VALUES, dotted, "default") == found


@pytest.mark.parametrize("dotted", ["toolkit.enabled", "driver.manager.image", "driver.enabled.deep", "gfd.enabled",
                                    "driver.manager.repository.x"])
def test_lookup_gives_the_default_where_any_part_is_missing_or_not_a_map(dotted):
    assert cv.lookup(VALUES, dotted, "default") == "default"
    assert cv.lookup(VALUES, dotted) is None


def test_a_false_value_is_found_not_replaced_by_the_default():
    assert cv.lookup({"a": {"b": 0}}, "a.b", 7) == 0


def test_set_value_creates_the_maps_on_its_way_and_keeps_their_siblings():
    values = {"driver": {"enabled": True}}
    cv.set_value(values, "driver.manager.repository", "mirror/nvidia")
    cv.set_value(values, "toolkit", {"enabled": False})
    assert values == {"driver": {"enabled": True, "manager": {"repository": "mirror/nvidia"}},
                      "toolkit": {"enabled": False}}


def test_set_value_replaces_what_was_there():
    values = {"a": {"b": [1]}}
    cv.set_value(values, "a.b", [2])
    assert values == {"a": {"b": [2]}}


@pytest.mark.parametrize("value, on", [
    (True, True), ("true", True), ("True", True), ("TRUE", True),
    (False, False), ("false", False), (None, False), (1, False), ("yes", False), ("", False),
])
def test_truthy_reads_booleans_as_helm_templates_do(value, on):
    assert cv.truthy(value) is on


def test_deep_merge_merges_maps_and_replaces_everything_else():
    base = {"driver": {"enabled": True, "env": [{"name": "A"}]}, "gfd": {"enabled": True}, "keep": 1}
    extra = {"driver": {"env": [{"name": "B"}], "version": "580"}, "gfd": False, "new": {"x": 1}}
    assert cv.deep_merge(base, extra) == {"driver": {"enabled": True, "env": [{"name": "B"}], "version": "580"},
                                          "gfd": False, "keep": 1, "new": {"x": 1}}


def test_deep_merge_changes_neither_input_and_shares_nothing_with_them():
    base, extra = {"a": {"b": {"c": 1}}}, {"a": {"d": [1]}}
    merged = cv.deep_merge(base, extra)
    merged["a"]["b"]["c"] = 2
    merged["a"]["d"].append(2)
    assert base == {"a": {"b": {"c": 1}}} and extra == {"a": {"d": [1]}}


def test_deep_merge_with_nothing_is_a_copy():
    base = {"a": {"b": 1}}
    merged = cv.deep_merge(base, None)
    assert merged == base and merged is not base and merged["a"] is not base["a"]
