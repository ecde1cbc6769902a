"""playbooks/site.yml upgrades a cluster only when asked (issue 39).

Without cluster_upgrade_target, a cluster older than the run needs (1.35 for DRA, 1.36 for
gpu_operator_dra_consumable_shares) stops the run in its first play, before any change, with the
upgrade plan to that version and the command line that asks for it; what the cluster holds is
read before and after and must be equal. With cluster_upgrade_target the upgrade passes plan
(check mode: the lab has no hosts to upgrade, so the plan is all that can run).
"""

import json
import os

from kubernetes import client, config

import old_lab
from conftest import run_playbook, task_results

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOK = os.path.join(ROOT, "playbooks", "site.yml")
GATE = "Stop with the upgrade plan and the command that asks for it"


def cluster_state(kubeconfig):
    """What a run that changes nothing leaves equal: nodes (labels, taints, cordons), namespaces,
    Helm releases (their Secrets, which hold each revision) and DeviceClasses."""
    api = config.new_client_from_config(config_file=kubeconfig)
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    nodes = {n.metadata.name: (n.metadata.labels, str(n.spec.taints), bool(n.spec.unschedulable))
             for n in core.list_node().items}
    releases = sorted((s.metadata.namespace, s.metadata.name)
                      for s in core.list_secret_for_all_namespaces(label_selector="owner=helm").items)
    classes = sorted(c["metadata"]["name"] for c in custom.list_cluster_custom_object(
        "resource.k8s.io", "v1", "deviceclasses")["items"]) if has_v1_device_classes(api) else None
    return {"nodes": nodes, "namespaces": sorted(n.metadata.name for n in core.list_namespace().items),
            "helm releases": releases, "deviceclasses": classes}


def has_v1_device_classes(api):
    groups = client.ApisApi(api).get_api_versions().groups
    return any(g.name == "resource.k8s.io" and any(v.version == "v1" for v in g.versions) for g in groups)


def run_site(kubeconfig, *extra):
    return run_playbook(PLAYBOOK, None, list(extra), env={"KUBECONFIG": kubeconfig, "K8S_AUTH_KUBECONFIG": kubeconfig})


def failures(report):
    return [(name, r) for play in report["plays"] for task in play["tasks"] for name, r in
            [(task["task"]["name"], task["hosts"].get("localhost", {}))] if r.get("failed")]


def test_an_older_cluster_without_an_upgrade_request_stops_before_any_change_with_the_plan(old_cluster):
    before = cluster_state(old_cluster)
    rc, report, stderr = run_site(old_cluster)
    assert rc != 0, stderr
    [(name, result)] = failures(report)
    assert name == GATE, (name, result)
    message = result["msg"]
    assert message.startswith("The cluster runs Kubernetes %s, older than this run needs: DRA needs Kubernetes "
                              "1.35 or later." % old_lab.OLD_VERSION), message
    assert "nothing was changed" in message
    assert "The upgrade it would run: %s -> 1.35, one minor per pass" % old_lab.OLD_VERSION in message
    assert "(control-plane, kubelet" in message or "(worker, kubelet" in message
    assert message.endswith("%s -e cluster_upgrade_target=1.35 (add --check first to see each pass's plan "
                            "without changing anything)." % PLAYBOOK), message
    # Nothing after the first play ran: no pass planned, no role started.
    assert [play["play"]["name"] for play in report["plays"]][0].startswith("Stop before any change")
    assert not any(r.get("changed") for _name, r in task_results(report))
    assert cluster_state(old_cluster) == before


def test_memory_shares_on_1_35_stop_naming_1_36_and_how_to_ask(api):
    kubeconfig = os.environ["KUBECONFIG"]
    before = cluster_state(kubeconfig)
    rc, report, stderr = run_site(kubeconfig, "-e", "gpu_operator_dra_consumable_shares=memory")
    assert rc != 0, stderr
    [(name, result)] = failures(report)
    assert name == GATE, (name, result)
    message = result["msg"]
    assert "older than this run needs: gpu_operator_dra_consumable_shares: memory" in message, message
    assert "needs Kubernetes 1.36+ or the feature gate DRAConsumableCapacity" in message
    assert "-> 1.36, one minor per pass" in message
    assert "-e cluster_upgrade_target=1.36" in message
    assert cluster_state(kubeconfig) == before


def test_with_the_request_the_upgrade_passes_plan(old_cluster, tmp_path):
    """cp1 stands for node-a as its control-plane host (this machine, through a local connection), so the
    hop can be planned; check mode ends each pass after its plan. The later plays meet a 1.34 cluster
    that check mode did not upgrade: what they do there is preflight's test, not this one's."""
    inventory = tmp_path / "inventory.yml"
    local = {"ansible_connection": "local"}
    inventory.write_text(json.dumps({"all": {"hosts": {"localhost": local}, "children": {
        "kube_control_plane": {"hosts": {"cp1": dict(local, cluster_upgrade_node_name="node-a")}}}}}))
    rc, report, _stderr = run_playbook(PLAYBOOK, str(inventory), [
        "--check", "-e", "cluster_upgrade_target=1.35", "-e", "cluster_upgrade_check_cgroups=false",
        "-e", '{"cluster_upgrade_available_versions": ["1.34.4", "1.35.4"]}'],
        env={"KUBECONFIG": old_cluster, "K8S_AUTH_KUBECONFIG": old_cluster})
    ran = [name for name, r in task_results(report) if not r.get("skipped")]
    assert GATE not in ran
    plans = [r["msg"] for name, r in task_results(report) if name.endswith("Show the plan") and not r.get("skipped")]
    assert len(plans) == 1, (ran, failures(report))
    assert plans[0][0] == "API server at %s, target 1.35.4, hops: 1.35.4" % old_lab.OLD_VERSION, plans
    assert "This pass: kubeadm upgrade apply 1.35.4, then every node" in plans[0][1], plans
    assert not any(r.get("changed") for _name, r in task_results(report) + task_results(report, "cp1")), rc
