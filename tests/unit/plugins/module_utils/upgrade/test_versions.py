from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions

AVAILABLE = ["1.32.5", "1.33.6", "1.33.7", "1.34.2", "1.34.4", "1.35.3", "1.35.4", "1.36.3", "1.37.2"]


def node(name, kubelet, cp=False, runtime="containerd://2.1.4", labels=None):
    return {"name": name, "kubelet": kubelet, "control_plane": cp, "runtime": runtime, "labels": labels or {}}


def codes(issues):
    return sorted(i["code"] for i in issues)


def test_multi_hop_path_uses_the_newest_patch_of_each_minor():
    result = versions.plan("v1.32.5", [node("cp", "v1.32.5", True), node("w", "v1.32.5")], "1.35", AVAILABLE)
    assert [h["version"] for h in result["hops"]] == ["1.33.7", "1.34.4", "1.35.4"]
    assert result["target"] == "1.35.4" and result["blockers"] == [] and not result["up_to_date"]


def test_control_planes_come_first():
    nodes = [node("a-worker", "v1.34.4"), node("z-cp", "v1.34.4", True), node("m-cp", "v1.34.4", True)]
    order = versions.plan("v1.34.4", nodes, "1.35.4", AVAILABLE)["node_order"]
    assert [n["name"] for n in order] == ["m-cp", "z-cp", "a-worker"]
    assert order[0]["role"] == "control-plane" and order[2]["role"] == "worker"


def test_latest_and_already_there():
    assert versions.plan("v1.35.4", [], "latest", AVAILABLE)["target"] == "1.37.2"
    same = versions.plan("v1.35.4", [node("n", "v1.35.4")], "1.35", AVAILABLE)
    assert same["hops"] == [] and same["up_to_date"] and same["blockers"] == []


def test_patch_upgrade_within_a_minor():
    assert [h["version"] for h in versions.plan("v1.35.3", [], "1.35.4", AVAILABLE)["hops"]] == ["1.35.4"]


def test_unknown_patches_are_a_warning():
    result = versions.plan("v1.33.7", [], "1.35.4")
    assert [h["version"] for h in result["hops"]] == ["1.34", "1.35.4"]
    assert codes(result["cautions"]) == ["unknown_patch"]


def test_downgrade_is_a_blocker():
    result = versions.plan("v1.36.3", [], "1.35.4", AVAILABLE)
    assert codes(result["blockers"]) == ["downgrade"] and result["hops"] == []


def test_target_below_the_dra_minimum_is_a_blocker():
    assert "below_dra_minimum" in codes(versions.plan("v1.33.7", [], "1.34", AVAILABLE)["blockers"])
    assert versions.plan("v1.33.7", [], "1.34", AVAILABLE, dra_min="1.34")["blockers"] == []


def test_kubelet_more_than_three_minors_behind_is_a_blocker():
    result = versions.plan("v1.33.7", [node("old", "v1.30.2")], "1.35", AVAILABLE)
    blocker = [b for b in result["blockers"] if b["code"] == "kubelet_skew"][0]
    assert "old" in blocker["message"] and "1.31" in blocker["fix"]


def test_kubelet_newer_than_the_api_server_is_a_blocker():
    assert "kubelet_newer" in codes(versions.plan("v1.34.4", [node("n", "v1.35.4")], "1.35", AVAILABLE)["blockers"])


def test_cgroup_v1_blocks_1_35():
    result = versions.plan("v1.34.4", [node("n", "v1.34.4")], "1.35", AVAILABLE,
                           node_facts={"n": {"cgroup_fs": "tmpfs"}})
    assert codes(result["blockers"]) == ["cgroup_v1"]
    ok = versions.plan("v1.34.4", [node("n", "v1.34.4")], "1.35", AVAILABLE, node_facts={"n": {"cgroup_fs": "cgroup2fs"}})
    assert ok["blockers"] == []


def test_containerd_1_blocks_1_36_and_warns_for_1_35():
    old = [node("n", "v1.35.4", runtime="containerd://1.7.27")]
    assert codes(versions.plan("v1.35.4", old, "1.36", AVAILABLE)["blockers"]) == ["containerd_1"]
    warned = versions.plan("v1.34.4", [node("n", "v1.34.4", runtime="containerd://1.7.27")], "1.35", AVAILABLE)
    assert warned["blockers"] == [] and codes(warned["cautions"]) == ["containerd_1"]


