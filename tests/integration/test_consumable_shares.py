"""Issue 27 item 2 on Kubernetes 1.36+ (a 1.37.2 lab beside the test lab, old_lab.NEW_VERSION):
gpu_operator with gpu_operator_dra_consumable_shares installs the stand-in DRA chart 0.5.0 with
the driver's gate and mode on its kubelet plugin; gpu_sharing then makes a memory class and a
claim template (check mode first, then for real, then again with no change), and pods that
each get their own 8Gi claim from that template pack two per A10 (23028Mi), with their
consumedCapacity and shareID, until the node's GPUs are full and the next one is Unschedulable.
The simulated plugin publishes what NVIDIA's 0.5.0 plugin publishes in that mode (the lab's
sim/gpus.py); allocation is the real scheduler's.
"""

import uuid

import pytest

import old_lab
from conftest import DRIVER, slices_lister
from shares_lab import MANAGED, build_charts, changed_tasks, clients, lab_at, operator_vars, run_role
from waiting import wait_for_object, wait_until_gone

PLAN = "Plan the releases and node labels, refusing what would not work"
SHARING_PLAN = "Render the classes and check them against NVIDIA's driver"
MEMORY_CLASS = {"name": "it-gpu-memory", "strategy": "memory"}
A10_MEMORY = "23028Mi"


@pytest.fixture(scope="module")
def lab(api):
    with lab_at(api, old_lab.NEW_VERSION, 700, lambda m: m >= 36) as kubeconfig:
        yield kubeconfig


@pytest.fixture(scope="module")
def charts(tmp_path_factory):
    return build_charts(tmp_path_factory.mktemp("stand-in-charts"))


@pytest.fixture(scope="module")
def operator(lab, charts):
    """The driver installed in memory mode; removed (with what gpu_sharing made) at the end."""
    rc, results, failed = run_role(lab, "dra.gpu.gpu_operator", operator_vars(charts))
    assert rc == 0, (failed, results["_stderr"][-2000:])
    yield results
    run_role(lab, "dra.gpu.gpu_sharing", {"gpu_sharing_state": "absent"})
    rc, results, failed = run_role(lab, "dra.gpu.gpu_operator", operator_vars(charts, gpu_operator_state="absent"))
    assert rc == 0, failed
    _api, _core, _apps, custom = clients(lab)
    wait_until_gone(slices_lister(custom), lambda s: s["spec"]["driver"] == DRIVER, "the driver's slices", timeout=90)


@pytest.fixture(scope="module")
def team(lab):
    _api, core, _apps, _custom = clients(lab)
    name = "it-team-" + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": name}})
    wait_for_object(core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + name, timeout=30, namespace=name)
    yield name
    core.delete_namespace(name)


def templates_of(custom):
    return sorted((t["metadata"]["namespace"], t["metadata"]["name"],
                   t["spec"]["spec"]["devices"]["requests"][0]["exactly"].get("capacity"))
                  for t in custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaimtemplates",
                                                             label_selector=MANAGED)["items"])


def class_names(custom):
    return sorted(c["metadata"]["name"] for c in custom.list_cluster_custom_object(
        "resource.k8s.io", "v1", "deviceclasses")["items"])


def pod(name, template, node):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                     "terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                     "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


def test_gpu_operator_installs_driver_0_5_with_the_gate_and_mode(lab, operator):
    plan = operator[PLAN]
    dra = plan["releases"][1]
    assert (dra["chart"], dra["chart_version"]) == ("dra-driver-nvidia-gpu", "0.5.0")
    assert dra["values"]["consumableShares"] == "memory"
    assert dra["values"]["featureGates"] == {"ConsumableShares": True}
    assert any("scheduler accounting" in note and "MPS does not" in note for note in plan["notes"])
    _api, _core, apps, custom = clients(lab)
    daemonset = apps.read_namespaced_daemon_set(plan["plugin"]["daemonset"], plan["plugin"]["namespace"])
    gpus = [c for c in daemonset.spec.template.spec.containers if c.name == "gpus"][0]
    env = {e.name: e.value for e in gpus.env}
    assert env["CONSUMABLE_SHARES"] == "memory" and "ConsumableShares=true" in env["FEATURE_GATES"].split(",")
    # The simulated plugin publishes as NVIDIA's does in memory mode, and this API server keeps it.
    a10 = [d for s in slices_lister(custom)()["items"] if s["spec"]["driver"] == DRIVER
           and s["spec"].get("nodeName") == "node-a" for d in s["spec"]["devices"]]
    assert a10 and all(d.get("allowMultipleAllocations") for d in a10)
    assert a10[0]["capacity"]["memory"]["requestPolicy"] == {
        "default": A10_MEMORY, "validRange": {"min": "1Mi", "max": A10_MEMORY, "step": "1Mi"}}


