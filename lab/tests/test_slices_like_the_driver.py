"""The simulated driver changes slices with the API calls NVIDIA's driver (v0.4.1, through the
ResourceSlice controller it vendors) makes, recognises kubelet-plugin pods as NVIDIA's chart and
operator label them, and publishes the compute-domain driver's devices where that driver runs."""

import pytest

from labctl.apiserver.sim import agent, compute_domain, gpus, pool

from test_mig_and_rejections import _simulator

DS = ({"kind": "DaemonSet", "name": "ds"},)


def plugin_pod(node, labels=None, containers=("gpus", "compute-domains"), owners=DS, name=None):
    name = name or "plugin-" + node
    return {"metadata": {"namespace": "dra", "name": name, "uid": "uid-" + name, "ownerReferences": list(owners),
                         "labels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"} if labels is None else labels},
            "spec": {"nodeName": node, "containers": [{"name": c, "image": "pause"} for c in containers]},
            "status": {"phase": "Running"}}


def stored(sim, node, driver=gpus.DRIVER):
    return [s for s in sim.custom.stored if s["spec"]["nodeName"] == node and s["spec"]["driver"] == driver]


# ----- names, generations, in-place updates --------------------------------------------------


def test_a_first_publication_is_generation_one_under_the_controllers_name():
    sim = _simulator_plugin()
    sim.resync_plugins([plugin_pod("gpu-h100", containers=("gpus",))])
    (item,) = stored(sim, "gpu-h100")
    assert item["metadata"]["name"].startswith("00000-gpu.nvidia.com-gpu-h100-")
    assert item["spec"]["pool"] == {"name": "gpu-h100", "generation": 1, "resourceSliceCount": 1}


def test_a_change_to_a_one_slice_pool_updates_it_in_place_and_keeps_the_generation():
    sim = _simulator_plugin()
    sim.resync_plugins([plugin_pod("gpu-a100-mig", containers=("gpus",))])
    (before,) = stored(sim, "gpu-a100-mig")
    sim.custom.calls = []
    # the MIG manager lays the GPU out anew: the driver republishes the same pool
    groups = gpus.apply_mig_layout(sim.nodes["gpu-a100-mig"]["gpus"], "all-1g.5gb")
    sim._relayout("gpu-a100-mig", groups, "all-1g.5gb")
    (after,) = stored(sim, "gpu-a100-mig")
    assert sim.custom.calls == [("update", before["metadata"]["name"])]
    assert after["metadata"]["name"] == before["metadata"]["name"]
    assert after["spec"]["pool"]["generation"] == before["spec"]["pool"]["generation"] == 1
    assert sorted(d["name"] for d in after["spec"]["devices"]) == ["gpu-0-mig-1g5gb-19-%d" % i for i in range(7)]


def test_an_unchanged_pool_is_left_alone():
    sim = _simulator_plugin()
    pods = [plugin_pod("gpu-h100", containers=("gpus",))]
    sim.resync_plugins(pods)
    sim.custom.calls = []
    sim.publish("gpu-h100")
    sim.resync_plugins(pods)
    assert sim.custom.calls == []


def test_a_plugin_that_comes_back_starts_again_at_generation_one():
    sim = _simulator_plugin()
    pod = plugin_pod("gpu-h100", containers=("gpus",))
    sim.resync_plugins([pod])
    sim.handle_pod("DELETED", pod)
    assert stored(sim, "gpu-h100") == []
    sim.resync_plugins([pod])
    assert [s["spec"]["pool"]["generation"] for s in stored(sim, "gpu-h100")] == [1]


def slice_(name, generation, count, devices):
    pool_ = {"generation": generation, "resourceSliceCount": count}
    return {"metadata": {"name": name}, "spec": {"pool": pool_, "devices": devices}}


def test_the_plan_follows_the_controller():
    one, two = [{"name": "gpu-0"}], [{"name": "gpu-1"}]
    # nothing there: create, generation 1
    assert pool.plan([], [one]) == {"generation": 1, "delete": [], "update": [], "create": [0]}
    # one slice changes: update in place, same generation
    current = slice_("00000-gpu.nvidia.com-n-abcde", 4, 1, one)
    assert pool.plan([current], [two]) == {"generation": 4, "delete": [], "update": [(current, 0)], "create": []}
    # the same devices in another order: nothing to do
    both = slice_("00000-gpu.nvidia.com-n-abcde", 4, 1, one + two)
    assert pool.plan([both], [two + one])["update"] == []
    # a second slice is needed: a new generation, the kept slice updated to it
    steps = pool.plan([current], [one, two])
    assert steps["generation"] == 5 and steps["update"] == [(current, 0)] and steps["create"] == [1]
    # a slice named otherwise (an older driver's <node>-<driver>- names) or left behind at an
    # older generation is deleted
    old_name = slice_("n-gpu.nvidia.com-xyz12", 4, 1, one)
    stale = slice_("00001-gpu.nvidia.com-n-fghij", 3, 2, two)
    steps = pool.plan([old_name, stale, current], [one])
    assert steps["delete"] == [old_name["metadata"]["name"], stale["metadata"]["name"]] and steps["update"] == []


def test_index_prefixes_grow_past_five_hex_digits_only_when_needed():
    assert pool.generate_name(0, 1, "gpu.nvidia.com", "node-a") == "00000-gpu.nvidia.com-node-a-"
    assert pool.generate_name(10, 12, "gpu.nvidia.com", "n") == "0000a-gpu.nvidia.com-n-"
    assert pool.generate_name(0, 0x100001, "d", "n") == "000000-d-n-"
    assert pool.decode_index("0000a-gpu.nvidia.com-n-x", 12) == 10
    assert pool.decode_index("n-gpu.nvidia.com-x", 1) is None


