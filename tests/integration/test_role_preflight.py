"""The preflight role against real API servers: the test lab (1.35.4) and a 1.34.4 lab."""

import old_lab
from conftest import run_playbook, task_results

OLD_VERSION = old_lab.OLD_VERSION


def preflight_play(**role_vars):
    return [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": "dra.gpu.preflight", "vars": role_vars}]}]


def readiness(report):
    return [r for name, r in task_results(report) if name.endswith("Check the cluster for DRA")][0]


def failure(report):
    return [r for name, r in task_results(report) if name.endswith("Stop on blockers")][0]


def test_the_lab_at_1_35_is_ready():
    rc, report, stderr = run_playbook(preflight_play())
    assert rc == 0, stderr
    result = readiness(report)
    assert result["ready"] and result["server_version"] == "1.35.4"
    statuses = dict((c["name"], c["status"]) for c in result["checks"])
    # The lab stands in for kubeadm: its simulator writes kube-system/kubeadm-config.
    assert statuses == {"server_version": "pass", "resource_api": "pass", "distribution": "pass", "gpu_nodes": "pass",
                        "kubelet_versions": "pass", "container_runtime": "pass", "device_plugin": "pass",
                        # The lab's nodes are simulated: no host to read the cgroup file system from.
                        "cgroup_v2": "warn",
                        # 1.35: slices keep no device taints, no DeviceTaintRules (issue 30)
                        "device_taints": "warn", "dra_features": "pass"}
    assert result["gpu_nodes"] == ["node-a", "node-b"]
    # What the 1.35.4 API server really serves, each learned by a server-side dry run (device
    # status, which a dry run cannot write, from the version's defaults), and what 1.37 turns on.
    features = result["dra_features"]
    assert (features["server_version"], features["target_version"]) == ("1.35.4", "1.37")
    assert dict((f["name"], (f["on"], f["probed"])) for f in features["features"]) == {
        "prioritized_list": (True, True), "admin_access": (True, True), "partitionable_devices": (False, True),
        "consumable_capacity": (False, True), "device_taints": (False, True), "device_taint_rules": (False, True),
        "extended_resource": (False, True), "device_status": (True, False)}
    assert not any(f["flipped"] for f in features["features"])
    assert all(f["target_on"] for f in features["features"])
    lines = [r["msg"] for name, r in task_results(report) if name.endswith("Report the DRA features, running and "
                                                                           "at the target")][0]
    assert "consumable capacity (capacity.requests, memory shares) - 1.35.4: off (a server-side dry run of a " \
           "ResourceClaim with capacity.requests dropped it); 1.37: on (beta)" in lines


def test_a_1_34_cluster_fails_with_the_path_to_follow(old_cluster):
    rc, report, _stderr = run_playbook(preflight_play(preflight_available_versions=["1.34.4", "1.35.3", "1.35.4"]),
                                       env={"KUBECONFIG": old_cluster})
    assert rc != 0
    result = readiness(report)
    assert result["server_version"] == OLD_VERSION and not result["ready"]
    assert [b["name"] for b in result["blockers"]] == ["server_version", "kubelet_versions"]
    assert [h["version"] for h in result["upgrade_path"]] == ["1.35.4"]
    message = failure(report)["msg"]
    assert "runs 1.34.4; DRA needs 1.35 or later" in message
    assert "1.34.4 -> 1.35.4" in message and "playbooks/upgrade.yml" in message


def test_report_only_mode_does_not_fail(old_cluster):
    rc, report, stderr = run_playbook(preflight_play(preflight_fail_on_blockers=False), env={"KUBECONFIG": old_cluster})
    assert rc == 0, stderr
    assert not readiness(report)["ready"]


def test_a_gpu_host_read_once_serves_preflight_and_the_upgrade_plan(upgrade_inventory):
    """host_facts reads node-b (this machine, through a local connection) once: the upgrade's plan
    after preflight takes the answer from the fact, not from the host, and both judge it alike."""
    import subprocess
    cgroup_fs = subprocess.run(["stat", "-fc", "%T", "/sys/fs/cgroup/"], capture_output=True, text=True,
                               check=True).stdout.strip()
    plays = [{"hosts": "localhost", "gather_facts": False, "roles": [
        {"role": "dra.gpu.preflight", "vars": {"preflight_gpu_hosts": ["node-b"], "preflight_fail_on_blockers": False}}]},
        {"hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": "Plan as cluster_upgrade does", "ansible.builtin.include_role": {
                "name": "dra.gpu.cluster_upgrade", "tasks_from": "plan"},
             "vars": {"cluster_upgrade_target": "1.35", "cluster_upgrade_available_versions": ["1.35.4"]}}]}]
    rc, report, stderr = run_playbook(plays, upgrade_inventory)
    results = task_results(report)
    reads = [r for name, r in results if name.endswith("Read the cgroup file system of each host not read yet")]
    assert len(reads) == 2, [name for name, _r in results]
    assert [item["stdout"] for item in reads[0]["results"]] == [cgroup_fs]
    assert [item.get("skipped") for item in reads[1]["results"]] == [True]
    cgroup_check = dict((c["name"], c) for c in readiness(report)["checks"])["cgroup_v2"]
    plan = [r for name, r in results if name.endswith("Plan the upgrade from the live cluster")][0]
    if cgroup_fs == "cgroup2fs":
        assert rc == 0 and cgroup_check["status"] == "pass" and plan["blockers"] == [], stderr
    else:
        # This machine runs cgroup v1: preflight (report only) and the plan both name node-b.
        assert cgroup_check["status"] == "fail" and cgroup_check["nodes"] == ["node-b"]
        assert [b["code"] for b in plan["blockers"]] == ["cgroup_v1"] and "node-b" in plan["blockers"][0]["message"]
        assert rc != 0
