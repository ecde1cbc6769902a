"""MIG devices named as NVIDIA's driver names them, and slices the API server rejects
surfacing in `lab up` and `lab status` instead of only in the simulator's log."""

import copy
import json
import os
import re
import types

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from labctl.apiserver import cluster
from labctl.apiserver.processes import wait_for
from labctl.apiserver.sim import agent, gpus, report, topology

TOPOLOGIES = os.path.join(os.path.dirname(__file__), "..", "topologies")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# What kube-apiserver 1.35 answered for the old names (the log).
DOTS_MESSAGE = ('ResourceSlice.resource.k8s.io "gpu-a100-mig-gpu.nvidia.com-x" is invalid: '
                'spec.devices[0].name: Invalid value: "gpu-0-mig-3g.20gb-0-0": must not contain dots')


def _mig(model, profiles):
    return gpus.node_devices("n", [{"model": model, "mig": profiles}])


def _slots(device):
    return sorted(int(key[len("memorySlice"):]) for key in device["capacity"] if key.startswith("memorySlice"))


# ----- naming ----------------------------------------------------------------------------


def test_mixed_mig_names_follow_nvidias_driver():
    nodes = {n["name"]: n for n in topology.load(os.path.join(TOPOLOGIES, "mixed-mig.yml"))}
    devices = nodes["gpu-a100-mig"]["devices"]
    assert [d["name"] for d in devices] == ["gpu-0-mig-3g20gb-9-4", "gpu-0-mig-2g10gb-14-0",
                                            "gpu-0-mig-1g5gb-19-2", "gpu-0-mig-1g5gb-19-3"]
    assert [_slots(d) for d in devices] == [[4, 5, 6, 7], [0, 1], [2], [3]]
    assert all(d["capacity"]["memorySlice%d" % s] == {"value": "1"} for d in devices for s in _slots(d))
    assert [d["attributes"]["profile"]["string"] for d in devices] == ["3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb"]
    assert [d["name"] for d in nodes["gpu-h100"]["devices"]] == ["gpu-0", "gpu-1"]


def test_every_provided_topology_has_only_dns_label_device_names():
    for name in sorted(os.listdir(TOPOLOGIES)):
        for node in topology.load(os.path.join(TOPOLOGIES, name)):
            for device in node["devices"]:
                assert DNS_LABEL.match(device["name"]) and len(device["name"]) <= 63, (name, device["name"])


def test_a_layout_packed_in_order_keeps_its_counted_starts():
    devices = _mig("A100-40GB", ["4g.20gb", "2g.10gb", "1g.5gb"])
    assert [d["name"] for d in devices] == ["gpu-0-mig-4g20gb-5-0", "gpu-0-mig-2g10gb-14-4", "gpu-0-mig-1g5gb-19-6"]
    whole = _mig("H100-80GB", ["7g.80gb"])[0]
    assert whole["name"] == "gpu-0-mig-7g80gb-0-0" and _slots(whole) == list(range(8))
    sevens = _mig("A100-80GB", ["1g.10gb"] * 7)
    assert [d["name"] for d in sevens] == ["gpu-0-mig-1g10gb-19-%d" % i for i in range(7)]


def test_the_gi_profile_id_is_nvmls_not_the_position():
    devices = _mig("H100-80GB", ["1g.10gb", "3g.40gb", "2g.20gb"])
    assert [d["name"] for d in devices] == ["gpu-0-mig-1g10gb-19-0", "gpu-0-mig-3g40gb-9-4", "gpu-0-mig-2g20gb-14-2"]


def test_profile_names_lose_their_dots_and_other_characters():
    assert gpus.mig_device_name(3, "1g.5gb+me", 20, 6) == "gpu-3-mig-1g5gb-me-20-6"
    assert gpus.mig_device_name(0, "4g.95gb", 5, 0) == "gpu-0-mig-4g95gb-5-0"


@pytest.mark.parametrize("profiles", [
    ["1g.5gb"] * 8,                            # seven compute slices only; no 1g starts on slot 7
    ["3g.20gb", "3g.20gb", "1g.5gb"],          # the two 3g take all eight memory slots
    ["4g.20gb", "4g.20gb"],                    # eight compute slices, and both would start on slot 0
])
def test_placements_nvml_would_refuse_are_refused(profiles):
    with pytest.raises(gpus.TopologyError, match="do not fit"):
        _mig("A100-40GB", profiles)


def test_placement_follows_nvmls_allowed_starts_alone():
    one_g, two_g, four_g = gpus._PLACEMENTS[19], gpus._PLACEMENTS[14], gpus._PLACEMENTS[5]
    assert gpus._place([four_g, four_g]) is None               # memory would fit; starts do not
    assert gpus._place([one_g] * 8) is None                    # no 1g on slot 7
    assert gpus._place([two_g, one_g, two_g, two_g]) == [0, 6, 2, 4]


