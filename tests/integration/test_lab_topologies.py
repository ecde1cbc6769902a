"""Every topology in lab/topologies/ starts, and each node publishes exactly its GPUs.

Each topology gets a lab of its own (old_lab: a state directory under the test's tmp dir,
ports 10 above the test lab's) with LAB_DRIVER_MODE=always, where the simulator publishes
every GPU node's slices before `lab up` returns: a slice the real API server rejects fails
the start with the server's message. The expectations are read from the topology file
itself, not from the simulator's code, so a naming bug there cannot hide behind itself.
"""

import glob
import os
import re
import time

import pytest
import yaml
from kubernetes import client, config

import old_lab

DRIVER = "gpu.nvidia.com"
TOPOLOGIES = sorted(glob.glob(os.path.join(old_lab.ROOT, "lab", "topologies", "*.yml")))
# A lab takes base+43..base+81; ten above the test lab's, the two never share a port and
# stay within one block of 100 (old_lab's other labs sit 300 and 400 above).
PORT_BASE = int(os.environ.get("LAB_PORT_BASE", "26500")) + 10
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
FULL_NAME = re.compile(r"^gpu-(\d+)$")
# NVIDIA's driver v25.12+/v0.4: gpu-<minor>-mig-<profile without dots>-<GI profile id>-<start>
MIG_NAME = re.compile(r"^gpu-(\d+)-mig-([a-z0-9-]+)-(\d+)-(\d+)$")
# NVML's GPU-instance profile ids (1g, 1g+me, 1g with two memory slots, 2g, 3g, 4g, 7g).
GI_PROFILE_IDS = {19, 20, 15, 14, 9, 5, 0}
MEMORY_SLICE = re.compile(r"^memorySlice(\d+)$")


def _expected_nodes(path, registered):
    """{node: its GPU groups} for every node of the topology, matched to the registered
    nodes; node_groups by prefix and count, so the test does not restate the name padding."""
    with open(path) as handle:
        data = yaml.safe_load(handle) or {}
    expected = {str(entry["name"]): entry.get("gpus") or [] for entry in data.get("nodes") or []}
    rest = sorted(set(registered) - set(expected))
    for group in data.get("node_groups") or []:
        members = [name for name in rest if name.startswith(group["name_prefix"])]
        assert len(members) == int(group["count"]), "group %s: %d nodes registered, topology says %s" % (
            group["name_prefix"], len(members), group["count"])
        expected.update((name, group.get("gpus") or []) for name in members)
        rest = [name for name in rest if name not in members]
    assert sorted(expected) == sorted(registered), "nodes registered differ from the topology's"
    return expected


def _profile_part(profile):
    return re.sub(r"[^a-z0-9-]", "-", profile.lower().replace(".", "")).strip("-")


def _check_mig(node, minor, profiles, devices):
    where = "%s gpu %d" % (node, minor)
    assert sorted(_profile_part(d["attributes"]["profile"]["string"]) for d in devices) \
        == sorted(_profile_part(p) for p in profiles), where
    used = set()
    for device in devices:
        _minor, profile, gi, start = MIG_NAME.match(device["name"]).groups()
        assert profile == _profile_part(device["attributes"]["profile"]["string"]), device["name"]
        assert int(gi) in GI_PROFILE_IDS, "%s: %s is no NVML GPU-instance profile id" % (device["name"], gi)
        assert device["attributes"]["type"] == {"string": "mig"}, device["name"]
        slots = sorted(int(MEMORY_SLICE.match(key).group(1)) for key in device["capacity"] if MEMORY_SLICE.match(key))
        assert slots and slots == list(range(int(start), int(start) + len(slots))), \
            "%s: memory slices %s do not start at its placement" % (device["name"], slots)
        assert all(device["capacity"]["memorySlice%d" % s] == {"value": "1"} for s in slots), device["name"]
        assert not used & set(slots), "%s: %s shares memory slots with another partition" % (where, device["name"])
        used |= set(slots)


