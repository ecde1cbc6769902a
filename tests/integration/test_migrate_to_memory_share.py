"""dra.gpu.gpu_workload_migrate with memory (issue 27 item 4): a Deployment on nvidia.com/gpu: 1
(node-a, the simulated device plugin) moved to a claim template asking for an 8Gi share of a
GPU (node-b, the simulated NVIDIA driver with ConsumableShares in memory mode), allocated by the
real scheduler of a 1.36+ lab (share_lab), then reverted; refused, with nothing changed, where no
device allows the share, for nvidia.com/gpu: 2, and on Kubernetes 1.35, whose API server drops
the claim's capacity request."""

import json

import pytest

import shares_lab
from conftest import (DEVICE_PLUGIN_LABEL, PAUSE, deployment, gpu_container, offered, on_node, run_module,
                      run_playbook, task_results)
from waiting import wait_for_object

ANNOTATION = "dra.gpu/gpu-migration"


@pytest.fixture(scope="module")
def shares_cluster():
    with shares_lab.started("migrate-share") as kubeconfig:
        yield kubeconfig


@pytest.fixture
def on_device_plugin(shares_cluster):
    """Namespace, share class and Deployment llm (2 replicas, nvidia.com/gpu: 1 each) running on
    node-a's device plugin; node-b publishes its four L4s as shares."""
    api, core, apps, custom = shares_lab.clients(shares_cluster)
    ns = shares_lab.namespace(core, "it-share-")
    shares_lab.share_class(custom)
    plugin = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nvidia-device-plugin-daemonset"},
              "spec": {"selector": {"matchLabels": DEVICE_PLUGIN_LABEL},
                       "template": {"metadata": {"labels": DEVICE_PLUGIN_LABEL},
                                    "spec": {"nodeSelector": on_node("node-a"),
                                             "containers": [{"name": "plugin", "image": PAUSE}]}}}}
    apps.create_namespaced_daemon_set(ns, plugin)
    wait_for_object(core.list_node, lambda n: offered(n) == "2", "node-a offering nvidia.com/gpu: 2", timeout=60,
                    field_selector="metadata.name=node-a")
    apps.create_namespaced_deployment(ns, deployment("llm", {"containers": [gpu_container(1)],
                                                             "terminationGracePeriodSeconds": 0}, 2))
    wait_for_object(apps.list_namespaced_deployment, lambda d: (d.get("status") or {}).get("readyReplicas") == 2,
                    "deployment llm ready on node-a", timeout=90, namespace=ns)
    yield {"ns": ns, "core": core, "apps": apps, "custom": custom, "env": {"KUBECONFIG": shares_cluster}}
    core.delete_namespace(ns)


def templates(custom, ns):
    return [t["metadata"]["name"] for t in custom.list_namespaced_custom_object(
        "resource.k8s.io", "v1", ns, "resourceclaimtemplates")["items"]]


def running_on(core, ns):
    return sorted(p.spec.node_name for p in core.list_namespaced_pod(ns, label_selector="app=llm").items
                  if p.status.phase == "Running" and not p.metadata.deletion_timestamp)


