"""Pure logic of the lab's simulated driver: topologies and the devices they publish."""

import os

import pytest

from labctl.apiserver.sim import gpus, topology

TOPOLOGIES = os.path.join(os.path.dirname(__file__), "..", "topologies")


def _write(tmp_path, text):
    path = tmp_path / "topo.yml"
    path.write_text(text)
    return str(path)


def test_default_topology_is_the_seed_example():
    nodes = {n["name"]: n for n in topology.load(os.path.join(TOPOLOGIES, "default.yml"))}
    assert sorted(nodes) == ["node-a", "node-b"]
    assert [d["name"] for d in nodes["node-a"]["devices"]] == ["gpu-0", "gpu-1"]
    assert {d["attributes"]["productName"]["string"] for d in nodes["node-b"]["devices"]} == {"NVIDIA L4"}
    memory = {n: {d["capacity"]["memory"]["value"] for d in node["devices"]} for n, node in nodes.items()}
    assert memory == {"node-a": {"23028Mi"}, "node-b": {"23034Mi"}}


def test_uuids_are_stable_and_unique():
    first = topology.load(os.path.join(TOPOLOGIES, "default.yml"))
    second = topology.load(os.path.join(TOPOLOGIES, "default.yml"))
    uuids = [d["attributes"]["uuid"]["string"] for n in first for d in n["devices"]]
    assert uuids == [d["attributes"]["uuid"]["string"] for n in second for d in n["devices"]]
    assert len(set(uuids)) == len(uuids)
    assert all(u.startswith("GPU-") and len(u) == 40 for u in uuids)


def test_attribute_types_match_the_real_driver():
    device = gpus.node_devices("n", [{"model": "A100-40GB", "count": 1}])[0]
    kinds = {k: next(iter(v)) for k, v in device["attributes"].items()}
    assert kinds["type"] == kinds["uuid"] == kinds["productName"] == kinds["brand"] == "string"
    assert kinds["cudaComputeCapability"] == kinds["driverVersion"] == kinds["cudaDriverVersion"] == "version"
    assert kinds["resource.kubernetes.io/pciBusID"] == kinds["resource.kubernetes.io/pcieRoot"] == "string"


def test_no_released_driver_attribute_is_invented():
    """The simulator publishes v0.4.1's attributes: numaNode came with v0.5.0, index and minor were
    v25.3's; a v0.4.1 full GPU carries exactly these keys (addressingMode where the GPU has HMM)."""
    device = gpus.node_devices("n", [{"model": "L4", "count": 1}])[0]
    assert set(device["attributes"]) == {
        "type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability", "driverVersion",
        "cudaDriverVersion", "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot"}
    for node in topology.load(os.path.join(TOPOLOGIES, "mixed-mig.yml")):
        for device in node["devices"]:
            assert not {"resource.kubernetes.io/numaNode", "index", "minor"} & set(device["attributes"])


@pytest.mark.parametrize("model,expected", [
    ("A10", "23028Mi"), ("L4", "23034Mi"), ("T4", "15Gi"), ("H100-80GB", "81559Mi"),
    ("A100-40GB", "40Gi"), ("A100-80GB", "80Gi"), ("H200", "143771Mi")])
def test_memory_is_nvmls_byte_total_as_the_driver_sends_it(model, expected):
    """The driver publishes NVML's total in bytes as a BinarySI quantity; the API server shows
    the largest suffix that divides it: 23028Mi for an A10, not a round 24Gi."""
    device = gpus.node_devices("n", [{"model": model, "count": 1}])[0]
    assert device["capacity"]["memory"] == {"value": expected}
    assert gpus.to_bytes(expected) == gpus.MODELS[model]["memory"]


def test_memory_below_the_marketing_figure_fails_a_round_selector():
    for model in ("A10", "L4"):
        assert gpus.MODELS[model]["memory"] < 24 * 1024 ** 3
    assert gpus.MODELS["H100-80GB"]["memory"] < 80 * 1024 ** 3


@pytest.mark.parametrize("count,text", [(0, "0"), (1, "1"), (1023, "1023"), (1024, "1Ki"), (1025, "1025"),
                                        (24146608128, "23028Mi"), (3 * 1024 ** 3, "3Gi"), (1536 * 1024, "1536Ki")])
def test_binary_si_writes_quantities_as_kubernetes_does(count, text):
    assert gpus.binary_si(count) == text


def test_a_topology_memory_override_is_published_in_the_same_form(tmp_path):
    path = _write(tmp_path, "nodes: [{name: x, gpus: [{model: L4, memory: 24152899584}, {model: A10, memory: 20Gi}]}]")
    assert [d["capacity"]["memory"]["value"] for d in topology.load(path)[0]["devices"]] == ["23034Mi", "20Gi"]


def test_mig_devices_are_named_and_sized_like_the_driver():
    nodes = topology.load(os.path.join(TOPOLOGIES, "mixed-mig.yml"))
    mig_node = [n for n in nodes if n["name"] == "gpu-a100-mig"][0]
    names = [d["name"] for d in mig_node["devices"]]
    # NVML places the 3g on slots 4-7: with it on 0-3 the two 1g would need slot 7, where
    # no 1g may start.
    assert names == ["gpu-0-mig-3g20gb-9-4", "gpu-0-mig-2g10gb-14-0", "gpu-0-mig-1g5gb-19-2",
                     "gpu-0-mig-1g5gb-19-3"]
    small = mig_node["devices"][2]
    assert small["attributes"]["type"] == {"string": "mig"}
    assert small["attributes"]["uuid"]["string"].startswith("MIG-")
    assert small["attributes"]["parentUUID"]["string"] == gpus.gpu_uuid("gpu-a100-mig", 0)
    assert small["capacity"]["memory"] == {"value": "4864Mi"}
    assert [n for n in nodes if n["name"] == "cpu-0"][0]["devices"] == []


def test_mig_profiles_that_do_not_fit_are_refused(tmp_path):
    path = _write(tmp_path, "nodes: [{name: x, gpus: [{model: A100-40GB, mig: [7g.40gb, 1g.5gb]}]}]")
    with pytest.raises(gpus.TopologyError, match="do not fit"):
        topology.load(path)


def test_unknown_model_names_the_known_ones(tmp_path):
    path = _write(tmp_path, "nodes: [{name: x, gpus: [{model: GTX480}]}]")
    with pytest.raises(gpus.TopologyError, match="known models: .*A10"):
        topology.load(path)


def test_scale_topology_has_a_thousand_nodes_of_eight():
    nodes = topology.load(os.path.join(TOPOLOGIES, "scale-1000.yml"))
    assert len(nodes) == 1000 and nodes[0]["name"] == "gpu-node-000" and nodes[-1]["name"] == "gpu-node-999"
    assert sum(len(n["devices"]) for n in nodes) == 8000


def test_more_than_128_devices_split_into_one_pool_of_several_slices():
    devices = [{"name": "gpu-%d" % i} for i in range(300)]
    specs = gpus.slice_specs("big", devices, generation=3)
    assert [len(s["devices"]) for s in specs] == [128, 128, 44]
    assert {(s["pool"]["name"], s["pool"]["generation"], s["pool"]["resourceSliceCount"]) for s in specs} \
        == {("big", 3, 3)}


def test_too_many_nodes_are_refused(tmp_path):
    path = _write(tmp_path, "node_groups: [{name_prefix: n-, count: 1001}]")
    with pytest.raises(gpus.TopologyError, match="at most 1000"):
        topology.load(path)