def test_ipvs_kube_proxy_warns():
    result = versions.plan("v1.34.4", [], "1.35", AVAILABLE, kube_proxy_mode="ipvs")
    assert codes(result["cautions"]) == ["kube_proxy_ipvs"]


def test_kubeadm_v1beta3_blocks_1_37():
    result = versions.plan("v1.36.3", [], "1.37", AVAILABLE, kubeadm_config_api="v1beta3")
    assert codes(result["blockers"]) == ["kubeadm_v1beta3"]
    assert versions.plan("v1.35.4", [], "1.36", AVAILABLE, kubeadm_config_api="v1beta3")["blockers"] == []


@pytest.mark.parametrize("server,labels,provider", [
    ("v1.35.4-eks-3cf4b1e", {}, "EKS"),
    ("v1.35.4-gke.1200", {}, "GKE"),
    ("v1.35.4", {"kubernetes.azure.com/cluster": "x"}, "AKS"),
    ("v1.35.4", {}, None),
])
def test_managed_control_planes_are_detected(server, labels, provider):
    result = versions.plan(server, [node("n", "v1.35.4", labels=labels)], "1.36", AVAILABLE)
    assert ("managed_control_plane" in codes(result["blockers"])) == (provider is not None)
    if provider:
        assert provider in result["blockers"][0]["message"]


def test_bad_versions_are_refused_with_examples():
    with pytest.raises(versions.VersionError, match="examples"):
        versions.parse("one.thirty-five")
    with pytest.raises(versions.VersionError, match="available_versions"):
        versions.resolve_target("latest", [])


def test_next_pass_is_the_first_hop_for_the_whole_cluster():
    nodes = [node("w", "v1.34.4"), node("cp", "v1.34.4", True)]
    result = versions.plan("v1.34.4", nodes, "1.35", AVAILABLE)
    assert result["next_pass"] == {
        "version": "1.35.4", "minor": "1.35", "control_plane_upgrade": True, "nodes": ["cp", "w"]}
    assert result["node_order"][0] == {"name": "cp", "role": "control-plane", "kubelet": "v1.34.4"}


def test_next_pass_first_brings_lagging_kubelets_up_to_the_server_when_resuming():
    nodes = [node("cp", "v1.35.4", True), node("w1", "v1.35.4"), node("w2", "v1.34.4")]
    result = versions.plan("v1.35.4", nodes, "1.36", AVAILABLE)
    assert result["next_pass"] == {
        "version": "1.35.4", "minor": "1.35", "control_plane_upgrade": False, "nodes": ["w2"]}
    assert not result["up_to_date"]


def test_nothing_to_do_at_the_target():
    nodes = [node("cp", "v1.35.4", True), node("w", "v1.35.4")]
    result = versions.plan("v1.35.4", nodes, "1.35", AVAILABLE)
    assert result["next_pass"] is None and result["up_to_date"] and result["hops"] == []


@pytest.mark.parametrize("text", ["1.3x", "1.35.4-rc.1", "v1.35.4.1", "1.35.", "x1.35"])
def test_typed_versions_are_read_whole(text):
    with pytest.raises(versions.VersionError):
        versions.parse_input(text)
    with pytest.raises(versions.VersionError):
        versions.plan("v1.34.4", [node("cp", "v1.34.4", True)], text, AVAILABLE)


def test_cluster_versions_keep_their_suffixes():
    assert versions.parse("v1.35.4-eks-1") == (1, 35, 4) and versions.parse_input("v1.35.4") == (1, 35, 4)


def test_a_target_the_repository_does_not_offer_is_a_blocker():
    result = versions.plan("v1.34.4", [node("cp", "v1.34.4", True)], "1.35.9", AVAILABLE)
    blocker = [b for b in result["blockers"] if b["code"] == "not_offered"][0]
    assert "1.35.9 is not offered" in blocker["message"] and "1.35.3, 1.35.4" in blocker["message"]
    assert "1.35.4" in blocker["fix"]


def test_a_minor_the_repository_does_not_have_is_a_blocker_when_it_was_read():
    result = versions.plan("v1.34.4", [node("cp", "v1.34.4", True)], "1.35", [], require_offered=True)
    assert codes(result["blockers"]) == ["not_offered"]
    assert "offers no 1.35 version" in result["blockers"][0]["message"]
    assert versions.plan("v1.34.4", [node("cp", "v1.34.4", True)], "1.35", [])["blockers"] == []


