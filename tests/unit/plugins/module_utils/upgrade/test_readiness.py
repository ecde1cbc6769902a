from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import nodes
from ansible_collections.dra.gpu.plugins.module_utils.upgrade import cluster_identity, node_wait, readiness

AVAILABLE = ["1.33.7", "1.34.4", "1.35.3", "1.35.4"]


def api_node(name, kubelet="v1.35.4", runtime="containerd://2.1.4", gpu=True, ready="True", allocatable=None,
             control_plane=False):
    labels = {"nvidia.com/gpu.present": "true"} if gpu else {}
    if control_plane:
        labels[nodes.CONTROL_PLANE_LABEL] = ""
    return {"metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {"nodeInfo": {"kubeletVersion": kubelet, "containerRuntimeVersion": runtime},
                       "conditions": [{"type": "Ready", "status": ready}],
                       "allocatable": allocatable or {}}}


def assess(node_list, server="v1.35.4", serves_v1=True, daemonsets=(), facts=None, kubeadm=True):
    summaries = [nodes.summary(n) for n in node_list]
    cgroups = facts if facts is not None else dict((s["name"], {"cgroup_fs": "cgroup2fs"}) for s in summaries)
    identity = cluster_identity.identify(server, summaries, kubeadm_config=kubeadm)
    return readiness.assess(server, serves_v1, summaries, list(daemonsets), "1.35", cgroups, AVAILABLE, identity)


def status(result, name):
    return [c for c in result["checks"] if c["name"] == name][0]


def test_a_ready_cluster_passes_every_check():
    result = assess([api_node("gpu-1"), api_node("cp", gpu=False, control_plane=True)])
    assert result["ready"] and result["blockers"] == [] and result["cautions"] == []
    assert result["gpu_nodes"] == ["gpu-1"]
    assert [c["status"] for c in result["checks"]] == ["pass"] * 8


def test_an_old_server_fails_with_the_path_one_minor_at_a_time():
    result = assess([api_node("gpu-1", kubelet="v1.33.7")], server="v1.33.7")
    check = status(result, "server_version")
    assert check["status"] == "fail"
    assert "1.33.7 -> 1.34.4 -> 1.35.4" in check["fix"]
    assert [h["version"] for h in result["upgrade_path"]] == ["1.34.4", "1.35.4"]
    assert status(result, "kubelet_versions")["nodes"] == ["gpu-1"]
    assert not result["ready"]


def test_missing_resource_api_is_a_blocker():
    result = assess([api_node("gpu-1")], serves_v1=False)
    assert status(result, "resource_api")["status"] == "fail"
    assert not result["ready"]


def test_no_gpu_nodes_is_a_blocker_and_skips_the_node_checks():
    result = assess([api_node("cpu-1", gpu=False)])
    assert [c["name"] for c in result["blockers"]] == ["gpu_nodes"]
    assert len(result["checks"]) == 4  # server, API, distribution, GPU nodes


def test_nfd_pci_label_counts_as_a_gpu_node():
    node = api_node("gpu-1", gpu=False)
    node["metadata"]["labels"]["feature.node.kubernetes.io/pci-10de.present"] = "true"
    assert assess([node])["gpu_nodes"] == ["gpu-1"]


def test_runtimes():
    assert status(assess([api_node("a", runtime="cri-o://1.30.1")]), "container_runtime")["status"] == "pass"
    opt_in = status(assess([api_node("a", runtime="containerd://1.7.27")]), "container_runtime")
    assert opt_in["status"] == "warn" and "enable_cdi" in opt_in["fix"] and opt_in["nodes"] == ["a"]
    old = status(assess([api_node("a", runtime="containerd://1.6.9"), api_node("b", runtime="docker://24.0")]),
                 "container_runtime")
    assert old["status"] == "fail" and "a (containerd://1.6.9)" in old["message"] and "b (docker://24.0)" in old["message"]


def test_cgroups():
    v1 = assess([api_node("a"), api_node("b")], facts={"a": {"cgroup_fs": "tmpfs"}, "b": {"cgroup_fs": "cgroup2fs"}})
    assert status(v1, "cgroup_v2")["nodes"] == ["a"] and not v1["ready"]
    unknown = assess([api_node("a")], facts={})
    assert status(unknown, "cgroup_v2")["status"] == "warn" and unknown["ready"]


def test_device_plugin_present_is_a_warning_with_migration_advice():
    result = assess([api_node("a", allocatable={"nvidia.com/gpu": "2"}), api_node("b")],
                    daemonsets=[{"namespace": "gpu-operator", "name": "nvidia-device-plugin-daemonset"}])
    check = status(result, "device_plugin")
    assert check["status"] == "warn" and check["nodes"] == ["a"]
    assert "gpu-operator/nvidia-device-plugin-daemonset" in check["message"] and "node by node" in check["fix"]
    assert result["ready"]


