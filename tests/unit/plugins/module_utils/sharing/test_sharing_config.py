from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
from ansible_collections.dra.gpu.plugins.module_utils.dra.device_class import validate_input

ISSUE_EXAMPLE = [
    {"name": "nvidia-gpu-timesliced", "strategy": "time_slicing", "interval": "Default"},
    {"name": "nvidia-gpu-mps", "strategy": "mps", "mps": {"active_thread_percentage": 50, "pinned_memory_limit": "8Gi"}},
    {"name": "nvidia-mig-1g", "strategy": "mig", "profile": "1g.10gb"},
]


def params(sharing, kind="GpuConfig"):
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": kind, "sharing": sharing}


# ----- rendering ---------------------------------------------------------------------------

def test_issue_example_renders_nvidia_configs_and_gates():
    classes, gates = sharing_config.device_classes(ISSUE_EXAMPLE, {"app.kubernetes.io/managed-by": "x"})
    assert gates == ["MPSSupport", "TimeSlicingSettings"]
    timesliced, mps, mig = classes
    assert timesliced["config"] == [{"opaque": {"driver": "gpu.nvidia.com", "parameters": params(
        {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}})}}]
    assert mps["config"][0]["opaque"]["parameters"]["sharing"] == {
        "strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 50, "defaultPinnedDeviceMemoryLimit": "8Gi"}}
    assert "config" not in mig
    assert mig["selectors"] == ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
                                " && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"]
    assert timesliced["selectors"][0].endswith(".type == 'gpu'")
    assert all(c["labels"] == {"app.kubernetes.io/managed-by": "x"} for c in classes)
    assert "nothing limits" in timesliced["enforces"] and "caps" in mps["enforces"]


def test_mig_with_mps_uses_mig_device_config():
    classes, gates = sharing_config.device_classes([{"name": "m", "strategy": "mig", "profile": "3g.40gb",
                                                     "mps": {"active_thread_percentage": 30}}])
    assert classes[0]["config"][0]["opaque"]["parameters"]["kind"] == "MigDeviceConfig"
    assert gates == ["MPSSupport"]


@pytest.mark.parametrize("entry, words", [
    ({"name": "a", "strategy": "timeslicing"}, "strategy is 'timeslicing'"),
    ({"name": "a", "strategy": "time_slicing", "interval": "Fast"}, "interval is 'Fast'"),
    ({"name": "a", "strategy": "mps", "mps": {"active_thread_percentage": 150}}, "must be 0 to 100"),
    ({"name": "a", "strategy": "mps", "mps": {"pinned_memory_limit": "8GB!"}}, "is not a quantity"),
    ({"name": "a", "strategy": "mps", "mps": {"pinned_memory_limit": "512Ki"}}, "below 1Mi"),
    ({"name": "a", "strategy": "mps", "mps": {"threads": 5}}, "mps.threads is not a setting"),
    ({"name": "a", "strategy": "mig"}, "profile is missing"),
    ({"name": "a", "strategy": "mig", "profile": "1g10gb"}, "not a MIG profile name"),
    ({"name": "a", "strategy": "mps", "profile": "1g.10gb"}, "applies to strategy mig only"),
    ({"name": "a", "strategy": "time_slicing", "mps": {}}, "applies to strategy mps"),
    ({"strategy": "mps"}, "name is missing"),
    ({"name": "a", "strategy": "mps", "colour": "red"}, "colour is not a setting"),
])
def test_bad_entries_are_refused_naming_the_field(entry, words):
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.device_classes([entry], root="gpu_sharing_classes")
    assert "gpu_sharing_classes[0]" in str(err.value) and words in str(err.value)


def test_every_problem_is_reported_at_once():
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.device_classes([{"name": "a", "strategy": "x"}, {"name": "b", "strategy": "mig"},
                                       {"name": "a", "strategy": "mps"}, {"name": "a", "strategy": "mps"}])
    text = str(err.value)
    assert "[0]" in text and "[1]" in text and "[3].name a is listed twice" in text


def test_mps_limit_above_every_gpu_is_refused():
    classes, _gates = sharing_config.device_classes([{"name": "big", "strategy": "mps",
                                                      "mps": {"pinned_memory_limit": "32Gi"}}])
    devices = [{"attributes": {"type": "gpu"}, "capacity": {"memory": "24Gi"}}]
    problems = sharing_config.memory_problems(classes, devices)
    assert len(problems) == 1 and "32Gi" in problems[0] and "24Gi" in problems[0] and "lower it" in problems[0]
    classes, _gates = sharing_config.device_classes([{"name": "ok", "strategy": "mps",
                                                      "mps": {"pinned_memory_limit": "24Gi"}}])
    assert sharing_config.memory_problems(classes, devices) == []