def test_inventory_hosts_must_be_nodes():
    result = versions.plan("v1.35.4", [node("cp", "v1.35.4", True)], "1.35", AVAILABLE,
                           inventory_nodes={"cp": "cp", "w9": "node-9"})
    assert codes(result["blockers"]) == ["unknown_node"]
    assert "w9 (node name node-9)" in result["blockers"][0]["message"]
    assert "cluster_upgrade_node_name" in result["blockers"][0]["fix"]


def test_another_distributions_cluster_is_refused_only_when_there_is_work():
    k3s = [node("w1", "v1.35.4+k3s1")]
    behind = versions.plan("v1.35.4+k3s1", k3s, "1.36", AVAILABLE)
    assert behind["cluster_refusal"]["code"] == "not_kubeadm" and behind["blockers"][0] == behind["cluster_refusal"]
    assert "INSTALL_K3S_VERSION" in behind["cluster_refusal"]["fix"]
    at_target = versions.plan("v1.35.4+k3s1", k3s, "1.35", AVAILABLE)
    assert at_target["up_to_date"] and at_target["cluster_refusal"] is None and at_target["blockers"] == []


def test_passes_needed_counts_each_hop_and_a_resume_first():
    assert versions.plan("v1.30.14", [node("cp", "v1.30.14", cp=True)], "1.35", AVAILABLE)["passes_needed"] == 5
    lagging = [node("cp", "v1.35.4", cp=True), node("w1", "v1.34.4")]
    assert versions.plan("v1.35.4", lagging, "1.35", AVAILABLE)["passes_needed"] == 1
    assert versions.plan("v1.35.4", lagging, "1.36", AVAILABLE)["passes_needed"] == 2
    assert versions.plan("v1.35.4", [node("cp", "v1.35.4", cp=True)], "1.35", AVAILABLE)["passes_needed"] == 0


def test_a_path_longer_than_the_passes_left_is_a_blocker_naming_where_to_stop():
    offered = AVAILABLE + ["1.31.14"]
    result = versions.plan("v1.30.14", [node("cp", "v1.30.14", cp=True)], "1.35", offered, passes_left=4)
    assert codes(result["blockers"]) == ["too_many_passes"]
    assert "needs 5 passes and this run has 4 left" in result["blockers"][0]["message"]
    assert "cluster_upgrade_target=1.34 first" in result["blockers"][0]["fix"]
    lagging = [node("cp", "v1.33.7", cp=True), node("w1", "v1.32.5")]
    resumed = versions.plan("v1.33.7", lagging, "1.35", AVAILABLE, passes_left=2)
    assert "cluster_upgrade_target=1.34 first" in resumed["blockers"][0]["fix"]  # the resume takes one pass
    assert versions.plan("v1.31.14", [node("cp", "v1.31.14", cp=True)], "1.35", offered, passes_left=4)["blockers"] == []


@pytest.mark.parametrize("version,minimum,expected", [
    ("v1.35.0", "1.35", True), ("v1.34.9", "1.35", False), ("v1.36.0", "1.35.4", True),
    ("v1.35.3", "1.35.4", False), ("v1.35.4-eks-1", "1.35.4", True), ("v2.0.0", "1.35", True),
])
def test_meets_compares_the_patch_only_when_the_minimum_names_one(version, minimum, expected):
    assert versions.meets(versions.parse(version), versions.parse_input(minimum)) is expected


def test_lagging_names_the_kubelets_older_than_the_api_server():
    nodes = [{"name": "cp", "kubelet": "v1.35.4"}, {"name": "w1", "kubelet": "v1.34.9"},
             {"name": "w2", "kubelet": "v1.35.3"}, {"name": "new"}]
    assert versions.lagging(versions.parse("v1.35.4"), nodes) == ["w1", "w2", "new"]
    assert versions.lagging(versions.parse("v1.34.9"), nodes[1:2]) == []


def test_the_default_target_is_the_newest_minor_tested():
    result = versions.plan("v1.35.4", [node("cp", "v1.35.4", True)], versions.TESTED, AVAILABLE)
    assert versions.NEWEST_TESTED == "1.37"
    assert result["target"] == "1.37.2" and [h["version"] for h in result["hops"]] == ["1.36.3", "1.37.2"]
    assert result["blockers"] == []


