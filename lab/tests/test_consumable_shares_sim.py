"""The simulated NVIDIA plugin publishes what NVIDIA's 0.5.0 kubelet plugin publishes in each
ConsumableShares mode, decides like it from the plugin pod's CONSUMABLE_SHARES and FEATURE_GATES,
and the simulated kubelet prepares claims that share a device as 0.5.0 does.

The expected entries are written out from NVIDIA's source (main at 95932046, treated as 0.5.0:
cmd/gpu-kubelet-plugin/consumable_shares.go, main.go, deviceinfo.go) and were compared by hand
with the real plugin built from it (docs/testing.md, "The simulator and NVIDIA's real plugin")."""

import copy
import os

import pytest

from labctl.apiserver import config
from labctl.apiserver.sim import agent, gpus, opaque, topology

from test_mig_and_rejections import FakeCore, FakeServer
from kubernetes import client

TOPOLOGY = os.path.join(os.path.dirname(__file__), "..", "topologies", "consumable-shares.yml")
V05 = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"
V041 = "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"
GATE = "ConsumableShares=true"

A10_ATTRIBUTES = {
    "type": {"string": "gpu"}, "uuid": {"string": gpus.gpu_uuid("gpu-shared", 0)},
    "productName": {"string": "NVIDIA A10"}, "brand": {"string": "Nvidia"}, "architecture": {"string": "Ampere"},
    "cudaComputeCapability": {"version": "8.6.0"}, "driverVersion": {"version": "580.126.20"},
    "cudaDriverVersion": {"version": "13.0.0"}, "resource.kubernetes.io/pciBusID": {"string": "0000:10:00.0"},
    "resource.kubernetes.io/pcieRoot": {"string": "pci0000:0f"}, "resource.kubernetes.io/numaNode": {"int": 0}}
WHOLE = "23028Mi"
EXPECTED_A10 = {
    "memory": {"name": "gpu-0", "attributes": A10_ATTRIBUTES, "allowMultipleAllocations": True, "capacity": {
        "memory": {"value": WHOLE, "requestPolicy": {
            "default": WHOLE, "validRange": {"min": "1Mi", "max": WHOLE, "step": "1Mi"}}}}},
    "unlimited": {"name": "gpu-0", "attributes": A10_ATTRIBUTES, "allowMultipleAllocations": True, "capacity": {
        "memory": {"value": WHOLE, "requestPolicy": {
            "default": "0", "validRange": {"min": "0", "max": WHOLE, "step": "1Mi"}}}}},
    "4": {"name": "gpu-0", "attributes": A10_ATTRIBUTES, "allowMultipleAllocations": True, "capacity": {
        "memory": {"value": WHOLE, "requestPolicy": {
            "default": "0", "validRange": {"min": "0", "max": WHOLE, "step": "1Mi"}}},
        "shares": {"value": "4", "requestPolicy": {
            "default": "1", "validRange": {"min": "1", "max": "4", "step": "1"}}}}},
}


def _node():
    (node,) = topology.load(TOPOLOGY)
    return node


@pytest.mark.parametrize("mode", sorted(EXPECTED_A10))
def test_each_mode_publishes_the_entries_of_nvidias_0_5_0(mode):
    node = _node()
    a10, l4 = gpus.driver_devices(node["devices"], node["gpus"], mode, numa=True)
    assert a10 == EXPECTED_A10[mode]
    assert l4["capacity"]["memory"]["value"] == "23034Mi" and l4["allowMultipleAllocations"] is True


def test_without_a_mode_0_5_0_adds_only_the_numa_node_and_0_4_nothing():
    node = _node()
    a10 = gpus.driver_devices(node["devices"], node["gpus"], None, numa=True)[0]
    assert a10 == {"name": "gpu-0", "attributes": A10_ATTRIBUTES, "capacity": {"memory": {"value": WHOLE}}}
    assert gpus.driver_devices(node["devices"], node["gpus"]) == node["devices"]