def test_memory_of_mig_classes_is_compared_with_mig_devices_only():
    classes, _gates = sharing_config.device_classes([{"name": "m", "strategy": "mig", "profile": "1g.10gb",
                                                      "mps": {"pinned_memory_limit": "16Gi"}}])
    gpu = {"attributes": {"type": "gpu"}, "capacity": {"memory": "80Gi"}}
    mig = {"attributes": {"type": "mig"}, "capacity": {"memory": "9856Mi"}}
    problems = sharing_config.memory_problems(classes, [gpu, mig], root="classes")
    assert problems == ["classes[0] (m): mps.pinned_memory_limit 16Gi is more than the largest MIG device has "
                        "(9856Mi); lower it to at most 9856Mi"]
    # no device of the kind published yet: nothing to compare with
    assert sharing_config.memory_problems(classes, [gpu]) == []


def test_classes_without_a_memory_limit_are_not_compared():
    classes, _gates = sharing_config.device_classes([{"name": "t", "strategy": "time_slicing"},
                                                     {"name": "p", "strategy": "mps", "mps": {"active_thread_percentage": 10}},
                                                     {"name": "m", "strategy": "mig", "profile": "1g.10gb"}])
    tiny = [{"attributes": {"type": t}, "capacity": {"memory": "1Mi"}} for t in ("gpu", "mig")]
    assert sharing_config.memory_problems(classes, tiny) == []


# ----- rendering details -----------------------------------------------------------------------

def test_time_slicing_takes_the_default_interval_unless_one_is_named():
    classes, gates = sharing_config.device_classes([{"name": "a", "strategy": "time_slicing"},
                                                    {"name": "b", "strategy": "time_slicing", "interval": "Long"}])
    intervals = [c["config"][0]["opaque"]["parameters"]["sharing"]["timeSlicingConfig"]["interval"] for c in classes]
    assert intervals == ["Default", "Long"] and gates == ["TimeSlicingSettings"]


def test_mps_without_settings_gets_an_empty_mps_config_and_per_device_limits_are_strings():
    classes, _gates = sharing_config.device_classes([
        {"name": "a", "strategy": "mps"},
        {"name": "b", "strategy": "mps", "mps": {"pinned_memory_limit": 8589934592,
                                                 "per_device_pinned_memory_limit": {0: "4Gi", "GPU-1": "2Gi"}}}])
    assert classes[0]["config"][0]["opaque"]["parameters"]["sharing"] == {"strategy": "MPS", "mpsConfig": {}}
    assert classes[1]["config"][0]["opaque"]["parameters"]["sharing"]["mpsConfig"] == {
        "defaultPinnedDeviceMemoryLimit": "8589934592", "defaultPerDevicePinnedMemoryLimit": {"0": "4Gi", "GPU-1": "2Gi"}}


def test_a_mig_class_without_mps_needs_no_config_and_no_gate():
    classes, gates = sharing_config.device_classes([{"name": "m", "strategy": "mig", "profile": "2g.20gb"}])
    assert gates == [] and "config" not in classes[0]
    assert classes[0]["profile"] == "2g.20gb" and classes[0]["strategy"] == "mig"


def test_the_users_selectors_follow_the_type_selector_and_managed_labels_win():
    classes, _gates = sharing_config.device_classes(
        [{"name": "a", "strategy": "mps", "selectors": ["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"],
          "labels": {"team": "ml", "app.kubernetes.io/managed-by": "me"}}],
        {"app.kubernetes.io/managed-by": "dra.gpu"})
    assert classes[0]["selectors"][1:] == ["device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"]
    assert classes[0]["labels"] == {"team": "ml", "app.kubernetes.io/managed-by": "dra.gpu"}
    assert classes[0]["profile"] is None


def test_no_entries_make_no_classes():
    assert sharing_config.device_classes(None) == ([], [])
    assert sharing_config.device_classes([]) == ([], [])


@pytest.mark.parametrize("entry, words", [
    ("nvidia-gpu-mps", "gpu_sharing_classes[0] must be a map with name and strategy"),
    ({"name": "a", "strategy": "mps", "mps": "50"}, "gpu_sharing_classes[0].mps must be a map"),
    ({"name": "a", "strategy": "mig", "profile": "1g.10gb", "interval": "Short"}, "interval applies to strategies time_slicing and memory only"),
    ({"name": "a", "strategy": "mps", "mps": {"active_thread_percentage": True}}, "must be a whole number, not True"),
])
def test_more_bad_entries(entry, words):
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.device_classes([entry])
    assert words in str(err.value)


