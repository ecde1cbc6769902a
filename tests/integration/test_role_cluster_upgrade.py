"""playbooks/upgrade.yml against the lab: check mode and the blockers that stop it before any change.

The drain, uncordon, wait and PodDisruptionBudget paths are in molecule/cluster_upgrade.
"""

import os
import subprocess

import pytest

from conftest import run_playbook, task_results
from waiting import wait_for_object

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOK = os.path.join(ROOT, "playbooks", "upgrade.yml")
ANNOTATION = "lab.dra.gpu/kubelet-version"


def host_cgroup_fs():
    return subprocess.run(["stat", "-fc", "%T", "/sys/fs/cgroup/"], capture_output=True, text=True,
                          check=False).stdout.strip()


def set_kubelet(core, node, version):
    core.patch_node(node, {"metadata": {"annotations": {ANNOTATION: version}}})
    wanted = version or "v1.35.4"
    wait_for_object(core.list_node, lambda n: n["metadata"]["name"] == node
                    and n["status"]["nodeInfo"]["kubeletVersion"] == wanted,
                    "%s to report kubelet %s" % (node, wanted), timeout=30)


@pytest.fixture
def node_b_behind(core):
    """node-b's kubelet at 1.34.4 behind the 1.35.4 API server, as a half-finished upgrade leaves it."""
    set_kubelet(core, "node-b", "v1.34.4")
    yield
    set_kubelet(core, "node-b", None)


def node_b(core):
    node = core.read_node("node-b")
    return node.status.node_info.kubelet_version, bool(node.spec.unschedulable)


def plan_lines(report):
    return [r["msg"] for name, r in task_results(report) if name.endswith("Show the plan") and not r.get("skipped")]


def test_check_mode_prints_the_plan_and_changes_nothing(core, upgrade_inventory, node_b_behind):
    # The lab's minor as the target (the role's default, the newest minor tested, is ahead of the lab).
    rc, report, stderr = run_playbook(PLAYBOOK, upgrade_inventory, [
        "--check", "-e", "cluster_upgrade_target=1.35", "-e", "cluster_upgrade_check_cgroups=false",
        "-e", '{"cluster_upgrade_available_versions": ["1.35.4"]}'])
    assert rc == 0, stderr
    plans = plan_lines(report)
    # The plan needs one pass (the resume of node-b), so passes 2-4 match no host and stay quiet.
    assert len(plans) == 1
    assert "This pass: resume: bring node-b to 1.35.4" in plans[0]
    assert node_b(core) == ("v1.34.4", False)
    changed = [name for name, r in task_results(report) + task_results(report, "node-b") if r.get("changed")]
    assert changed == []


@pytest.mark.skipif(host_cgroup_fs() == "cgroup2fs", reason="needs a cgroup v1 host to hit the blocker")
def test_a_cgroup_v1_host_stops_the_upgrade_before_anything_changes(core, upgrade_inventory, node_b_behind):
    rc, report, _stderr = run_playbook(PLAYBOOK, upgrade_inventory, ["-e", "cluster_upgrade_target=1.35.4"])
    assert rc != 0
    failed = [r for name, r in task_results(report) if r.get("failed")]
    assert len(failed) == 1
    message = failed[0]["msg"]
    assert "node-b runs cgroup v1" in message and "Nothing was changed" in message
    assert node_b(core) == ("v1.34.4", False)


def test_an_up_to_date_cluster_is_a_no_op(core, upgrade_inventory):
    rc, report, stderr = run_playbook(PLAYBOOK, upgrade_inventory, [
        "-e", "cluster_upgrade_target=1.35", "-e", "cluster_upgrade_check_cgroups=false"])
    assert rc == 0, stderr
    plans = plan_lines(report)
    assert len(plans) == 1 and "This pass: nothing" in plans[0][1]  # later passes stay quiet
    assert not any(r.get("changed") for _name, r in task_results(report) + task_results(report, "node-b"))


@pytest.fixture
def inventory_with_control_plane(tmp_path_factory):
    """upgrade_inventory's hosts and a control-plane "host" cp1 standing for node-a (this machine,
    through a local connection): a path with hops needs a control plane in the inventory."""
    import yaml
    path = tmp_path_factory.mktemp("inventory") / "inventory.yml"
    local = {"ansible_connection": "local"}
    path.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": local}, "children": {
        "kube_control_plane": {"hosts": {"cp1": dict(local, cluster_upgrade_node_name="node-a")}},
        "kube_node": {"hosts": {"node-b": local}}}}}))
    return str(path)


