"""`make demo` as it runs for users: site.yml, then demo.yml, with playbooks/inventory/lab.yml, on
a lab at the current release (old_lab.NEW_VERSION, 1.37.2) in driver mode plugin. The inventory
asks for memory shares (gpu_operator_dra_consumable_shares: memory and a memory-share class), so
the demo packs 4Gi and 8Gi workloads with whole GPUs and with shares, for real, shows what the
scheduler placed beside gpu_fit's plan, and moves a Deployment from nvidia.com/gpu: 1 to 8Gi of a
GPU; then it leaves nothing of its own behind.

The demo's other behaviours (keep, failures) are tested on the test lab in
test_site_leaves_nothing_after_demo.py, where the memory-share play says how to get shares.
"""

import os

import pytest
from kubernetes import client, config

import old_lab
from conftest import run_playbook, task_results
from shares_lab import build_charts
from test_site_leaves_nothing_after_demo import cluster_objects

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INVENTORY = os.path.join(ROOT, "playbooks", "inventory", "lab.yml")


def settings():
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + 900, "driver_mode": "plugin",
            "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-%s-demo" % old_lab.NEW_VERSION)}


@pytest.fixture(scope="module")
def current_lab():
    kubeconfig = old_lab.start(old_lab.NEW_VERSION, **settings())
    yield kubeconfig
    old_lab.stop(old_lab.NEW_VERSION, **settings())


def play(name, kubeconfig, charts):
    rc, report, stderr = run_playbook(os.path.join(ROOT, "playbooks", name), inventory=INVENTORY,
                                      env={"KUBECONFIG": kubeconfig, "DRA_GPU_LAB_CHARTS": charts})
    results = task_results(report)
    failed = ["%s: %s" % (task, result.get("msg")) for task, result in results if result.get("failed")]
    assert rc == 0, "%s failed: %s %s" % (name, failed, stderr[-2000:])
    return dict(results)


def test_make_demo_packs_with_memory_shares_as_planned_and_leaves_nothing(current_lab, tmp_path):
    charts = build_charts(tmp_path / "charts")
    site = play("site.yml", current_lab, charts)
    # site.yml's preflight on the current release: every DRA feature is served, each learned by a
    # server-side dry run (device status from the version's defaults), as 1.37's gates say.
    features = site["dra.gpu.preflight : Check the cluster for DRA"]["dra_features"]
    assert (features["server_version"], features["target_version"]) == (old_lab.NEW_VERSION, "1.37")
    assert dict((f["name"], (f["on"], f["probed"])) for f in features["features"]) == {
        "prioritized_list": (True, True), "admin_access": (True, True), "partitionable_devices": (True, True),
        "consumable_capacity": (True, True), "device_taints": (True, True), "device_taint_rules": (True, True),
        "extended_resource": (True, True), "device_status": (True, False)}
    assert not any(f["flipped"] for f in features["features"])
    api = config.new_client_from_config(current_lab)
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    before = cluster_objects(core, custom)

    results = play("demo.yml", current_lab, charts)
    packed = results["Show what the scheduler placed, with whole GPUs and with memory shares"]["msg"]
    # The seed's cluster: 2 A10 (23028Mi) and 4 L4 (23034Mi). A whole GPU holds one pod; a memory
    # share of 4Gi five per card (20Gi of 22.5Gi), of 8Gi two per card.
    assert packed[:4] == [
        "40 pods with whole GPUs: the plan said 6 fit, the scheduler placed 6 and left 34 Unschedulable, as planned",
        "40 pods with memory shares: the plan said 30 fit, the scheduler placed 30 and left 10 Unschedulable, "
        "as planned",
        "20 pods with whole GPUs: the plan said 6 fit, the scheduler placed 6 and left 14 Unschedulable, as planned",
        "20 pods with memory shares: the plan said 12 fit, the scheduler placed 12 and left 8 Unschedulable, "
        "as planned"], packed
    runs = results["Run the workloads with whole GPUs, then with memory shares, and compare with the plan"]["results"]
    shares = [r for r in runs if r["item"][1] == "memory_shares"]
    assert all(a["consumed"] == {"memory": r["item"][0]["memory"]} and a["share_id"]
               for r in shares for a in r["allocations"]), shares
    report = results["dra.gpu.workload_migration : Report it"]["msg"]
    assert "after: ResourceClaimTemplate inference-gpu, request server: 8Gi of one nvidia-gpu-shared device" in report, \
        report
    assert any("(share of 8Gi memory)" in line for line in report), report
    assert cluster_objects(core, custom) == before
