"""Node by node, run after run (gpu_operator_values): a node moved to DRA by an earlier run stays
there when a later run names only the next node; only gpu_operator_back_to_device_plugin takes it
back, DRA leaving before the device plugin returns."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils.nvidia.gpu_operator_catalog import PlanError
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.nvidia.operator_plans import GPU_NODES, plan

DRA = {"nvidia.com/dra-kubelet-plugin": "true"}
MOVED = dict(DRA, **{"nvidia.com/gpu.deploy.device-plugin": "false"})


def node(name, labels=None, ours=False):
    return {"name": name, "labels": dict(labels or {}, **{"nvidia.com/gpu.present": "true"}),
            "annotations": {gov.OWNER_ANNOTATION: gov.OWNER} if ours else {}}


def test_a_node_on_dra_stays_there_when_the_next_run_names_only_the_next_node():
    assert gov.select_nodes(["a", "b", "c"], ["b"], on_dra=["a"]) == ["a", "b"]
    result = plan("v26.3.1", dra_nodes=["node-b"], on_dra=["node-a"])
    assert result["dra_nodes"] == ["node-a", "node-b"]
    # every GPU node on DRA now: the operator's device plugin is turned off
    assert result["releases"][0]["values"]["devicePlugin"] == {"enabled": False}
    patches = gov.node_patches([node("node-a", MOVED, ours=True), node("node-b")], result["dra_nodes"])
    assert [(p["node"], p["step"]) for p in patches] == [("node-b", gov.DEVICE_PLUGIN_OFF), ("node-b", gov.DRA_ON)]
    assert gov.moving_nodes(patches) == ["node-b"] and gov.returning_nodes(patches) == []


def test_a_node_labelled_for_dra_while_its_device_plugin_still_runs_is_still_moving():
    half = [node("node-a", DRA), node("node-b", MOVED, ours=True)]
    patches = gov.node_patches(half, gov.select_nodes(GPU_NODES, [], on_dra=["node-a", "node-b"]))
    assert [(p["node"], p["step"]) for p in patches] == [("node-a", gov.DEVICE_PLUGIN_OFF)]
    assert gov.moving_nodes(patches) == ["node-a"]
    # the operator-managed layout removing our leftover label moves nothing
    left = gov.node_patches([node("node-a", MOVED, ours=True)], ["node-a"], device_plugin_label=False)
    assert [p["step"] for p in left] == [gov.DEVICE_PLUGIN_OFF] and gov.moving_nodes(left) == []


def test_empty_dra_nodes_still_means_every_gpu_node_and_a_rerun_moves_nothing():
    assert gov.select_nodes(["a", "b"], []) == ["a", "b"]
    result = plan("v26.3.1", on_dra=GPU_NODES)
    moved = [node(name, MOVED, ours=True) for name in GPU_NODES]
    assert result["dra_nodes"] == GPU_NODES and gov.node_patches(moved, result["dra_nodes"]) == []


def test_a_node_is_taken_back_only_when_named_dra_off_first():
    assert gov.select_nodes(["a", "b"], [], on_dra=["a", "b"], back=["a"]) == ["b"]
    # naming only nodes to take back moves no other node to DRA
    assert gov.select_nodes(["a", "b", "c"], [], on_dra=["a"], back=["a"]) == []
    result = plan("v26.3.1", on_dra=GPU_NODES, back_to_device_plugin=["node-a"])
    assert result["dra_nodes"] == ["node-b"]
    # a node back on the device plugin needs the operator's device plugin on
    assert result["releases"][0]["values"]["devicePlugin"] == {"enabled": True}
    nodes = [node("node-a", MOVED, ours=True), node("node-b", MOVED, ours=True)]
    patches = gov.node_patches(nodes, result["dra_nodes"])
    assert patches == [
        {"node": "node-a", "step": gov.DRA_OFF, "patch": {"metadata": {
            "name": "node-a", "labels": {"nvidia.com/dra-kubelet-plugin": None}}}},
        {"node": "node-a", "step": gov.DEVICE_PLUGIN_ON, "patch": {"metadata": {
            "name": "node-a", "labels": {"nvidia.com/gpu.deploy.device-plugin": None},
            "annotations": {gov.OWNER_ANNOTATION: None}}}}]
    assert gov.returning_nodes(patches) == ["node-a"] and gov.moving_nodes(patches) == []
    # a run that stopped after DRA left resumes with the device plugin's step; once done, nothing
    half = [node("node-a", {"nvidia.com/gpu.deploy.device-plugin": "false"}, ours=True), nodes[1]]
    assert [p["step"] for p in gov.node_patches(half, ["node-b"])] == [gov.DEVICE_PLUGIN_ON]
    assert gov.node_patches([node("node-a"), nodes[1]], ["node-b"]) == []


def test_a_node_named_both_ways_or_no_gpu_node_is_refused():
    with pytest.raises(PlanError, match="gpu_operator_dra_nodes and gpu_operator_back_to_device_plugin both name a"):
        gov.select_nodes(["a", "b"], ["a"], back=["a"])
    with pytest.raises(PlanError, match="gpu_operator_back_to_device_plugin names x, which is not a GPU node"):
        gov.select_nodes(["a", "b"], [], back=["x"])
    with pytest.raises(PlanError, match="gpu_operator_dra_nodes names x, y, which are not"):
        gov.select_nodes(["a"], ["x", "y"])


def test_taking_back_every_node_on_dra_plans_dra_on_none():
    result = plan("v26.3.1", on_dra=["node-a"], back_to_device_plugin=["node-a"])
    assert result["dra_nodes"] == []


def test_the_operator_managed_layout_cannot_take_one_node_back():
    with pytest.raises(PlanError, match="cannot migrate node by node"):
        plan("v26.7.0", "gpucluster", on_dra=GPU_NODES, back_to_device_plugin=["node-a"])


def test_plan_for_reads_the_nodes_on_dra_from_their_labels():
    params = {"version": "v26.3.1", "dra_mode": "auto", "dra_enabled": True, "driver_enabled": True,
              "toolkit_enabled": True, "dra_nodes": ["node-b"], "dra_driver_values": {}, "dra_driver_version": None,
              "image_registry": None, "dra_sharing": False, "namespace": "gpu-operator",
              "dra_driver_namespace": "nvidia-dra-driver-gpu", "release_name": "gpu-operator",
              "dra_driver_release_name": "nvidia-dra-driver-gpu"}
    labels = {"node-a": MOVED, "node-b": {}}
    assert gov.plan_for(params, GPU_NODES, {}, None, labels)["dra_nodes"] == ["node-a", "node-b"]
    back = gov.plan_for(dict(params, dra_nodes=[], back_to_device_plugin=["node-a"]), GPU_NODES, {}, None, labels)
    assert back["dra_nodes"] == []