def _check_pool(node, groups, slices):
    """The node's pool holds exactly the topology's devices under NVIDIA's names."""
    if not groups:
        assert slices == [], "CPU-only node %s published %s" % (node, [s["metadata"]["name"] for s in slices])
        return
    assert slices, "GPU node %s published no %s slice" % (node, DRIVER)
    pools = {(s["spec"]["pool"]["name"], s["spec"]["pool"]["generation"], s["spec"]["pool"]["resourceSliceCount"])
             for s in slices}
    assert len(pools) == 1 and next(iter(pools))[0] == node and next(iter(pools))[2] == len(slices), (node, pools)
    # v0.4's ResourceSlice controller names slice i "<i in at least 5 hex digits>-<driver>-<node>-<random>"
    width = max(5, len("%x" % (len(slices) - 1)))
    assert sorted(s["metadata"]["name"][:-5] for s in slices) == \
        ["%0*x-%s-%s-" % (width, i, DRIVER, node) for i in range(len(slices))], (node, [s["metadata"]["name"] for s in slices])
    devices = [d for s in slices for d in s["spec"].get("devices") or []]
    names = [d["name"] for d in devices]
    assert len(set(names)) == len(names), "%s: duplicate device names %s" % (node, names)
    for name in names:
        assert len(name) <= 63 and DNS_LABEL.match(name), "%s: %r is not a DNS label" % (node, name)
        assert FULL_NAME.match(name) or MIG_NAME.match(name), "%s: %r is not an NVIDIA device name" % (node, name)
    by_minor = {}
    for device in devices:
        by_minor.setdefault(int((FULL_NAME.match(device["name"]) or MIG_NAME.match(device["name"])).group(1)),
                            []).append(device)
    minor = 0
    for group in groups:
        for _copy in range(int(group.get("count", 1))):
            found = by_minor.pop(minor, [])
            if group.get("mig"):
                assert len(found) == len(group["mig"]), "%s gpu %d: %d MIG devices, topology says %s" % (
                    node, minor, len(found), group["mig"])
                _check_mig(node, minor, group["mig"], found)
            else:
                assert [d["name"] for d in found] == ["gpu-%d" % minor], (node, minor, [d["name"] for d in found])
                assert found[0]["attributes"]["type"] == {"string": "gpu"}
            minor += 1
    assert not by_minor, "%s: devices the topology does not have: %s" % (
        node, [d["name"] for found in by_minor.values() for d in found])


def _check_in_place_update(kubeconfig, node, before):
    """A new MIG layout changes the node's one-slice pool: NVIDIA's driver (through its
    ResourceSlice controller) updates that slice in place and keeps the pool's generation."""
    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        core.patch_node(node, {"metadata": {"labels": {"nvidia.com/mig.config": "all-1g.5gb"}}})
        deadline = time.monotonic() + 60
        while core.read_node(node).metadata.labels.get("nvidia.com/mig.config.state") != "success":
            assert time.monotonic() < deadline, "the MIG layout was not applied within 60 s"
            time.sleep(0.5)
        after = custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices",
                                                  field_selector="spec.driver=%s,spec.nodeName=%s" % (DRIVER, node))["items"]
    finally:
        api.close()
    assert [s["metadata"]["name"] for s in after] == [s["metadata"]["name"] for s in before]
    assert [s["metadata"]["uid"] for s in after] == [s["metadata"]["uid"] for s in before], "deleted and recreated"
    assert after[0]["spec"]["pool"] == before[0]["spec"]["pool"], "the pool's generation changed"
    assert sorted(d["name"] for d in after[0]["spec"]["devices"]) == ["gpu-0-mig-1g5gb-19-%d" % i for i in range(7)]


@pytest.mark.parametrize("topology", TOPOLOGIES, ids=os.path.basename)
def test_topology_starts_and_every_node_publishes_its_gpus(topology, tmp_path):
    settings = {"topology": topology, "state_dir": str(tmp_path / "lab"), "port_base": PORT_BASE,
                "driver_mode": "always"}
    t0 = time.monotonic()
    try:
        kubeconfig = old_lab.start(None, **settings)
        up_seconds = time.monotonic() - t0
        api = config.new_client_from_config(config_file=kubeconfig)
        try:
            registered = [n.metadata.name for n in client.CoreV1Api(api).list_node().items]
            expected = _expected_nodes(topology, registered)
            items = client.CustomObjectsApi(api).list_cluster_custom_object(
                "resource.k8s.io", "v1", "resourceslices", field_selector="spec.driver=" + DRIVER)["items"]
        finally:
            api.close()
        by_node = {}
        for item in items:
            by_node.setdefault(item["spec"].get("nodeName"), []).append(item)
        assert set(by_node) <= set(expected), "slices of unknown nodes: %s" % sorted(set(by_node) - set(expected))
        for node, groups in sorted(expected.items()):
            _check_pool(node, [g for g in groups if int(g.get("count", 1)) > 0], by_node.get(node, []))
        if os.path.basename(topology) == "mixed-mig.yml":
            _check_in_place_update(kubeconfig, "gpu-a100-mig", by_node["gpu-a100-mig"])
        print("%s: lab up %.1fs, %d nodes, %d slices checked in %.1fs"
              % (os.path.basename(topology), up_seconds, len(expected), len(items), time.monotonic() - t0))
    finally:
        old_lab.stop(None, **settings)
