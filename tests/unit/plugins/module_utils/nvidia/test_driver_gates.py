from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import driver_gates


def daemonset(name, gates=None, container="gpus", namespace="nvidia-dra-driver-gpu", shares=None):
    env = [{"name": "FEATURE_GATES", "value": gates}] if gates is not None else []
    env += [{"name": "CONSUMABLE_SHARES", "value": shares}] if shares is not None else []
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"spec": {"containers": [{"name": container, "env": env}]}}}}


def test_gates_are_read_from_the_kubelet_plugin():
    found = driver_gates.kubelet_plugins([
        daemonset("dra-driver-nvidia-gpu-kubelet-plugin", "MPSSupport=true,TimeSlicingSettings=false,"),
        daemonset("other-kubelet-plugin", "MPSSupport=true", container="plugin"),
        daemonset("nvidia-device-plugin-daemonset", "MPSSupport=true")])
    assert found == [{"namespace": "nvidia-dra-driver-gpu", "name": "dra-driver-nvidia-gpu-kubelet-plugin",
                      "gates": {"MPSSupport": True, "TimeSlicingSettings": False}, "consumable_shares": None}]
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


@pytest.mark.parametrize("gates, shares, mode", [
    ("ConsumableShares=true,", "memory", "memory"),
    ("ConsumableShares=true,MPSSupport=true,", " 4 ", "4"),
    ("ConsumableShares=true,", "unlimited", "unlimited"),
    # The driver's default is "disabled", and without its gate it publishes no shares (it refuses
    # to start with a mode and no gate, so such a plugin shares nothing either).
    ("ConsumableShares=true,", "disabled", None),
    ("ConsumableShares=true,", "", None),
    ("ConsumableShares=true,", None, None),
    ("ConsumableShares=false,", "memory", None),
    (None, "memory", None),
])
def test_the_consumable_shares_mode_is_read_with_its_gate(gates, shares, mode):
    found = driver_gates.kubelet_plugins([daemonset("dra-driver-nvidia-gpu-kubelet-plugin", gates, shares=shares)])
    assert found[0]["consumable_shares"] == mode


def test_the_gpuclusters_plugin_is_read_the_same_way():
    # NVIDIA's v26.7 operator: DaemonSet nvidia-dra-driver-kubelet-plugin in the operator's namespace,
    # draDriver.featureGates as FEATURE_GATES and draDriver.gpus.kubeletPlugin.env on the gpus container.
    found = driver_gates.kubelet_plugins([daemonset("nvidia-dra-driver-kubelet-plugin", "ConsumableShares=true,",
                                                    namespace="gpu-operator", shares="8")])
    assert found == [{"namespace": "gpu-operator", "name": "nvidia-dra-driver-kubelet-plugin",
                      "gates": {"ConsumableShares": True}, "consumable_shares": "8"}]
    assert driver_gates.shares_problem(found) is None
    assert driver_gates.sharing_modes(found) == ["8"]


def test_a_plugin_without_shares_is_named_with_the_fix():
    found = driver_gates.kubelet_plugins([
        daemonset("a-kubelet-plugin", "ConsumableShares=true,", shares="memory"),
        daemonset("b-kubelet-plugin", "MPSSupport=true,", shares="memory"),
        daemonset("c-kubelet-plugin", "ConsumableShares=true,")])
    problem = driver_gates.shares_problem(found)
    assert "nvidia-dra-driver-gpu/b-kubelet-plugin publishes none (gate ConsumableShares off)" in problem
    assert "nvidia-dra-driver-gpu/c-kubelet-plugin publishes none (gate ConsumableShares on, but no mode)" in problem
    assert "a-kubelet-plugin" not in problem
    assert "Set gpu_operator_dra_consumable_shares" in problem
    assert "no NVIDIA DRA kubelet plugin" in driver_gates.shares_problem([])
    assert driver_gates.sharing_modes(found) == ["memory"]
