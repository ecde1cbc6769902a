"""The node lab's pure parts: image archives, node files, settings, the leftovers diff."""

import hashlib
import json
import os
import sys
import tarfile

import pytest
import yaml

from labctl.nodes import files as node_files, images, lab as node_lab, machine

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "integration", "labs"))
import node_lab_leftovers  # noqa: E402


def test_image_archive_is_what_ctr_import_reads(tmp_path):
    binary = tmp_path / "tool"
    binary.write_bytes(b"\x7fELF pretend")
    archive = images.write_archive(str(tmp_path / "a.tar"), ["registry.k8s.io/etcd:3.6.5-0"],
                                   {"/usr/local/bin/etcd": str(binary)})
    with tarfile.open(archive) as outer:
        manifest = json.load(outer.extractfile("manifest.json"))
        config = json.load(outer.extractfile(manifest[0]["Config"]))
        layer = outer.extractfile("layer.tar").read()
    assert manifest[0]["RepoTags"] == ["registry.k8s.io/etcd:3.6.5-0"]
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
    assert manifest[0]["Config"] == hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest() + ".json"
    assert config["architecture"] == "amd64" and config["os"] == "linux"
    with tarfile.open(fileobj=__import__("io").BytesIO(layer)) as inner:
        members = {m.name: m for m in inner.getmembers()}
    assert members["usr/local/bin/etcd"].mode == 0o755
    assert members["usr/local/bin"].isdir()


def test_kubeadm_config_for_this_vm():
    docs = list(yaml.safe_load_all(node_files.kubeadm_config("cp1", "10.231.1.10", "1.34.4", "10.232.1.0/24")))
    init, cluster, kubelet = docs
    assert init["nodeRegistration"]["imagePullPolicy"] == "Never"
    assert set(init["skipPhases"]) == {"addon/kube-proxy", "addon/coredns"}
    assert cluster["kubernetesVersion"] == "v1.34.4"
    assert cluster["dns"]["disabled"] and cluster["proxy"]["disabled"]
    assert kubelet["cgroupDriver"] == "cgroupfs" and kubelet["failCgroupV1"] is False
    # The shared disk's free space is not the lab's: no evictions for it (all four signals named).
    assert kubelet["evictionHard"] == {"memory.available": "100Mi", "nodefs.available": "1%",
                                       "imagefs.available": "1%", "nodefs.inodesFree": "1%"}
    # Nor image garbage collection: it would delete the next version's images before the upgrade.
    assert kubelet["imageGCHighThresholdPercent"] == 100