def test_hops_without_a_control_plane_in_the_inventory_stop_before_anything_changes(core, upgrade_inventory):
    """The lab inventory's empty groups, or a site's that names only workers: the 1.36 hop needs
    kubeadm on a control plane, so the plan stops, naming the group and both fixes (in check mode:
    were the stop missing, the role would go on to node-b, which is this machine)."""
    rc, report, _stderr = run_playbook(PLAYBOOK, upgrade_inventory, [
        "--check", "-e", "cluster_upgrade_target=1.36", "-e", "cluster_upgrade_check_cgroups=false",
        "-e", '{"cluster_upgrade_available_versions": ["1.35.4", "1.36.3"]}'])
    assert rc != 0
    failed = [(name, r) for name, r in task_results(report) if r.get("failed")]
    assert [name.split(" : ")[-1] for name, _r in failed] == [
        "Stop when the path has hops and the inventory names no control plane"], failed
    message = failed[0][1]["msg"]
    assert "the cluster runs 1.35.4 and cluster_upgrade_target 1.36 takes it through 1.36.3" in message, message
    assert "kube_control_plane (cluster_upgrade_control_plane_group) has no host" in message
    assert "set cluster_upgrade_target to 1.35 to keep this version" in message and "Nothing was changed" in message
    assert node_b(core) == ("v1.35.4", False)


def test_a_path_longer_than_the_passes_left_stops_before_anything_changes(
        core, inventory_with_control_plane, node_b_behind):
    """node-b's resume and the 1.36 hop take two passes; a run with one left must say so up front."""
    rc, report, _stderr = run_playbook(PLAYBOOK, inventory_with_control_plane, [
        "-e", "cluster_upgrade_target=1.36", "-e", "cluster_upgrade_check_cgroups=false", "-e", "cluster_upgrade_passes_left=1",
        "-e", '{"cluster_upgrade_available_versions": ["1.35.4", "1.36.3"]}'])
    assert rc != 0
    failed = [(name, r) for name, r in task_results(report) if r.get("failed")]
    assert [name.split(" : ")[-1] for name, _r in failed] == ["Stop on blockers before anything changes"]
    message = failed[0][1]["msg"]
    assert "needs 2 passes and this run has 1 left" in message and "cluster_upgrade_target=1.35 first" in message
    assert "Nothing was changed" in message
    assert node_b(core) == ("v1.34.4", False)


V1BETA3 = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.35.4\n"


def test_a_v1beta3_kubeadm_file_stops_the_path_to_1_37_or_is_migrated_in_check_mode(
        core, inventory_with_control_plane, tmp_path):
    """The default target (tested: 1.37) from the lab (1.35.4): node-b's kubeadm file (read on the host,
    this machine) is v1beta3. Without the opt-in the run stops before anything changes, naming the
    file, when and how to migrate it; with it, check mode says it would migrate and writes nothing.
    The real migration by kubeadm is tests/integration/labs/test_node_kubeadm_config_migrate.py."""
    config = tmp_path / "kubeadm.yaml"
    config.write_text(V1BETA3)
    extra = ["-e", "cluster_upgrade_check_cgroups=false", "-e", "cluster_upgrade_passes_left=4",
             "-e", '{"cluster_upgrade_available_versions": ["1.35.4", "1.36.3", "1.37.2"]}',
             "-e", '{"cluster_upgrade_kubeadm_config_files": ["%s"]}' % config]
    before = node_b(core)
    rc, report, _stderr = run_playbook(PLAYBOOK, inventory_with_control_plane, ["--check"] + extra)
    assert rc != 0
    failed = [(name, r) for name, r in task_results(report) if r.get("failed")]
    assert [name.split(" : ")[-1] for name, _r in failed] == ["Stop on blockers before anything changes"]
    message = failed[0][1]["msg"]
    assert "The upgrade to 1.37.2 cannot start" in message
    assert "%s on node-b is a kubeadm v1beta3 configuration" % config in message
    lab_minor = ".".join(os.environ.get("LAB_K8S_VERSION", "1.35.4").split(".")[:2])
    assert "while kubeadm on node-b is %s" % lab_minor in message
    assert "cluster_upgrade_migrate_kubeadm_config: true" in message
    assert "kubeadm config migrate --old-config %s" % config in message and "Nothing was changed" in message

    rc, report, stderr = run_playbook(PLAYBOOK, inventory_with_control_plane,
                                      ["--check", "-e", "cluster_upgrade_migrate_kubeadm_config=true"] + extra)
    assert rc == 0, stderr
    plans = plan_lines(report)
    assert plans[0][0].endswith("1.36.3 -> 1.37.2")
    migrations = [r for name, r in task_results(report) if name.endswith("keeping each original beside it")]
    files = migrations[0]["results"][0]["files"]
    assert migrations[0]["changed"] and files[0]["path"] == str(config) and files[0]["migrated"]
    assert files[0]["backup"].startswith(str(config) + ".") and files[0]["backup"].endswith(".v1beta3")
    assert config.read_text() == V1BETA3 and os.listdir(str(tmp_path)) == ["kubeadm.yaml"]
    assert node_b(core) == before