def test_mig_devices_repeat_their_parents_addressing_mode():
    devices = gpus.node_devices("n", [{"model": "H100-80GB", "hmm": True, "mig": ["3g.40gb", "3g.40gb"]}])
    assert {d["attributes"]["addressingMode"]["string"] for d in devices} == {"HMM"}


# ----- rejected slices -------------------------------------------------------------------


class FakeCore:
    """Just enough of CoreV1Api for the simulator to register nodes (and write kubeadm-config)."""

    def __init__(self):
        self.config_maps = []

    def create_namespaced_config_map(self, namespace, body):
        self.config_maps.append((namespace, body))

    def create_node(self, body):
        return types.SimpleNamespace(metadata=types.SimpleNamespace(uid="uid-" + body["metadata"]["name"]),
                                     spec=types.SimpleNamespace(taints=[]))

    def patch_node_status(self, name, body):
        pass

    def patch_node(self, name, body):
        pass


class FakeServer:
    """ResourceSlices as the API server treats them: names with dots are refused (422, with
    its message), and so is every slice of the nodes in ``refuse``; dry runs store nothing;
    generateName gets a random suffix; an update must name the stored resourceVersion."""

    def __init__(self, refuse=(), serves_dra=True):
        self.refuse = set(refuse)
        self.serves_dra = serves_dra
        self.stored = []
        self.dry_runs = []
        self.calls = []
        self.version = 0

    def list_cluster_custom_object(self, group, version, plural, field_selector="", limit=None):
        if not self.serves_dra:
            raise ApiException(status=404, reason="Not Found")
        if not field_selector:
            return {"items": copy.deepcopy(self.stored[:limit])}
        wanted = dict(part.split("=", 1) for part in field_selector.split(","))
        return {"items": [copy.deepcopy(s) for s in self.stored
                          if s["spec"]["nodeName"] == wanted["spec.nodeName"]
                          and s["spec"]["driver"] == wanted.get("spec.driver", s["spec"]["driver"])]}

    def _check(self, spec):
        dotted = [d["name"] for d in spec["devices"] if "." in d["name"]]
        if spec["nodeName"] in self.refuse or dotted:
            message = DOTS_MESSAGE if not dotted else 'spec.devices[0].name: Invalid value: "%s": ' \
                                                      'must not contain dots' % dotted[0]
            raise ApiException(status=422, reason="Unprocessable Entity", body=json.dumps(
                {"kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422, "message": message}))

    def create_cluster_custom_object(self, group, version, plural, body, dry_run=None):
        spec = body["spec"]
        self._check(spec)
        if dry_run:
            self.dry_runs.append((spec["nodeName"], dry_run))
        else:
            self.version += 1
            name = body["metadata"]["generateName"] + "%05d" % self.version
            self.calls.append(("create", name))
            self.stored.append({"metadata": {"name": name, "resourceVersion": str(self.version)},
                                "spec": copy.deepcopy(spec)})

    def replace_cluster_custom_object(self, group, version, plural, name, body):
        self._check(body["spec"])
        stored = [s for s in self.stored if s["metadata"]["name"] == name][0]
        if stored["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]:
            raise ApiException(status=409, reason="Conflict")
        self.version += 1
        self.calls.append(("update", name))
        stored["metadata"]["resourceVersion"] = str(self.version)
        stored["spec"] = copy.deepcopy(body["spec"])

    def delete_cluster_custom_object(self, group, version, plural, name):
        self.calls.append(("delete", name))
        self.stored = [s for s in self.stored if s["metadata"]["name"] != name]


def _simulator(tmp_path, mode, refuse=(), serves_dra=True):
    nodes = topology.load(os.path.join(TOPOLOGIES, "mixed-mig.yml"))
    # tmp_path None: no ready file and no report (tests of the slices alone)
    sim = agent.Simulator(client.ApiClient(), nodes, mode, "v1.35.4",
                          ready_file=str(tmp_path / "simulator.ready") if tmp_path else None,
                          report_file=str(tmp_path / report.FILE_NAME) if tmp_path else None)
    sim.core, sim.custom = FakeCore(), FakeServer(refuse, serves_dra)
    return sim


def test_always_mode_publishes_every_gpu_node_when_nothing_is_rejected(tmp_path):
    sim = _simulator(tmp_path, "always")
    sim.register_nodes()
    assert sim.check_slices() == []
    assert sorted(s["spec"]["nodeName"] for s in sim.custom.stored) == ["gpu-a100-mig", "gpu-h100"]
    assert not os.path.exists(sim.report_file)


def test_a_cluster_without_the_dra_api_has_nothing_to_check(tmp_path):
    # LAB_WITHOUT_DRA: the lab must still come up, for the tests of the refusals.
    sim = _simulator(tmp_path, "plugin", serves_dra=False)
    sim.register_nodes()
    assert sim.check_slices() == [] and sim.custom.dry_runs == []
    assert not os.path.exists(sim.report_file)


@pytest.mark.parametrize("mode", ["always", "plugin"])
def test_a_rejection_at_start_is_reported_and_the_simulator_is_not_ready(tmp_path, mode):
    sim = _simulator(tmp_path, mode, refuse=["gpu-a100-mig"])
    assert sim.run() == 1
    assert not os.path.exists(sim.ready_file)
    saved = report.read(sim.report_file)
    assert list(saved["rejected"]) == ["gpu-a100-mig"] and saved["rejected"]["gpu-a100-mig"]["status"] == 422
    message = report.describe(saved)
    assert "gpu-a100-mig: 422 Unprocessable Entity: " + DOTS_MESSAGE in message
    # The other GPU node went through: published in always mode, only validated in plugin mode.
    if mode == "always":
        assert [s["spec"]["nodeName"] for s in sim.custom.stored] == ["gpu-h100"]
    else:
        assert sim.custom.stored == [] and sim.custom.dry_runs == [("gpu-h100", "All")]


def test_the_old_dotted_names_are_what_the_server_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(gpus, "mig_device_name", lambda minor, profile, gi, start: "gpu-%d-mig-%s-%d-%d" % (
        minor, profile, gi, start))
    sim = _simulator(tmp_path, "always")
    sim.register_nodes()
    assert sim.check_slices() == ["gpu-a100-mig"]
    assert "must not contain dots" in report.describe(report.read(sim.report_file))


def test_a_rejection_in_plugin_mode_later_is_reported_and_other_nodes_still_publish(tmp_path):
    sim = _simulator(tmp_path, "plugin")
    sim.register_nodes()
    sim.custom.refuse = {"gpu-a100-mig"}  # e.g. a later change the server refuses
    pods = [{"metadata": {"namespace": "dra", "name": "plugin-" + node, "labels": {
        "dra-driver-nvidia-gpu-component": "kubelet-plugin"}, "ownerReferences": [{"kind": "DaemonSet", "name": "x"}]},
        "spec": {"nodeName": node}, "status": {"phase": "Running"}} for node in ("gpu-a100-mig", "gpu-h100")]
    sim.resync_plugins(pods)
    assert [s["spec"]["nodeName"] for s in sim.custom.stored] == ["gpu-h100"]
    assert "gpu-a100-mig" in report.describe(report.read(sim.report_file))
    # Accepted on a later attempt: the report goes away.
    sim.custom.refuse = set()
    sim.resync_plugins(pods)
    assert not os.path.exists(sim.report_file)


def test_a_crash_is_reported(tmp_path):
    sim = _simulator(tmp_path, "always")
    sim.record_failure(RuntimeError("boom"))
    assert report.describe(report.read(sim.report_file)) == "the simulator failed: RuntimeError: boom"


# ----- what `lab up` and `lab status` make of the report -----------------------------------


def _lab(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    cfg = types.SimpleNamespace(state_dir=str(tmp_path), run_dir=str(run_dir), kubeconfig=str(tmp_path / "kc"))
    report.write(str(run_dir / report.FILE_NAME), {"gpu-a100-mig": {
        "status": 422, "reason": "Unprocessable Entity", "message": DOTS_MESSAGE}})
    return cfg


def test_lab_up_stops_waiting_with_the_servers_message(tmp_path):
    simulator = cluster.components(_lab(tmp_path))["simulator"]
    with pytest.raises(cluster.SimulatorFailed, match="must not contain dots"):
        wait_for("the simulator to register its nodes", lambda: False, 60, components=[simulator])


def test_lab_status_prints_the_report_and_fails(tmp_path, capsys):
    cfg = _lab(tmp_path)
    with open(os.path.join(cfg.state_dir, "lab.json"), "w") as handle:
        json.dump({"k8s_version": "1.35.4", "driver_mode": "plugin", "topology_file": "mixed-mig.yml"}, handle)
    assert cluster.status(cfg) == 1
    out = capsys.readouterr().out
    assert "simulator reports:" in out and DOTS_MESSAGE in out


def test_the_simulator_writes_kubeadm_config_as_kubeadm_init_does(tmp_path):
    """The lab stands in for a kubeadm cluster: dra.gpu tells kubeadm apart by this ConfigMap."""
    sim = _simulator(tmp_path, "always")
    sim.ensure_kubeadm_config()
    [(namespace, body)] = sim.core.config_maps
    assert namespace == "kube-system" and body["metadata"]["name"] == "kubeadm-config"
    text = body["data"]["ClusterConfiguration"]
    assert "apiVersion: kubeadm.k8s.io/v1beta4" in text and "kubernetesVersion: v1.35.4" in text