def test_memory_is_rounded_down_to_a_mebibyte_and_mig_devices_share_too():
    devices = gpus.node_devices("n", [{"model": "L4", "memory": "24000000000"},
                                      {"model": "A100-40GB", "mig": ["3g.20gb"]}])
    gpu, mig = gpus.driver_devices(devices, [{"model": "L4", "numa_node": None}, {"model": "A100-40GB"}], "memory",
                                   numa=True)
    assert gpu["capacity"]["memory"]["value"] == "22888Mi"      # 24000000000 B = 22888.18 MiB
    assert gpu["capacity"]["memory"]["requestPolicy"]["validRange"]["max"] == "22888Mi"
    assert "resource.kubernetes.io/numaNode" not in gpu["attributes"]   # sysfs said -1
    assert mig["allowMultipleAllocations"] is True
    assert mig["capacity"]["memory"]["requestPolicy"]["default"] == "19968Mi"
    assert mig["capacity"]["memorySlice0"] == {"value": "1"}            # no policy on the rest
    assert mig["attributes"]["resource.kubernetes.io/numaNode"] == {"int": 0}


@pytest.mark.parametrize("image,release", [
    (V05, (0, 5)), (V041, (0, 4)), ("nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0", (25, 12)),
    ("nvcr.io/nvidia/dra-driver-nvidia-gpu:v0.5.0@sha256:ab", (0, 5)), ("registry.k8s.io/pause:3.10", None),
    ("registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:latest", None), ("localhost:5000/dra-driver", None)])
def test_the_release_comes_from_nvidias_driver_image_tag(image, release):
    assert gpus.plugin_release(image) == release
    assert gpus.has_release_05(release) == (release in ((0, 5),))


def test_shares_are_written_as_decimal_quantities():
    assert [gpus.decimal_si(n) for n in (1, 4, 999, 1000, 2000000)] == ["1", "4", "999", "1k", "2M"]


