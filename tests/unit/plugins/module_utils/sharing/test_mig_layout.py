from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import watch
from ansible_collections.dra.gpu.plugins.module_utils.sharing import mig_layout


def node(name, labels=None, annotations=None):
    return {"name": name, "labels": labels or {}, "annotations": annotations or {}}


def test_mig_patches_remember_and_restore_the_previous_layout():
    nodes = [node("a", {mig_layout.CAPABLE_LABEL: "true", mig_layout.CONFIG_LABEL: "all-disabled",
                        mig_layout.STATE_LABEL: "success"}), node("b", {mig_layout.CAPABLE_LABEL: "true"})]
    patches = mig_layout.patches(nodes, {"a"}, "all-1g.10gb")
    assert patches == [{"node": "a", "layout": "all-1g.10gb", "patch": {"metadata": {
        "labels": {mig_layout.CONFIG_LABEL: "all-1g.10gb", mig_layout.STATE_LABEL: None},
        "annotations": {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: "all-disabled"}}}}]
    labelled = node("a", {mig_layout.CAPABLE_LABEL: "true", mig_layout.CONFIG_LABEL: "all-1g.10gb"},
                    {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: "all-disabled"})
    assert mig_layout.patches([labelled], {"a"}, "all-1g.10gb") == []
    restore = mig_layout.patches([labelled], set(), None)
    assert restore[0]["patch"]["metadata"]["labels"] == {mig_layout.CONFIG_LABEL: "all-disabled",
                                                         mig_layout.STATE_LABEL: None}
    assert restore[0]["patch"]["metadata"]["annotations"] == {mig_layout.OWNER_ANNOTATION: None,
                                                              mig_layout.PREVIOUS_ANNOTATION: None}


def test_mig_node_problems_and_state():
    nodes = [node("a", {mig_layout.CAPABLE_LABEL: "true"}), node("b", {mig_layout.CAPABLE_LABEL: "false"})]
    problems = mig_layout.node_problems(nodes, ["a", "b", "c"])
    assert len(problems) == 2 and "b is not MIG-capable" in problems[0] and "c is not a node" in problems[1]

    def obj(labels):
        return {"metadata": {"name": "a", "labels": labels}}
    want = {"a": "all-1g.10gb"}
    assert mig_layout.state_verdict([obj({mig_layout.CONFIG_LABEL: "all-1g.10gb"})], want) is None
    assert mig_layout.state_verdict([obj({mig_layout.CONFIG_LABEL: "all-1g.10gb",
                                          mig_layout.STATE_LABEL: "success"})], want) is True
    with pytest.raises(mig_layout.MigLayoutError):
        mig_layout.state_verdict([obj({mig_layout.CONFIG_LABEL: "all-1g.10gb", mig_layout.STATE_LABEL: "failed"})], want)
    assert mig_layout.layout_profile("all-1g.10gb") == "1g.10gb"
    assert mig_layout.layout_profile("all-balanced") is None


def test_mig_device_counts_only_the_profile_on_the_named_nodes():
    def dev(node, kind, profile=None):
        attrs = {"type": kind}
        if profile:
            attrs["profile"] = profile
        return {"node": node, "attributes": attrs}
    devices = [dev("a", "mig", "1g.10gb"), dev("a", "mig", "1g.10gb"), dev("a", "mig", "3g.40gb"),
               dev("b", "gpu"), dev("c", "mig", "1g.10gb")]
    assert mig_layout.mig_device_counts(devices, ["a", "b"], "1g.10gb") == {"a": 2}


@pytest.mark.parametrize("layout, profile", [
    ("all-1g.10gb", "1g.10gb"), ("all-3g.40gb", "3g.40gb"), ("all-disabled", None), ("all-enabled", None),
    ("all-balanced", None), ("custom-config", None),
])
def test_layout_profile_only_for_single_profile_layouts(layout, profile):
    assert mig_layout.layout_profile(layout) == profile


def test_node_problems_name_the_nodes_there_are_or_none():
    assert mig_layout.node_problems([], ["a"]) == ["a is not a node of the cluster (nodes: none)"]
    capable = [node("a", {mig_layout.CAPABLE_LABEL: "true"}), node("b")]
    assert mig_layout.node_problems(capable, ["a"]) == []
    assert "node b is not MIG-capable" in mig_layout.node_problems(capable, ["b"])[0]


