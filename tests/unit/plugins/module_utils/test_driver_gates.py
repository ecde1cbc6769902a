from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import driver_gates


def daemonset(name, gates=None, container="gpus", namespace="nvidia-dra-driver-gpu"):
    env = [{"name": "FEATURE_GATES", "value": gates}] if gates is not None else []
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"spec": {"containers": [{"name": container, "env": env}]}}}}


def test_gates_are_read_from_the_kubelet_plugin():
    found = driver_gates.kubelet_plugins([
        daemonset("dra-driver-nvidia-gpu-kubelet-plugin", "MPSSupport=true,TimeSlicingSettings=false,"),
        daemonset("other-kubelet-plugin", "MPSSupport=true", container="plugin"),
        daemonset("nvidia-device-plugin-daemonset", "MPSSupport=true")])
    assert found == [{"namespace": "nvidia-dra-driver-gpu", "name": "dra-driver-nvidia-gpu-kubelet-plugin",
                      "gates": {"MPSSupport": True, "TimeSlicingSettings": False}}]
    problem = driver_gates.problem(["MPSSupport", "TimeSlicingSettings"], found)
    assert "runs without TimeSlicingSettings" in problem and "gpu_operator_dra_sharing: true" in problem
    assert driver_gates.problem(["MPSSupport"], found) is None
    assert "no NVIDIA DRA kubelet plugin" in driver_gates.problem(["MPSSupport"], [])
    assert driver_gates.problem([], []) is None
    assert driver_gates.kubelet_plugins([daemonset("x-kubelet-plugin")])[0]["gates"] == {}


@pytest.mark.parametrize("text, gates", [
    ("MPSSupport=true,TimeSlicingSettings=false,", {"MPSSupport": True, "TimeSlicingSettings": False}),
    (" MPSSupport = TRUE , TimeSlicingSettings=True ", {"MPSSupport": True, "TimeSlicingSettings": True}),
    ("MPSSupport=yes,Other", {"MPSSupport": False, "Other": False}),
    (",,", {}),
    ("", {}),
    (None, {}),
])
def test_parse_reads_only_true_as_on(text, gates):
    assert driver_gates.parse(text) == gates


def test_plugins_are_sorted_by_namespace_then_name_and_odd_daemonsets_skipped():
    found = driver_gates.kubelet_plugins([
        daemonset("b-kubelet-plugin", "MPSSupport=true", namespace="z"),
        daemonset("a-kubelet-plugin", namespace="z"),
        daemonset("c-kubelet-plugin", namespace="a"),
        {"metadata": {"name": "bare-kubelet-plugin"}},
        {"metadata": {}},
        {},
    ])
    assert [(p["namespace"], p["name"]) for p in found] == [("a", "c-kubelet-plugin"), ("z", "a-kubelet-plugin"),
                                                            ("z", "b-kubelet-plugin")]
    assert driver_gates.kubelet_plugins(None) == []


def test_only_the_first_gpus_container_is_read():
    ds = daemonset("x-kubelet-plugin", "MPSSupport=true")
    ds["spec"]["template"]["spec"]["containers"].append(
        {"name": "gpus", "env": [{"name": "FEATURE_GATES", "value": "TimeSlicingSettings=true"}]})
    assert driver_gates.kubelet_plugins([ds])[0]["gates"] == {"MPSSupport": True}


def plugin(name, **gates):
    return {"namespace": "ns", "name": name, "gates": gates}


def test_missing_lists_per_plugin_the_gates_that_are_off_or_unnamed():
    plugins = [plugin("on", MPSSupport=True, TimeSlicingSettings=True), plugin("half", MPSSupport=True),
               plugin("off", MPSSupport=False)]
    assert driver_gates.missing(["MPSSupport", "TimeSlicingSettings"], plugins) == [
        dict(plugin("half", MPSSupport=True), missing=["TimeSlicingSettings"]),
        dict(plugin("off", MPSSupport=False), missing=["MPSSupport", "TimeSlicingSettings"])]
    assert driver_gates.missing([], plugins) == []


def test_the_problem_names_every_plugin_that_lacks_a_gate():
    text = driver_gates.problem(["MPSSupport"], [plugin("a", MPSSupport=False), plugin("b"), plugin("c", MPSSupport=True)])
    assert "ns/a runs without MPSSupport; ns/b runs without MPSSupport" in text
    assert "ns/c" not in text and text.startswith("the sharing classes need the DRA driver's feature gates MPSSupport")