def _pod(env=None, image=V05, name="plugin-gpu-shared"):
    container = {"name": "gpus", "image": image}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {"metadata": {"namespace": "dra", "name": name, "uid": "uid-" + name,
                         "ownerReferences": [{"kind": "DaemonSet", "name": "ds"}],
                         "labels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}},
            "spec": {"nodeName": "gpu-shared", "containers": [container]}, "status": {"phase": "Running"}}


def test_a_stand_in_chart_pod_counts_as_the_image_it_stands_for():
    pod = _pod({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": GATE}, image="registry.k8s.io/pause:3.10")
    assert agent.plugin_settings(pod) == ({"shares": "memory", "numa": False}, None)
    pod["metadata"]["annotations"] = {"stand-in.dra.gpu/image": V05}
    assert agent.plugin_settings(pod) == ({"shares": "memory", "numa": True}, None)


@pytest.mark.parametrize("env,image,shares,numa,error", [
    ({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": GATE}, V05, "memory", True, None),
    ({"CONSUMABLE_SHARES": "4", "FEATURE_GATES": GATE}, V05, "4", True, None),
    ({"CONSUMABLE_SHARES": "unlimited", "FEATURE_GATES": GATE}, "pause", "unlimited", False, None),
    ({"FEATURE_GATES": GATE}, V05, None, True, None),                          # the flag's default: disabled
    ({"CONSUMABLE_SHARES": "disabled", "FEATURE_GATES": GATE}, V05, None, True, None),
    ({"CONSUMABLE_SHARES": "memory"}, V05, None, True,
     "invalid CLI flags: --consumable-shares requires feature gate ConsumableShares to be enabled"),
    ({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": "ConsumableShares=false"}, V05, None, True,
     "invalid CLI flags: --consumable-shares requires feature gate ConsumableShares to be enabled"),
    ({"CONSUMABLE_SHARES": "0", "FEATURE_GATES": GATE}, V05, None, True,
     "invalid CLI flags: invalid value for --consumable-shares: \"0\" (must be 'disabled', 'memory', 'unlimited', "
     "or a positive integer)"),
    ({"CONSUMABLE_SHARES": "", "FEATURE_GATES": GATE}, V05, None, True,
     "invalid CLI flags: invalid value for --consumable-shares: \"\""),
    ({"CONSUMABLE_SHARES": "+4", "FEATURE_GATES": GATE}, V05, "+4", True, None),   # strconv.Atoi takes it
    ({"CONSUMABLE_SHARES": "Memory", "FEATURE_GATES": GATE}, V05, None, True, "invalid CLI flags: invalid value"),
    ({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": GATE}, V041, None, False,
     "unrecognized feature gate: ConsumableShares"),
    ({"CONSUMABLE_SHARES": "memory"}, V041, None, False, None),                # 0.4.x has no such flag
])
def test_the_plugin_pod_decides_as_nvidias_flags_do(env, image, shares, numa, error):
    settings, refused = agent.plugin_settings(_pod(env, image))
    assert (settings["shares"], settings["numa"]) == (shares, numa)
    if error is None:
        assert refused is None
    else:
        assert refused is not None and refused.startswith(error), refused


class DroppingServer(FakeServer):
    """An API server with DRAConsumableCapacity off (1.35): it stores slices without
    allowMultipleAllocations and requestPolicy, and answers with what it stored."""

    @staticmethod
    def _drop(spec):
        spec = copy.deepcopy(spec)
        for device in spec["devices"]:
            device.pop("allowMultipleAllocations", None)
            for capacity in device.get("capacity", {}).values():
                capacity.pop("requestPolicy", None)
        return spec

    def create_cluster_custom_object(self, group, version, plural, body, dry_run=None):
        body = dict(body, spec=self._drop(body["spec"]))
        super().create_cluster_custom_object(group, version, plural, body, dry_run)
        return copy.deepcopy(self.stored[-1]) if not dry_run else body

    def replace_cluster_custom_object(self, group, version, plural, name, body):
        body = dict(body, spec=self._drop(body["spec"]))
        super().replace_cluster_custom_object(group, version, plural, name, body)
        return copy.deepcopy([s for s in self.stored if s["metadata"]["name"] == name][0])


def _simulator(server=None, mode="plugin", shares=None):
    sim = agent.Simulator(client.ApiClient(), topology.load(TOPOLOGY), mode, "v1.36.3", consumable_shares=shares)
    sim.core, sim.custom = FakeCore(), server or FakeServer()
    sim.register_nodes()
    return sim


def _published(sim):
    (item,) = sim.custom.stored
    return {d["name"]: d for d in item["spec"]["devices"]}


def test_a_new_plugin_pod_with_another_mode_updates_the_slice_in_place():
    sim = _simulator()
    sim.resync_plugins([_pod({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": GATE})])
    (before,) = sim.custom.stored
    assert _published(sim)["gpu-0"] == EXPECTED_A10["memory"]
    sim.custom.calls = []
    sim.handle_pod("DELETED", _pod({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": GATE}))
    sim.custom.calls = []
    sim.resync_plugins([_pod({"CONSUMABLE_SHARES": "4", "FEATURE_GATES": GATE}, name="plugin-2")])
    assert _published(sim)["gpu-0"] == EXPECTED_A10["4"]
    assert [call for call, _name in sim.custom.calls] == ["create"]
    sim.custom.calls = []
    sim.resync_plugins([_pod({"CONSUMABLE_SHARES": "unlimited", "FEATURE_GATES": GATE}, name="plugin-2")])
    # the same pod name with other settings (as a test may fake it): one update, same generation
    (after,) = sim.custom.stored
    assert sim.custom.calls == [("update", after["metadata"]["name"])]
    assert after["spec"]["pool"]["generation"] == 1
    assert _published(sim)["gpu-0"] == EXPECTED_A10["unlimited"]
    assert before["metadata"]["name"] != after["metadata"]["name"]


def test_a_plugin_that_refuses_its_flags_publishes_nothing():
    sim = _simulator()
    sim.resync_plugins([_pod({"CONSUMABLE_SHARES": "memory"})])
    assert sim.custom.stored == []


def test_always_mode_publishes_as_a_0_5_0_plugin_with_the_gate_on():
    sim = _simulator(mode="always", shares="4")
    assert sim.check_slices() == []
    assert _published(sim)["gpu-0"] == EXPECTED_A10["4"]


def test_fields_the_api_server_drops_are_logged_once_and_not_fought_over(caplog):
    sim = _simulator(DroppingServer())
    pods = [_pod({"CONSUMABLE_SHARES": "memory", "FEATURE_GATES": GATE})]
    sim.resync_plugins(pods)
    assert _published(sim)["gpu-0"] == {"name": "gpu-0", "attributes": A10_ATTRIBUTES,
                                        "capacity": {"memory": {"value": WHOLE}}}
    sim.custom.calls = []
    sim.resync_plugins(pods)
    sim.publish("gpu-shared")
    assert sim.custom.calls == []
    dropped = [r.getMessage() for r in caplog.records if "dropped by the apiserver" in r.getMessage()]
    assert len(dropped) == 1 and "DRAConsumableCapacity" in dropped[0], dropped


# ----- prepare -----------------------------------------------------------------------------


def _claim(uid, device="gpu-0", share="s", configs=()):
    result = {"driver": "gpu.nvidia.com", "pool": "gpu-shared", "device": device, "request": "gpu"}
    if share:
        result.update(shareID=share, consumedCapacity={"memory": "8Gi"})
    return {"metadata": {"name": "c-" + uid, "namespace": "ns", "uid": uid},
            "status": {"allocation": {"devices": {"results": [result], "config": list(configs)}}}}


def _mps():
    return {"source": "FromClaim", "opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": opaque.GROUP_VERSION, "kind": "GpuConfig", "sharing": {"strategy": "MPS"}}}}


def test_claims_sharing_a_device_are_prepared_when_their_configs_agree():
    devices = {d["name"]: d for d in _node()["devices"]}
    prepared = {}
    for uid in ("a", "b"):
        claim = _claim(uid, share=uid)
        effective = opaque.prepare(claim, devices, {}, shares=True)
        opaque.check_overlap(claim, effective, prepared, shares=True)
        prepared[uid] = effective
    assert prepared == {"a": {"gpu-0": None}, "b": {"gpu-0": None}}


def test_overlapping_claims_are_refused_as_0_5_0_refuses_them():
    devices = {d["name"]: d for d in _node()["devices"]}
    gates = {"MPSSupport": True, "TimeSlicingSettings": True}
    prepared = {"a": {"gpu-0": None}}
    with pytest.raises(opaque.OverlapError, match="requested device gpu-0 is already allocated to different claim a"):
        opaque.check_overlap(_claim("b"), {"gpu-0": None}, prepared, shares=False)
    sliced = {"source": "FromClaim", "opaque": {"driver": "gpu.nvidia.com", "parameters": {
        "apiVersion": opaque.GROUP_VERSION, "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}}}}
    effective = opaque.prepare(_claim("b", configs=[sliced]), devices, gates, shares=True)
    with pytest.raises(opaque.OverlapError, match="gpu-0 has conflicting configuration with already prepared claim a"):
        opaque.check_overlap(_claim("b"), effective, prepared, shares=True)
    with pytest.raises(opaque.PrepareError, match="MPS sharing is not supported when consumable shares is enabled"):
        opaque.prepare(_claim("c", configs=[_mps()]), devices, gates, shares=True)
    assert opaque.prepare(_claim("c", configs=[_mps()]), devices, gates, shares=False)["gpu-0"]["strategy"] == "MPS"
    message = opaque.kubelet_message(_claim("b"), opaque.OverlapError("unable to prepare claim b: x"))
    assert message.endswith("error preparing devices for claim ns/c-b:b: unable to prepare claim b: x")


# ----- LAB_CONSUMABLE_SHARES ------------------------------------------------------------------


@pytest.mark.parametrize("value,mode,expected", [
    ("memory", "always", "memory"), ("unlimited", "always", "unlimited"), ("4", "always", "4"), ("+4", "always", "+4"),
    ("", "always", None), ("disabled", "plugin", None)])
def test_lab_consumable_shares_is_read_for_always_mode(monkeypatch, value, mode, expected):
    monkeypatch.setenv("LAB_CONSUMABLE_SHARES", value)
    assert config._consumable_shares(mode) == expected


@pytest.mark.parametrize("value,mode,message", [
    ("memory", "plugin", "needs LAB_DRIVER_MODE=always"),
    ("0", "always", "memory, unlimited or a positive number"),
    ("8Gi", "always", "memory, unlimited or a positive number"),
    (" 4", "always", "memory, unlimited or a positive number"),
    ("Memory", "always", "memory, unlimited or a positive number")])
def test_lab_consumable_shares_refuses_what_would_not_work(monkeypatch, value, mode, message):
    monkeypatch.setenv("LAB_CONSUMABLE_SHARES", value)
    with pytest.raises(config.ConfigError, match=message):
        config._consumable_shares(mode)


class ClaimServer(FakeServer):
    """Slices as FakeServer keeps them, and the claims of the pods below."""

    def __init__(self, claims):
        super().__init__()
        self.claims = claims

    def get_namespaced_custom_object(self, group, version, namespace, plural, name):
        return copy.deepcopy(self.claims[name])


class PodCore(FakeCore):
    def __init__(self):
        super().__init__()
        self.statuses, self.events = [], []

    def patch_namespaced_pod_status(self, name, namespace, body):
        self.statuses.append((name, body["status"].get("phase")))

    def create_namespaced_event(self, namespace, body):
        self.events.append(body["message"])


def _workload(name):
    return {"metadata": {"namespace": "ns", "name": name, "uid": "pod-" + name},
            "spec": {"nodeName": "gpu-shared", "restartPolicy": "Always", "containers": [{"name": "main"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "c-" + name}]},
            "status": {"phase": "Pending"}}


@pytest.mark.parametrize("mode", ["memory", None])
def test_the_simulated_kubelet_prepares_shared_claims_and_unprepares_them_when_pods_go(mode):
    sim = _simulator(ClaimServer({"c-" + n: _claim(n, share="share-" + n if mode else None) for n in "ab"}))
    sim.core = PodCore()
    env = {"CONSUMABLE_SHARES": mode, "FEATURE_GATES": GATE} if mode else {"FEATURE_GATES": GATE}
    sim.resync_plugins([_pod(env)])
    sim.handle_pod("ADDED", _workload("a"))
    sim.handle_pod("ADDED", _workload("b"))
    if mode:
        # both claims hold gpu-0 at once: both pods run
        assert sim.core.statuses == [("a", "Running"), ("b", "Running")]
        assert sim.prepared_claims["gpu-shared"] == {"a": {"gpu-0": None}, "b": {"gpu-0": None}}
        return
    # without ConsumableShares NVIDIA's plugin refuses the second claim of one device
    assert sim.core.statuses == [("a", "Running"), ("b", "Pending")]
    assert sim.core.events[0].endswith("unable to prepare claim b: requested device gpu-0 is already allocated to "
                                       "different claim a")
    sim.handle_pod("DELETED", _workload("a"))
    assert sim.prepared_claims["gpu-shared"] == {}
    sim.handle_pod("MODIFIED", _workload("b"))   # the kubelet retries
    assert sim.core.statuses[-1] == ("b", "Running")