def test_devices_come_in_no_fixed_order():
    orders = set()
    for _attempt in range(30):
        sim = _simulator_plugin()
        sim.resync_plugins([plugin_pod("gpu-a100-mig", containers=("gpus",))])
        orders.add(tuple(d["name"] for d in stored(sim, "gpu-a100-mig")[0]["spec"]["devices"]))
    assert len(orders) > 1, "four devices published thirty times in the same order"
    assert {frozenset(o) for o in orders} == {frozenset(d["name"] for d in sim.nodes["gpu-a100-mig"]["devices"])}


# ----- which pods are kubelet plugins ------------------------------------------------------


@pytest.mark.parametrize("labels", [
    {"dra-driver-nvidia-gpu-component": "kubelet-plugin", "app.kubernetes.io/name": "dra-driver-nvidia-gpu"},
    {"nvidia-dra-driver-gpu-component": "kubelet-plugin"},       # v25.x, or v0.4 with that nameOverride
    {"my-gpus-component": "kubelet-plugin"},                      # any other nameOverride
    {"app": "nvidia-dra-driver-kubelet-plugin", "app.kubernetes.io/name": "nvidia-dra-driver"},  # v26.7 operator
])
def test_plugin_pods_are_known_by_the_labels_nvidia_gives_them(labels):
    assert agent.is_plugin_pod(plugin_pod("n", labels))


def test_with_selector_labels_overridden_the_daemonset_name_and_containers_tell():
    owners = [{"kind": "DaemonSet", "name": "dra-driver-nvidia-gpu-kubelet-plugin"}]
    assert agent.is_plugin_pod(plugin_pod("n", {"team": "gpus"}, owners=owners))
    assert not agent.is_plugin_pod(plugin_pod("n", {"team": "gpus"}, owners=owners, containers=("sidecar",)))
    assert not agent.is_plugin_pod(plugin_pod("n", {"team": "gpus"}))


@pytest.mark.parametrize("labels,owners", [
    ({"dra-driver-nvidia-gpu-component": "controller"}, DS),      # the chart's controller
    ({"app.kubernetes.io/component": "kubelet-plugin"}, DS),
    ({"-component": "kubelet-plugin"}, DS),
    ({"dra-driver-nvidia-gpu-component": "kubelet-plugin"}, []),  # a bare pod, no DaemonSet
    ({"dra-driver-nvidia-gpu-component": "kubelet-plugin"}, [{"kind": "ReplicaSet", "name": "x"}]),
])
def test_other_pods_are_not_plugins(labels, owners):
    assert not agent.is_plugin_pod(plugin_pod("n", labels, owners=owners))


# ----- compute-domain.nvidia.com -------------------------------------------------------------


def test_a_plugin_pod_with_compute_domains_publishes_channel_0_and_daemon_0_in_a_pool_of_their_own():
    sim = _simulator_plugin()
    pod = plugin_pod("gpu-h100")
    sim.resync_plugins([pod])
    (gpu_slice,) = stored(sim, "gpu-h100")
    (cd_slice,) = stored(sim, "gpu-h100", compute_domain.DRIVER)
    assert cd_slice["metadata"]["name"].startswith("00000-compute-domain.nvidia.com-gpu-h100-")
    assert cd_slice["spec"]["pool"] == {"name": "gpu-h100", "generation": 1, "resourceSliceCount": 1}
    devices = sorted(cd_slice["spec"]["devices"], key=lambda d: d["name"])
    assert devices == [{"name": "channel-0", "attributes": {"type": {"string": "channel"}, "id": {"int": 0}}},
                       {"name": "daemon-0", "attributes": {"type": {"string": "daemon"}, "id": {"int": 0}}}]
    assert {d["name"] for d in gpu_slice["spec"]["devices"]} == {"gpu-0", "gpu-1"}
    # the pod goes: both drivers' slices go
    sim.handle_pod("DELETED", pod)
    assert sim.custom.stored == []


@pytest.mark.parametrize("containers,drivers", [
    (("gpus",), {gpus.DRIVER}),
    (("compute-domains",), {compute_domain.DRIVER}),
    (("gpus", "compute-domains"), {gpus.DRIVER, compute_domain.DRIVER}),
    (("plugin",), {gpus.DRIVER}),    # a hand-made stand-in plugin pod: the GPU driver alone
])
def test_the_containers_say_which_drivers_run(containers, drivers):
    sim = _simulator_plugin()
    sim.resync_plugins([plugin_pod("gpu-h100", containers=containers)])
    assert {s["spec"]["driver"] for s in sim.custom.stored} == drivers


def test_the_device_plugin_withholds_gpus_not_compute_domains():
    sim = _simulator_plugin()
    device_plugin = {"metadata": {"namespace": "gpu-operator", "name": "dp", "ownerReferences": list(DS),
                                  "labels": {"app": "nvidia-device-plugin-daemonset"}},
                     "spec": {"nodeName": "gpu-h100"}, "status": {"phase": "Running"}}
    sim.resync_plugins([plugin_pod("gpu-h100"), device_plugin])
    assert {s["spec"]["driver"] for s in sim.custom.stored} == {compute_domain.DRIVER}


def test_always_mode_starts_with_gpus_only(tmp_path):
    sim = _simulator(tmp_path, "always")
    sim.register_nodes()
    assert sim.check_slices() == []
    sim.resync_plugins([])
    assert {s["spec"]["driver"] for s in sim.custom.stored} == {gpus.DRIVER}
    sim.resync_plugins([plugin_pod("gpu-h100")])
    assert len(stored(sim, "gpu-h100", compute_domain.DRIVER)) == 1


def _simulator_plugin():
    sim = _simulator(None, "plugin")
    sim.register_nodes()
    return sim