def test_a_deployment_moves_to_8gi_shares_of_one_gpu_and_back(on_device_plugin):
    lab = on_device_plugin
    ns, core, apps, custom, env = lab["ns"], lab["core"], lab["apps"], lab["custom"], lab["env"]
    before = apps.read_namespaced_deployment("llm", ns).to_dict()
    assert running_on(core, ns) == ["node-a", "node-a"]
    args = {"name": "llm", "namespace": ns, "device_class": shares_lab.CLASS, "memory": "8Gi", "timeout": 120}

    preview = run_module("dra.gpu.gpu_workload_migrate", args, check_mode=True, diff=True, env=env)
    assert preview.get("changed") and not preview.get("failed"), preview
    [diff] = preview["diff"] if isinstance(preview["diff"], list) else [preview["diff"]]
    assert diff["after"]["claim"]["spec"]["spec"]["devices"]["requests"] == [
        {"name": "main", "exactly": {"deviceClassName": shares_lab.CLASS, "capacity": {"requests": {"memory": "8Gi"}}}}]
    assert apps.read_namespaced_deployment("llm", ns).metadata.generation == before["metadata"]["generation"]
    assert templates(custom, ns) == []

    done = run_module("dra.gpu.gpu_workload_migrate", args, env=env)
    assert done.get("changed") and not done.get("failed"), done.get("msg")
    assert done["claim"] == {"kind": "ResourceClaimTemplate", "name": "llm-gpu", "device_class": shares_lab.CLASS,
                             "memory": "8Gi"}
    assert [(p["node"], p["ready"], p["allocated"], p["consumed"]) for p in done["pods"]] == \
        [("node-b", True, True, [{"memory": "8Gi"}])] * 2, done["pods"]
    # The scheduler's allocator takes the first device that fits: both 8Gi shares on one L4 (23034Mi).
    assert len(set(d for p in done["pods"] for d in p["devices"])) == 1, done["pods"]
    assert any("(share of 8Gi memory)" in line for line in done["report"]), done["report"]
    # What the scheduler wrote: each pod's own claim, a share of the device with its shareID.
    claims = custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims")["items"]
    results = [r for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
    assert [r["consumedCapacity"] for r in results] == [{"memory": "8Gi"}] * 2
    assert len(set(r["shareID"] for r in results)) == 2
    kept = json.loads(apps.read_namespaced_deployment("llm", ns).metadata.annotations[ANNOTATION])
    assert kept["memory"] == "8Gi"
    assert running_on(core, ns) == ["node-b", "node-b"]

    again = run_module("dra.gpu.gpu_workload_migrate", args, env=env)
    assert not again.get("changed") and again["status"] == "migrated" and again["claim"]["memory"] == "8Gi", again
    other = run_module("dra.gpu.gpu_workload_migrate", dict(args, memory="4Gi"), env=env)
    assert not other.get("changed") and "revert it first to move it to a share of 4Gi" in other["message"], other

    back = run_module("dra.gpu.gpu_workload_migrate", dict(args, state="reverted"), env=env)
    assert back.get("changed") and not back.get("failed"), back.get("msg")
    assert apps.read_namespaced_deployment("llm", ns).to_dict()["spec"]["template"] == before["spec"]["template"]
    assert running_on(core, ns) == ["node-a", "node-a"] and templates(custom, ns) == []


def test_shares_no_device_allows_and_two_cards_are_refused_before_anything_changes(on_device_plugin):
    lab = on_device_plugin
    ns, apps, custom, env = lab["ns"], lab["apps"], lab["custom"], lab["env"]
    generation = apps.read_namespaced_deployment("llm", ns).metadata.generation
    args = {"name": "llm", "namespace": ns, "device_class": shares_lab.CLASS}
    too_big = run_module("dra.gpu.gpu_workload_migrate", dict(args, memory="24Gi"), env=env)
    assert too_big.get("failed") and not too_big.get("changed"), too_big
    # node-a's A10s are withheld while its device plugin runs: only node-b's L4s are published.
    assert "can give a share of 24Gi: the most one allows is 23034Mi (gpu-" in too_big["msg"], too_big["msg"]
    not_a_quantity = run_module("dra.gpu.gpu_workload_migrate", dict(args, memory="8 GB"), env=env)
    assert not_a_quantity.get("failed") and "memory is '8 GB', which is not a quantity" in not_a_quantity["msg"]
    two = deployment("two", {"containers": [gpu_container(2)]}, 1)
    apps.create_namespaced_deployment(ns, two)
    refused = run_module("dra.gpu.gpu_workload_migrate", dict(args, name="two", memory="8Gi"), env=env)
    assert refused.get("failed") and "container main asks nvidia.com/gpu: 2" in refused["msg"], refused
    assert apps.read_namespaced_deployment("llm", ns).metadata.generation == generation
    assert apps.read_namespaced_deployment("two", ns).metadata.generation == 1
    assert templates(custom, ns) == []


def test_on_1_35_the_share_is_refused_because_the_api_server_drops_it():
    with shares_lab.started("migrate-share", offset=650, k8s_version="1.35.4") as kubeconfig:
        _api, core, apps, custom = shares_lab.clients(kubeconfig)
        ns = shares_lab.namespace(core, "it-share-")
        shares_lab.share_class(custom)
        apps.create_namespaced_deployment(ns, deployment("llm", {"containers": [gpu_container(1)]}, 1))
        refused = run_module("dra.gpu.gpu_workload_migrate", {"name": "llm", "namespace": ns, "memory": "8Gi",
                                                              "device_class": shares_lab.CLASS},
                             env={"KUBECONFIG": kubeconfig})
        assert refused.get("failed") and not refused.get("changed"), refused
        assert "memory 8Gi cannot be asked for here: this API server (v1.35.4) drops a claim's capacity requests" \
            in refused["msg"] and "Upgrade to Kubernetes 1.36 or later" in refused["msg"], refused["msg"]
        live = apps.read_namespaced_deployment("llm", ns)
        assert live.metadata.generation == 1 and ANNOTATION not in (live.metadata.annotations or {})
        assert templates(custom, ns) == []
        # the probe was a dry run: no claim anywhere
        assert custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaims")["items"] == []


def test_the_role_moves_a_workload_to_the_share_it_is_given_and_back(on_device_plugin):
    lab = on_device_plugin
    ns, core, custom, env = lab["ns"], lab["core"], lab["custom"], lab["env"]

    def role(state, **variables):
        play = [{"hosts": "localhost", "gather_facts": False, "connection": "local", "roles": [{
            "role": "dra.gpu.workload_migration", "vars": dict({
                "workload_migration_state": state, "workload_migration_device_class": shares_lab.CLASS,
                "workload_migration_timeout": 120,
                "workload_migration_workloads": [{"namespace": ns, "name": "llm"}]}, **variables)}]}]
        rc, report, stderr = run_playbook(play, env=env)
        results = dict((name.split(" : ", 1)[-1], result) for name, result in task_results(report))
        return rc, results, stderr

    rc, results, stderr = role("migrated", workload_migration_memory="12Gi")
    assert rc == 0, (stderr[-2000:], [r.get("msg") for r in results.values() if r.get("failed")])
    moved = results["Bring this workload to its state, migrated: Deployment %s/llm" % ns]
    assert moved["claim"]["memory"] == "12Gi" and [p["consumed"] for p in moved["pods"]] == [[{"memory": "12Gi"}]] * 2
    # two 12Gi shares do not fit one L4 (23034Mi): the scheduler put them on two
    assert len(set(d for p in moved["pods"] for d in p["devices"])) == 2, moved["pods"]
    rc, results, stderr = role("reverted")
    assert rc == 0, (stderr[-2000:], [r.get("msg") for r in results.values() if r.get("failed")])
    assert running_on(core, ns) == ["node-a", "node-a"] and templates(custom, ns) == []
    bad, results, _stderr = role("migrated", workload_migration_memory="12 GiB")
    assert bad != 0 and "workload_migration_memory is '12 GiB', which is not a quantity" in " ".join(
        str(r.get("msg")) for r in results.values() if r.get("failed"))
