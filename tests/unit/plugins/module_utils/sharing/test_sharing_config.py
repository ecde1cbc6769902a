from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
from ansible_collections.dra.gpu.plugins.module_utils.dra.device_class import DeviceClassError, validate_input

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


# ----- NVIDIA's strict decode ----------------------------------------------------------------

@pytest.mark.parametrize("parameters, words", [
    (params({"strategy": "MPS", "mpsConfig": {"multiUser": True}}), 'unknown field "sharing.mpsConfig.multiUser"'),
    (dict(params({"strategy": "MPS"}), metadata={"name": "x"}), 'unknown field "metadata"'),
    (params({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}, "mpsConfig": {}}),
     "mpsConfig is set with strategy TimeSlicing"),
    (params({"strategy": "MPS", "timeSlicingConfig": {"interval": "Long"}}), "timeSlicingConfig is set with strategy MPS"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": "50"}}), "must be a whole number"),
    (params({"strategy": "Exclusive"}), "the driver knows TimeSlicing and MPS"),
    (params({"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}, kind="MigDeviceConfig"),
     'unknown field "sharing.timeSlicingConfig"'),
    ({"apiVersion": "resource.nvidia.com/v1", "kind": "GpuConfig"}, "decodes only resource.nvidia.com/v1beta1"),
    ({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GPUConfig"}, "kind is 'GPUConfig'"),
])
def test_parameters_the_driver_refuses(parameters, words):
    problems = sharing_config.parameter_problems(parameters)
    assert problems and words in " ".join(problems)


def test_parameters_the_driver_accepts():
    assert sharing_config.parameter_problems(params({"strategy": "MPS", "mpsConfig": {
        "defaultActiveThreadPercentage": 0, "defaultPinnedDeviceMemoryLimit": "10Gi",
        "defaultPerDevicePinnedMemoryLimit": {"0": "5Gi", "GPU-1234": "4Gi"}}})) == []
    assert sharing_config.parameter_problems({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}) == []


def test_device_class_module_refuses_a_bad_nvidia_config_and_ignores_other_drivers():
    bad = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": params({"strategy": "MPS", "mpsConfig": {"x": 1}})}}]
    with pytest.raises(DeviceClassError) as err:
        validate_input([], bad)
    assert 'config[0].opaque.parameters: unknown field "sharing.mpsConfig.x"' in str(err.value)
    validate_input([], [{"opaque": {"driver": "gpu.example.com", "parameters": {"anything": True}}}])


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


# ----- the driver's checks of one config ---------------------------------------------------------

def test_required_gates_follow_the_strategy():
    assert sharing_config.required_gates(params({"strategy": "TimeSlicing"})) == ["TimeSlicingSettings"]
    assert sharing_config.required_gates(params({"strategy": "MPS"})) == ["MPSSupport"]
    assert sharing_config.required_gates({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}) == []
    assert sharing_config.required_gates(None) == []


def test_config_problems_are_prefixed_with_where_and_skip_other_drivers():
    bad = {"opaque": {"driver": "gpu.nvidia.com", "parameters": params({"strategy": "Exclusive"})}}
    other = {"opaque": {"driver": "gpu.example.com", "parameters": "anything"}}
    assert sharing_config.config_problems([other, None, bad], "spec.config") == [
        "spec.config[2].opaque.parameters: sharing.strategy is 'Exclusive'; the driver knows TimeSlicing and MPS"]
    assert sharing_config.config_problems(None, "config") == []


@pytest.mark.parametrize("parameters, words", [
    ("GpuConfig", "parameters must be an object"),
    (params({"strategy": "TimeSlicing", "timeSlicingConfig": None}), "sharing.timeSlicingConfig: must be an object"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": "4Gi"}}),
     "must be a map of GPU UUID or index to a quantity"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": {"first": "4Gi"}}}),
     "key 'first' is neither a device index nor a GPU-/MIG- UUID"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultPerDevicePinnedMemoryLimit": {"0": "1Ki"}}}),
     "defaultPerDevicePinnedMemoryLimit.0: '1Ki' is below 1Mi"),
    (params({"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": -1}}), "is -1; it must be 0 to 100"),
    (params({"strategy": 5}), "sharing.strategy: must be a string"),
])
def test_more_parameters_the_driver_refuses(parameters, words):
    assert words in " ".join(sharing_config.parameter_problems(parameters))


def test_a_config_without_sharing_or_with_mig_mps_is_accepted():
    assert sharing_config.parameter_problems({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "MigDeviceConfig"}) == []
    assert sharing_config.parameter_problems(params({"strategy": "MPS", "mpsConfig": {
        "defaultPerDevicePinnedMemoryLimit": {"MIG-abc": "1Mi"}}}, kind="MigDeviceConfig")) == []


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
MANAGED = {"app.kubernetes.io/managed-by": "dra.gpu.gpu_sharing"}


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


def test_claim_templates_ask_for_memory_of_a_memory_class():
    bodies = sharing_config.claim_templates(
        [{"name": "gpu-8gi", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"}], [MEMORY], MANAGED)
    assert bodies == [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                       "metadata": {"name": "gpu-8gi", "namespace": "team-a", "labels": MANAGED},
                       "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                           "deviceClassName": "nvidia-gpu-memory", "capacity": {"requests": {"memory": "8Gi"}}}}]}}}}]


def test_every_bad_template_is_named_at_once():
    with pytest.raises(sharing_config.SharingConfigError) as err:
        sharing_config.claim_templates([
            {"name": "Bad_Name", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"},
            {"name": "t", "namespace": "team-a", "class": "ts", "memory": "8Gi"},
            {"name": "u", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "lots", "extra": 1},
            {"name": "v", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "512Ki"},
            {"name": "v", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "1Gi"},
            "gpu-8gi"],
            [MEMORY, {"name": "ts", "strategy": "time_slicing"}])
    text = str(err.value)
    assert "gpu_sharing_claim_templates[0].name" in text
    assert "gpu_sharing_claim_templates[1].class is 'ts'; a claim template asks for memory from a class of " \
           "strategy memory in gpu_sharing_classes (nvidia-gpu-memory)" in text
    assert "gpu_sharing_claim_templates[2].extra is not a setting" in text
    assert "gpu_sharing_claim_templates[2].memory is 'lots'" in text
    assert "gpu_sharing_claim_templates[3].memory is '512Ki', below 1Mi" in text
    assert "gpu_sharing_claim_templates[4]: team-a/v is listed twice" in text
    assert "gpu_sharing_claim_templates[5] must be a map" in text


def test_a_template_without_any_memory_class_says_how_to_add_one():
    with pytest.raises(sharing_config.SharingConfigError, match="there is none: add one"):
        sharing_config.claim_templates([{"name": "t", "namespace": "a", "class": "x", "memory": "1Gi"}], [])


def live_template(name, memory, labels=None, namespace="team-a", device_class="nvidia-gpu-memory"):
    body = sharing_config.template_body({"name": name, "namespace": namespace, "class": device_class,
                                         "memory": memory}, MANAGED if labels is None else labels)
    # As the API server returns it: defaults filled in.
    body["spec"]["spec"]["devices"]["requests"][0]["exactly"].update(allocationMode="ExactCount", count=1)
    return body


def test_template_changes_replace_what_changed_prune_what_is_gone_and_leave_others_alone():
    wanted = [sharing_config.template_body({"name": n, "namespace": "team-a", "class": "nvidia-gpu-memory",
                                            "memory": m}, MANAGED)
              for n, m in (("same", "8Gi"), ("same-bytes", "8192Mi"), ("changed", "4Gi"), ("new", "8Gi"))]
    live = [live_template("same", "8Gi"), live_template("same-bytes", "8Gi"), live_template("changed", "8Gi"),
            live_template("gone", "8Gi"), live_template("theirs", "8Gi", labels={})]
    changes = sharing_config.template_changes(wanted, live, MANAGED)
    assert changes == {"delete": [{"namespace": "team-a", "name": "changed", "reason": "changed"},
                                  {"namespace": "team-a", "name": "gone", "reason": "no longer listed"}],
                       "problems": []}
    clash = sharing_config.template_changes([sharing_config.template_body(
        {"name": "theirs", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"}, MANAGED)],
        live, MANAGED)
    assert clash["problems"] == ["ResourceClaimTemplate team-a/theirs exists and was not made by this role; give "
                                 "the template another name, or delete that one"]


def test_a_template_larger_than_every_gpu_is_refused():
    devices = [{"attributes": {"type": "gpu"}, "capacity": {"memory": "23034Mi"}},
               {"attributes": {"type": "mig"}, "capacity": {"memory": "40Gi"}}]
    small, big = (sharing_config.template_body({"name": n, "namespace": "a", "class": "c", "memory": m})
                  for n, m in (("small", "23034Mi"), ("big", "24Gi")))
    assert sharing_config.template_memory_problems([small], devices) == []
    problems = sharing_config.template_memory_problems([small, big], devices)
    assert problems == ["gpu_sharing_claim_templates[1] (a/big): memory 24Gi is more than the largest GPU has "
                        "(23034Mi); no claim of it could ever be allocated"]
    assert sharing_config.template_memory_problems([big], []) == []
