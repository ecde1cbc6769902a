from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes

NFD_NVIDIA = "feature.node.kubernetes.io/pci-10de.present"


def node(name="w1", labels=None, annotations=None, spec=None, ready="True", allocatable=None):
    status = {"nodeInfo": {"kubeletVersion": "v1.35.4", "containerRuntimeVersion": "containerd://2.1.0"},
              "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}]}
    if allocatable is not None:
        status["allocatable"] = allocatable
    meta = {"name": name, "labels": labels or {}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec or {}, "status": status}


def test_summary_of_a_ready_gpu_worker():
    summary = nodes.summary(node(labels={"nvidia.com/gpu.present": "true"}, spec={"providerID": "aws:///i-1"},
                                 allocatable={"nvidia.com/gpu": "4"}))
    assert summary == {"name": "w1", "labels": {"nvidia.com/gpu.present": "true"}, "annotations": {},
                       "control_plane": False, "kubelet": "v1.35.4", "runtime": "containerd://2.1.0",
                       "provider_id": "aws:///i-1", "unschedulable": False, "ready": True, "gpu": True,
                       "device_plugin_gpus": "4"}


def test_the_control_plane_label_counts_whatever_its_value():
    assert nodes.summary(node(labels={nodes.CONTROL_PLANE_LABEL: ""}))["control_plane"] is True


@pytest.mark.parametrize("labels, gpu", [
    ({NFD_NVIDIA: "true"}, True),
    ({"nvidia.com/gpu.present": "true"}, True),
    ({"nvidia.com/gpu.present": "false"}, False),
    ({NFD_NVIDIA: True}, False),
    ({"nvidia.com/gpu.count": "2"}, False),
    ({}, False),
])
def test_a_gpu_node_is_one_nfd_or_gfd_labels_true(labels, gpu):
    assert nodes.summary(node(labels=labels))["gpu"] is gpu


@pytest.mark.parametrize("ready", ["False", "Unknown"])
def test_a_ready_condition_that_is_not_true_is_not_ready(ready):
    assert nodes.summary(node(ready=ready))["ready"] is False


def test_cordoned_nodes_are_unschedulable():
    assert nodes.summary(node(spec={"unschedulable": True}))["unschedulable"] is True


def test_device_plugin_gpus_is_text_and_zero_when_none_are_advertised():
    assert nodes.summary(node())["device_plugin_gpus"] == "0"
    assert nodes.summary(node(allocatable={"nvidia.com/gpu": "0"}))["device_plugin_gpus"] == "0"
    assert nodes.summary(node(allocatable={"nvidia.com/gpu": 8}))["device_plugin_gpus"] == "8"


def test_a_node_with_nothing_but_a_name_is_summarised():
    summary = nodes.summary({"metadata": {"name": "bare"}})
    assert summary["name"] == "bare" and summary["labels"] == {} and summary["annotations"] == {}
    assert summary["ready"] is False and summary["gpu"] is False and summary["unschedulable"] is False
    assert summary["kubelet"] is None and summary["provider_id"] is None


def test_labelled_keeps_names_labels_and_annotations_only():
    items = [node("a", labels={"x": "1"}, annotations={"dra.gpu/set": "x"}), {"metadata": {"name": "b", "labels": None}}]
    assert nodes.labelled(items) == [{"name": "a", "labels": {"x": "1"}, "annotations": {"dra.gpu/set": "x"}},
                                     {"name": "b", "labels": {}, "annotations": {}}]


def test_list_summaries_reads_every_node_through_list_node():
    class Core:
        def list_node(self, **kwargs):
            raise AssertionError("read through kube.list_all, which pages")

    class Kube:
        core = Core()

        def list_all(self, list_fn, **kwargs):
            assert list_fn == self.core.list_node and kwargs == {}
            return [node("w2"), node("cp", labels={nodes.CONTROL_PLANE_LABEL: ""})], "42"
    assert [(s["name"], s["control_plane"]) for s in nodes.list_summaries(Kube())] == [("w2", False), ("cp", True)]