def test_join_config_names_the_control_plane_and_skips_only_the_cgroup_check():
    join = yaml.safe_load(node_files.kubeadm_join_config("w1", "10.231.1.10", "abcdef.0123456789abcdef",
                                                         "sha256:00"))
    assert join["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "10.231.1.10:6443"
    assert join["nodeRegistration"]["ignorePreflightErrors"] == ["SystemVerification"]


def test_each_node_gets_its_own_pod_range(monkeypatch):
    monkeypatch.setenv("NODE_LAB_NET", "2")
    monkeypatch.setenv("NODE_LAB_WORKERS", "2")
    cfg = node_lab.load_config()
    assert cfg.nodes == ["cp1", "w1", "w2"]
    assert [cfg.node_pod_range(i) for i in range(3)] == ["10.232.2.0/26", "10.232.2.64/26", "10.232.2.128/26"]
    monkeypatch.setenv("NODE_LAB_WORKERS", "9")
    with pytest.raises(node_lab.NodeLabError, match="NODE_LAB_WORKERS"):
        node_lab.load_config()


def test_containerd_config_turns_cdi_on_and_clamps_oom_scores():
    text = node_files.containerd_config("registry.k8s.io/pause:3.10.1")
    assert "enable_cdi = true" in text and "restrict_oom_score_adj = true" in text
    assert 'sandbox = "registry.k8s.io/pause:3.10.1"' in text and "SystemdCgroup = false" in text


def test_settings_refuse_bad_values(monkeypatch):
    monkeypatch.setenv("NODE_LAB_NET", "300")
    with pytest.raises(node_lab.NodeLabError, match="NODE_LAB_NET"):
        node_lab.load_config()
    monkeypatch.setenv("NODE_LAB_NET", "3")
    monkeypatch.setenv("NODE_LAB_VERSION", "1.33.1")
    with pytest.raises(node_lab.NodeLabError, match="not among NODE_LAB_MIRROR_VERSIONS"):
        node_lab.load_config()
    monkeypatch.setenv("NODE_LAB_VERSION", "1.34.4")
    cfg = node_lab.load_config()
    assert (cfg.bridge, cfg.gateway, cfg.address(0), cfg.machine("cp1")) == ("dgl3", "10.231.3.1", "10.231.3.10",
                                                                             "dgl3-cp1")
    # nspawn names the host side of the veth "vb-" + machine, and Linux allows 15 characters.
    assert len("vb-" + node_lab.NodeLabConfig("/x", 250, "1.34.4", ()).machine("cp1")) <= 15


def test_leftovers_counts_what_is_new():
    one = {"processes": ["containerd"], "links": ["lo", "eth0"]}
    two = {"processes": ["containerd", "containerd"], "links": ["lo", "eth0"]}
    assert node_lab_leftovers.compare(one, two) == {"processes": ["containerd"]}
    assert node_lab_leftovers.compare(two, one) == {}


def test_leftovers_ignore_other_node_labs(monkeypatch):
    monkeypatch.setattr(node_lab_leftovers, "NET", "5")
    assert node_lab_leftovers._other_lab("dgl9") and node_lab_leftovers._other_lab("vb-dgl50-cp1")
    assert node_lab_leftovers._other_lab("dra-gpu-lab-n9-cp1")
    assert not node_lab_leftovers._other_lab("dgl5") and not node_lab_leftovers._other_lab("vb-dgl5-cp1")
    assert not node_lab_leftovers._other_lab("dra-gpu-lab-n5-cp1") and not node_lab_leftovers._other_lab("eth0")


def test_three_control_planes_join_with_the_uploaded_certificates(monkeypatch):
    monkeypatch.setenv("NODE_LAB_NET", "7")
    monkeypatch.setenv("NODE_LAB_CONTROL_PLANES", "3")
    monkeypatch.setenv("NODE_LAB_WORKERS", "1")
    cfg = node_lab.load_config()
    assert cfg.nodes == ["cp1", "cp2", "cp3", "w1"] and cfg.control_plane_nodes == ["cp1", "cp2", "cp3"]
    init = list(yaml.safe_load_all(node_files.kubeadm_config("cp1", cfg.address(0), "1.34.4", cfg.pod_subnet,
                                                             "0123abcd")))
    assert init[0]["certificateKey"] == "0123abcd"
    assert init[1]["controlPlaneEndpoint"] == "10.231.7.10:6443"
    join = yaml.safe_load(node_files.kubeadm_join_config("cp2", cfg.address(0), "t.t", "sha256:00",
                                                         (cfg.address(1), "0123abcd")))
    assert join["controlPlane"] == {"localAPIEndpoint": {"advertiseAddress": "10.231.7.11", "bindPort": 6443},
                                    "certificateKey": "0123abcd"}
    assert join["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "10.231.7.10:6443"
    assert "controlPlane" not in yaml.safe_load(node_files.kubeadm_join_config("w1", cfg.address(0), "t.t", "x"))
    assert "certificateKey" not in list(yaml.safe_load_all(
        node_files.kubeadm_config("cp1", cfg.address(0), "1.34.4", cfg.pod_subnet)))[0]
    assert "export NODE_LAB_CONTROL_PLANE_NODES=cp1,cp2,cp3" in node_lab.env_lines(cfg)
    assert "export NODE_LAB_CP3_ADDRESS=10.231.7.12" in node_lab.env_lines(cfg)


def test_the_inventory_lists_every_control_plane(monkeypatch, tmp_path):
    monkeypatch.setenv("NODE_LAB_CONTROL_PLANES", "3")
    cfg = node_lab.load_config()
    monkeypatch.setattr(node_lab.NodeLabConfig, "inventory", str(tmp_path / "inventory.yml"))
    node_lab._write_inventory(cfg)
    groups = yaml.safe_load((tmp_path / "inventory.yml").read_text())["all"]["children"]
    assert groups["kube_control_plane"]["hosts"] == {"cp%d" % i: {"ansible_host": "10.231.0.%d" % (9 + i)}
                                                     for i in (1, 2, 3)}
    assert list(groups["kube_node"]["hosts"]) == ["cp1", "cp2", "cp3", "w1"]
    assert groups["kube_node"]["hosts"]["w1"] == {"ansible_host": "10.231.0.13"}


def test_control_planes_and_workers_fit_the_pod_ranges(monkeypatch):
    monkeypatch.setenv("NODE_LAB_CONTROL_PLANES", "3")
    monkeypatch.setenv("NODE_LAB_WORKERS", "2")
    with pytest.raises(node_lab.NodeLabError, match="more than 4 nodes"):
        node_lab.load_config()
    monkeypatch.setenv("NODE_LAB_CONTROL_PLANES", "4")
    monkeypatch.setenv("NODE_LAB_WORKERS", "0")
    with pytest.raises(node_lab.NodeLabError, match="NODE_LAB_CONTROL_PLANES must be 1 to 3"):
        node_lab.load_config()


def test_stopping_a_machine_whose_nspawn_has_ended_is_not_an_error():
    # node-down after a run was killed: the recorded nspawn pid is gone, /proc has no entry.
    gone = 2 ** 22 + 12345  # above pid_max's default: no such process
    assert not machine.alive(gone)
    machine.stop(gone, timeout=1)