@pytest.mark.parametrize("profile", ["1g.10gb", "7g.80gb", "1g.10gb+me", "1g.5gb-me", "1g.10gb+me.all"])
def test_mig_profile_names_nvidia_uses_are_accepted(profile):
    assert sharing_config.entry_problems({"name": "m", "strategy": "mig", "profile": profile}, "c") == []


def test_a_per_device_pinned_limit_that_is_not_a_map_is_named_not_a_traceback():
    entry = {"name": "mps", "strategy": "mps", "mps": {"per_device_pinned_memory_limit": "8Gi"}}
    with pytest.raises(sharing_config.SharingConfigError, match=r"per_device_pinned_memory_limit is '8Gi'; write a map"):
        sharing_config.device_classes([entry])


def test_entries_without_names_are_not_called_duplicates():
    with pytest.raises(sharing_config.SharingConfigError) as raised:
        sharing_config.device_classes([{"strategy": "time_slicing"}, {"strategy": "time_slicing"}, "x", "y"])
    assert "listed twice" not in str(raised.value)


# ----- memory shares (ConsumableShares, driver 0.5.0) -------------------------------------------

MEMORY = {"name": "nvidia-gpu-memory", "strategy": "memory"}


def test_a_memory_class_selects_gpus_shared_by_memory_and_carries_no_config():
    classes, gates = sharing_config.device_classes([MEMORY])
    assert classes[0]["selectors"] == [
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu' && "
        "device.allowMultipleAllocations"]
    assert "config" not in classes[0] and gates == []
    validate_input(classes[0]["selectors"], None)
    # What is enforced, in words: scheduler accounting, and which runtime strategies combine.
    words = classes[0]["enforces"]
    assert "scheduler accounting" in words and "nothing caps the memory a pod really uses" in words
    assert "time-slicing combines with it" in words and "MPS does not" in words


def test_a_memory_class_with_an_interval_is_time_sliced_and_needs_that_gate():
    classes, gates = sharing_config.device_classes([dict(MEMORY, interval="Short")])
    assert classes[0]["config"][0]["opaque"]["parameters"]["sharing"] == {
        "strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Short"}}
    assert gates == ["TimeSlicingSettings"]


def test_a_memory_class_with_mps_is_refused_with_the_drivers_words():
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.device_classes([dict(MEMORY, mps={"active_thread_percentage": 50})])
    assert "gpu_sharing_classes[0].mps does not combine with strategy memory" in str(err.value)
    assert "MPS sharing is not supported when consumable shares is enabled" in str(err.value)


def test_mps_classes_are_refused_while_the_driver_shares_by_memory():
    classes, _gates = sharing_config.device_classes([
        {"name": "ts", "strategy": "time_slicing"}, {"name": "m", "strategy": "mps"},
        {"name": "mig-mps", "strategy": "mig", "profile": "1g.10gb", "mps": {}}])
    problem = sharing_config.mps_problem(classes, ["memory"])
    assert problem.startswith("m, mig-mps ask for MPS, but NVIDIA's DRA driver runs ConsumableShares (memory)")
    assert sharing_config.mps_problem(classes, []) is None
    assert sharing_config.mps_problem(classes[:1], ["4"]) is None


def test_live_classes_with_mps_are_found():
    def mps(driver):
        return {"config": [{"opaque": {"driver": driver, "parameters": {"sharing": {"strategy": "MPS"}}}}]}
    live = [{"metadata": {"name": "a"}, "spec": mps("gpu.nvidia.com")},
            {"metadata": {"name": "b"}, "spec": mps("other")},
            {"metadata": {"name": "c"}, "spec": {}}]
    assert sharing_config.mps_classes(live) == ["a"]
    refusal = sharing_config.live_mps_refusal(live, "gpu_operator_dra_consumable_shares")
    assert refusal.startswith("gpu_operator_dra_consumable_shares: DeviceClass a carries an MPS sharing config")
    assert '("MPS sharing is not supported when consumable shares is enabled")' in refusal
    assert sharing_config.live_mps_refusal([], "gpu_operator_dra_consumable_shares") is None


@pytest.mark.parametrize("mode, words", [("memory", "takes the whole GPU"), ("unlimited", "consumes none"),
                                         ("4", "at most 4 claims per GPU")])
def test_each_mode_says_what_a_claim_without_memory_gets(mode, words):
    assert words in sharing_config.shares_mode_words(mode)