def test_node_wait_version_matching_and_shortfall():
    assert node_wait.version_matches("v1.35.4", "1.35.4") and node_wait.version_matches("v1.35.4", "1.35")
    assert not node_wait.version_matches("v1.34.4", "1.35") and not node_wait.version_matches("v1.35.3", "1.35.4")
    assert node_wait.version_matches("v1.34.4", None)
    old = nodes.summary(api_node("a", kubelet="v1.34.4", ready="False"))
    assert node_wait.shortfall(old, "1.35.4") == "not Ready, kubelet v1.34.4, waiting for 1.35.4"
    assert node_wait.shortfall(None, "1.35.4") == "not registered"
    assert node_wait.shortfall(nodes.summary(api_node("a")), "1.35.4") is None


def k3s_node(name, kubelet="v1.35.4+k3s1"):
    node = api_node(name, kubelet=kubelet)
    node["metadata"]["annotations"] = {"k3s.io/node-args": "[\"agent\"]"}
    node["spec"]["providerID"] = "k3s://" + name
    return node


def test_a_k3s_cluster_is_a_caution_that_names_what_to_skip():
    result = assess([k3s_node("w1")], server="v1.35.4+k3s1", kubeadm=False)
    check = status(result, "distribution")
    assert check["status"] == "warn" and check["message"].startswith("k3s (API server version v1.35.4+k3s1")
    assert "skip dra.gpu.cluster_upgrade: upgrade with k3s's install script" in check["fix"]
    assert "/run/k3s/containerd/containerd.sock" in check["fix"]
    assert result["ready"] and result["cluster"]["distribution"] == "k3s"


def test_a_too_old_k3s_cluster_is_told_to_upgrade_with_k3s_not_with_this_collection():
    result = assess([k3s_node("w1", "v1.34.4+k3s1")], server="v1.34.4+k3s1", kubeadm=False)
    fix = status(result, "server_version")["fix"]
    assert "INSTALL_K3S_VERSION" in fix and "playbooks/upgrade.yml" not in fix


def test_kubeadm_passes_the_distribution_check_with_its_evidence():
    check = status(assess([api_node("gpu-1")]), "distribution")
    assert check["status"] == "pass" and "kube-system/kubeadm-config exists" in check["message"]


def test_device_taints_are_a_caution_naming_what_is_missing_never_a_blocker():
    summaries = [nodes.summary(api_node("gpu-1"))]

    def check(slices, rules):
        probed = {"device_taints": {"on": slices, "how": "dry run"}, "device_taint_rules": {"on": rules, "how": "dry"}}
        result = readiness.assess("v1.35.4", True, summaries, [], "1.35", {"gpu-1": {"cgroup_fs": "cgroup2fs"}},
                                  AVAILABLE, cluster_identity.identify("v1.35.4", summaries, kubeadm_config=True),
                                  probed)
        return result, [c for c in result["checks"] if c["name"] == "device_taints"]

    on, (honoured,) = check(True, True)
    assert honoured["status"] == "pass" and on["cautions"] == []
    off, (missing,) = check(False, False)
    assert off["ready"] and missing["status"] == "warn" and "DRADeviceTaints off" in missing["message"]
    assert "DeviceTaintRules" in missing["message"] and "1.37" in missing["fix"]
    assert not check(None, True)[1]  # not probed (forbidden): not said


def test_the_dra_features_of_the_running_server_and_the_target_are_reported():
    summaries = [nodes.summary(api_node("gpu-1"))]
    probed = {"consumable_capacity": {"on": False, "how": "a server-side dry run dropped it"},
              "extended_resource": {"on": True, "how": "a server-side dry run kept it"}}
    result = readiness.assess("v1.35.4", True, summaries, [], "1.35", None, AVAILABLE, None, probed, "1.37")
    features = result["dra_features"]
    assert features["server_version"] == "1.35.4" and features["target_version"] == "1.37"
    rows = dict((r["name"], r) for r in features["features"])
    assert rows["extended_resource"]["on"] and rows["extended_resource"]["flipped"]
    assert rows["consumable_capacity"]["on"] is False and rows["consumable_capacity"]["target_on"]
    check = status(result, "dra_features")
    assert check["status"] == "pass" and "on at 1.37: partitionable_devices, consumable_capacity" in check["message"]
    assert len(features["lines"]) == len(features["features"]) == 8
    assert readiness.assess("v1.35.4", False, summaries, [], "1.35")["dra_features"]["features"] == []