def test_a_node_without_a_layout_is_remembered_as_having_none_and_given_none_back():
    wanted = mig_layout.patches([node("a", {mig_layout.CAPABLE_LABEL: "true"})], {"a"}, "all-1g.10gb")
    assert wanted[0]["patch"]["metadata"]["annotations"][mig_layout.PREVIOUS_ANNOTATION] == mig_layout.NO_PREVIOUS
    labelled = node("a", {mig_layout.CONFIG_LABEL: "all-1g.10gb"},
                    {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: mig_layout.NO_PREVIOUS})
    restore = mig_layout.patches([labelled], set(), None)
    assert restore == [{"node": "a", "layout": None, "patch": {"metadata": {
        "labels": {mig_layout.CONFIG_LABEL: None, mig_layout.STATE_LABEL: None},
        "annotations": {mig_layout.OWNER_ANNOTATION: None, mig_layout.PREVIOUS_ANNOTATION: None}}}}]


def test_a_new_layout_on_a_node_we_labelled_keeps_what_it_had_before_us():
    ours = node("a", {mig_layout.CONFIG_LABEL: "all-1g.10gb"},
                {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: "all-disabled"})
    assert mig_layout.patches([ours], {"a"}, "all-3g.40gb") == [{"node": "a", "layout": "all-3g.40gb", "patch": {
        "metadata": {"labels": {mig_layout.CONFIG_LABEL: "all-3g.40gb", mig_layout.STATE_LABEL: None}}}}]


def test_nodes_we_never_labelled_are_left_alone():
    theirs = node("b", {mig_layout.CONFIG_LABEL: "all-balanced"})
    assert mig_layout.patches([theirs], set(), None) == []
    assert mig_layout.patches([theirs], {"a"}, "all-1g.10gb") == []


def test_a_restored_label_already_in_place_only_drops_our_annotations():
    ours = node("a", {mig_layout.CONFIG_LABEL: "all-disabled"},
                {mig_layout.OWNER_ANNOTATION: mig_layout.OWNER, mig_layout.PREVIOUS_ANNOTATION: "all-disabled"})
    assert mig_layout.patches([ours], set(), None) == [{"node": "a", "layout": "all-disabled", "patch": {"metadata": {
        "annotations": {mig_layout.OWNER_ANNOTATION: None, mig_layout.PREVIOUS_ANNOTATION: None}}}}]


def test_patches_come_in_node_name_order():
    nodes = [node(name) for name in ("c", "a", "b")]
    assert [p["node"] for p in mig_layout.patches(nodes, {"a", "b", "c"}, "all-1g.10gb")] == ["a", "b", "c"]


def meta(name, labels):
    return {"metadata": {"name": name, "labels": labels}}


def test_the_verdict_waits_for_every_node_and_names_every_failure():
    want = {"a": "all-1g.10gb", "b": "all-1g.10gb"}
    done = {mig_layout.CONFIG_LABEL: "all-1g.10gb", mig_layout.STATE_LABEL: "success"}
    pending = {mig_layout.CONFIG_LABEL: "all-1g.10gb", mig_layout.STATE_LABEL: "pending"}
    assert mig_layout.state_verdict([meta("a", done), meta("b", pending)], want) is None
    assert mig_layout.state_verdict([meta("a", done), meta("b", done)], want) is True
    with pytest.raises(mig_layout.MigLayoutError) as err:
        mig_layout.state_verdict([meta("a", {mig_layout.CONFIG_LABEL: "all-balanced"}),
                                  meta("b", dict(done, **{mig_layout.STATE_LABEL: "failed"}))], want)
    assert str(err.value) == ("a: its nvidia.com/mig.config label is now 'all-balanced' (something else changed it); "
                              "b: the MIG manager reports failed for all-1g.10gb")


def test_a_node_restored_to_no_layout_is_done_at_once_and_a_vanished_node_fails():
    assert mig_layout.state_verdict([], {"a": None}) is True
    with pytest.raises(watch.ConditionFailed, match="a: its nvidia.com/mig.config label is now None"):
        mig_layout.state_verdict([], {"a": "all-1g.10gb"})