@pytest.mark.parametrize("target", ["1.38", "1.38.0", "latest"])
def test_a_target_past_the_newest_minor_tested_is_refused_naming_the_pre_release(target):
    result = versions.plan("v1.37.2", [node("cp", "v1.37.2", True)], target, AVAILABLE + ["1.38.0"])
    assert codes(result["blockers"]) == ["untested_target"] and result["hops"] == []
    assert not result["up_to_date"] and result["next_pass"] is None
    blocker = result["blockers"][0]
    assert "cluster_upgrade_target" in blocker["message"] and "1.38 is a pre-release" in blocker["message"]
    assert "1.38.0-beta.0" in blocker["message"] and "newest tested: 1.37" in blocker["message"]
    assert "cluster_upgrade_target to 1.37" in blocker["fix"]
    later = versions.plan("v1.37.2", [], "1.39", AVAILABLE)["blockers"][0]
    assert later["code"] == "untested_target" and "1.39 is newer than this collection" in later["message"]


@pytest.mark.parametrize("text", ["1.38.0-alpha.1", "v1.38.0-beta.0", "1.38.0-rc.1", "1.38.0~beta.0-1.1", "1.38-rc"])
def test_a_pre_release_is_refused_as_one(text):
    with pytest.raises(versions.PreReleaseError, match="a pre-release of Kubernetes 1.38.*target 1.37"):
        versions.plan("v1.37.2", [], text, AVAILABLE)
    with pytest.raises(versions.PreReleaseError):
        versions.plan("v1.37.2", [], "latest", AVAILABLE + [text])
    assert versions.pre_release_refusal("cluster_upgrade_target", text).startswith("cluster_upgrade_target is")
    assert versions.pre_release_refusal("cluster_upgrade_target", "1.37.2") is None


FILES = {"cp-1": {"/etc/kubernetes/kubeadm-config.yaml": ["v1beta3"]}, "w-1": {"/etc/k/join.yaml": ["v1beta4"]}}


def test_a_v1beta3_file_blocks_a_path_through_1_37_saying_when_and_how_to_migrate():
    nodes = [node("cp-1", "v1.35.4", True), node("w-1", "v1.35.4")]
    result = versions.plan("v1.35.4", nodes, "1.37", AVAILABLE, kubeadm_config_files=FILES)
    assert codes(result["blockers"]) == ["kubeadm_v1beta3"] and result["kubeadm_config_migrations"] == []
    blocker = result["blockers"][0]
    assert "/etc/kubernetes/kubeadm-config.yaml on cp-1" in blocker["message"]
    assert "cluster_upgrade_kubeadm_config_files" in blocker["message"]
    assert "while kubeadm on cp-1 is 1.35" in blocker["fix"]
    assert ("kubeadm config migrate --old-config /etc/kubernetes/kubeadm-config.yaml --new-config "
            "/etc/kubernetes/kubeadm-config.yaml.v1beta4") in blocker["fix"]
    assert "cluster_upgrade_migrate_kubeadm_config: true" in blocker["fix"]
    # Not on the way to 1.37: nothing to say.
    assert versions.plan("v1.35.4", nodes, "1.36", AVAILABLE, kubeadm_config_files=FILES)["blockers"] == []


def test_with_the_migration_on_the_file_is_a_migration_not_a_blocker():
    nodes = [node("cp-1", "v1.36.3", True), node("w-1", "v1.36.3")]
    result = versions.plan("v1.36.3", nodes, "1.37", AVAILABLE, kubeadm_config_files=FILES,
                           migrate_kubeadm_config=True)
    assert result["blockers"] == []
    assert result["kubeadm_config_migrations"] == [{"host": "cp-1", "path": "/etc/kubernetes/kubeadm-config.yaml"}]
    # Another blocker: nothing is migrated either.
    blocked = versions.plan("v1.36.3", nodes + [node("x", "v1.37.2")], "1.37", AVAILABLE, kubeadm_config_files=FILES,
                            migrate_kubeadm_config=True)
    assert codes(blocked["blockers"]) == ["kubelet_newer"] and blocked["kubeadm_config_migrations"] == []


def test_a_v1beta3_file_on_a_1_37_cluster_is_a_caution():
    result = versions.plan("v1.37.2", [node("cp-1", "v1.37.2", True)], "1.37", AVAILABLE, kubeadm_config_files=FILES)
    assert result["blockers"] == [] and codes(result["cautions"]) == ["kubeadm_v1beta3"]
    assert "kubeadm 1.36 or older" in result["cautions"][0]["fix"]