def test_gpu_operator_runs_again_without_a_change(lab, charts, operator):
    rc, results, failed = run_role(lab, "dra.gpu.gpu_operator", operator_vars(charts))
    assert rc == 0, failed
    assert changed_tasks(results) == [], changed_tasks(results)


def test_gpu_sharing_makes_the_memory_class_and_template_and_pods_pack_by_memory(lab, operator, team):
    _api, core, _apps, custom = clients(lab)
    variables = {"gpu_sharing_classes": [MEMORY_CLASS],
                 "gpu_sharing_claim_templates": [{"name": "gpu-8gi", "namespace": team, "class": "it-gpu-memory",
                                                  "memory": "8Gi"}]}
    # Check mode: says what it would change, changes nothing.
    rc, results, failed = run_role(lab, "dra.gpu.gpu_sharing", variables, check=True)
    assert rc == 0, failed
    assert "it-gpu-memory" not in class_names(custom) and templates_of(custom) == []
    assert results["Apply the claim templates that ask for memory of the memory classes"]["changed"]
    words = results["Say what each class enforces"]["results"][0]["msg"]
    assert "scheduler accounting" in words and "nothing caps the memory a pod really uses" in words
    assert "time-slicing combines with it" in words and "MPS does not" in words
    assert "the driver runs mode memory: a claim without a memory request takes the whole GPU" in words

    rc, results, failed = run_role(lab, "dra.gpu.gpu_sharing", variables)
    assert rc == 0, failed
    assert "it-gpu-memory" in class_names(custom)
    assert templates_of(custom) == [(team, "gpu-8gi", {"requests": {"memory": "8Gi"}})]
    rc, results, failed = run_role(lab, "dra.gpu.gpu_sharing", variables)
    assert rc == 0 and changed_tasks(results) == [], (failed, changed_tasks(results))

    # Five pods on node-a (2 x A10, 23028Mi each), each with its own 8Gi claim from the template:
    # two per GPU, and the fifth finds no GPU with 8Gi left.
    for index in range(5):
        core.create_namespaced_pod(team, pod("llm-%d" % index, "gpu-8gi", "node-a"))

    def settled(_item):
        pods = core.list_namespaced_pod(team).items
        running = [p for p in pods if p.status.phase == "Running"]
        refused = [p for p in pods if p.status.phase == "Pending" and any(
            c.type == "PodScheduled" and c.reason == "Unschedulable" for c in p.status.conditions or [])]
        return len(running) == 4 and len(refused) == 1
    wait_for_object(core.list_namespaced_pod, settled, "4 pods Running and 1 Unschedulable", timeout=180,
                    namespace=team)
    claims = custom.list_namespaced_custom_object("resource.k8s.io", "v1", team, "resourceclaims")["items"]
    results = [r for c in claims for r in ((c.get("status") or {}).get("allocation") or {}).get(
        "devices", {}).get("results", [])]
    assert len(results) == 4
    assert all(r["consumedCapacity"] == {"memory": "8Gi"} and r.get("shareID") for r in results), results
    per_device = {}
    for result in results:
        per_device.setdefault(result["device"], []).append(result["shareID"])
    assert sorted(len(ids) for ids in per_device.values()) == [2, 2] and len(set(sum(per_device.values(), []))) == 4

    # A changed request makes the template again; the claims made from the old one stay.
    variables["gpu_sharing_claim_templates"][0]["memory"] = "4Gi"
    rc, results, failed = run_role(lab, "dra.gpu.gpu_sharing", variables)
    assert rc == 0, failed
    assert templates_of(custom) == [(team, "gpu-8gi", {"requests": {"memory": "4Gi"}})]
    assert len(custom.list_namespaced_custom_object("resource.k8s.io", "v1", team, "resourceclaims")["items"]) == 5


def test_mps_is_refused_while_the_driver_shares_by_memory(lab, operator):
    _api, _core, _apps, custom = clients(lab)
    before = class_names(custom)
    rc, results, failed = run_role(lab, "dra.gpu.gpu_sharing", {"gpu_sharing_classes": [
        MEMORY_CLASS, {"name": "it-mps", "strategy": "mps"}]})
    assert rc != 0 and len(failed) == 1, failed
    message = results[SHARING_PLAN]["msg"]
    assert "it-mps asks for MPS, but NVIDIA's DRA driver runs ConsumableShares (memory)" in message
    assert "MPS sharing is not supported when consumable shares is enabled" in message
    assert class_names(custom) == before
