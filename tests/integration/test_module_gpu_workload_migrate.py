"""dra.gpu.gpu_workload_migrate against the lab: a Deployment on nvidia.com/gpu (node-a, the
simulated device plugin) moved to a claim (node-b, the simulated DRA driver) by the real
controllers and scheduler; check mode, a second run, a rollout that cannot succeed and is
rolled back, and state=reverted."""

import json

import pytest
from kubernetes import client

from conftest import DRIVER, deployment, gpu_container, run_module
from waiting import wait_for_object

ANNOTATION = "dra.gpu/gpu-migration"


def ready(apps, ns, name):
    return wait_for_object(apps.list_namespaced_deployment, lambda d: (d.get("status") or {}).get("readyReplicas")
                           == d["spec"]["replicas"] and (d.get("status") or {}).get("replicas") == d["spec"]["replicas"],
                           "deployment %s ready" % name, timeout=90, namespace=ns, field_selector="metadata.name=" + name)


def running_pods(core, ns, app):
    pods = core.list_namespaced_pod(ns, label_selector="app=" + app).items
    return sorted((p.metadata.name, p.spec.node_name) for p in pods
                  if p.status.phase == "Running" and not p.metadata.deletion_timestamp)


def templates(custom, ns):
    return [t["metadata"]["name"] for t in custom.list_namespaced_custom_object(
        "resource.k8s.io", "v1", ns, "resourceclaimtemplates")["items"]]


@pytest.fixture
def llm(api, two_gpu_managers):
    ns = two_gpu_managers
    apps = client.AppsV1Api(api)
    body = deployment("llm", {"containers": [gpu_container(1)], "terminationGracePeriodSeconds": 0}, 1)
    body["metadata"]["labels"] = {"team": "inference"}
    apps.create_namespaced_deployment(ns, body)
    ready(apps, ns, "llm")
    return ns


def test_a_deployment_moves_to_a_claim_and_back(api, custom, llm, gpu_class):
    ns = llm
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    before = apps.read_namespaced_deployment("llm", ns).to_dict()
    assert [node for _pod, node in running_pods(core, ns, "llm")] == ["node-a"]
    args = {"name": "llm", "namespace": ns, "device_class": gpu_class, "timeout": 120}

    preview = run_module("dra.gpu.gpu_workload_migrate", args, check_mode=True, diff=True)
    assert preview.get("changed") and not preview.get("failed"), preview
    [diff] = preview["diff"] if isinstance(preview["diff"], list) else [preview["diff"]]
    old_main = diff["before"]["template"]["spec"]["containers"][0]
    new_main = diff["after"]["template"]["spec"]["containers"][0]
    assert old_main["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert new_main["resources"] == {"claims": [{"name": "gpu", "request": "main"}]}
    assert diff["after"]["claim"]["spec"]["spec"]["devices"]["requests"] == [
        {"name": "main", "exactly": {"deviceClassName": gpu_class, "count": 1}}]
    after_preview = apps.read_namespaced_deployment("llm", ns)
    assert after_preview.metadata.generation == before["metadata"]["generation"]
    assert ANNOTATION not in (after_preview.metadata.annotations or {}) and templates(custom, ns) == []

    done = run_module("dra.gpu.gpu_workload_migrate", args)
    assert done.get("changed") and not done.get("failed"), done
    [pod] = done["pods"]
    assert (pod["node"], pod["ready"], pod["allocated"]) == ("node-b", True, True), pod
    assert pod["devices"][0].startswith(DRIVER + "/node-b/gpu-"), pod
    assert done["claim"] == {"kind": "ResourceClaimTemplate", "name": "llm-gpu", "device_class": gpu_class}
    live = apps.read_namespaced_deployment("llm", ns).to_dict()
    assert live["metadata"]["labels"] == {"team": "inference"}
    container = live["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] is None and container["image"] == "registry.k8s.io/pause:3.10"
    kept = json.loads(live["metadata"]["annotations"][ANNOTATION])
    assert kept["template"]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert [node for _pod, node in running_pods(core, ns, "llm")] == ["node-b"]
    assert templates(custom, ns) == ["llm-gpu"]

    again = run_module("dra.gpu.gpu_workload_migrate", args)
    assert not again.get("changed") and not again.get("failed") and again["status"] == "migrated", again
    assert apps.read_namespaced_deployment("llm", ns).metadata.generation == live["metadata"]["generation"]

    back = run_module("dra.gpu.gpu_workload_migrate", dict(args, state="reverted"))
    assert back.get("changed") and not back.get("failed"), back
    restored = apps.read_namespaced_deployment("llm", ns).to_dict()
    assert restored["spec"]["template"] == before["spec"]["template"]
    assert ANNOTATION not in (restored["metadata"]["annotations"] or {})
    assert [node for _pod, node in running_pods(core, ns, "llm")] == ["node-a"]
    assert templates(custom, ns) == []
    twice = run_module("dra.gpu.gpu_workload_migrate", dict(args, state="reverted"))
    assert not twice.get("changed") and twice["status"] == "device-plugin", twice


@pytest.fixture
def class_matching_nothing(custom):
    name = "lab-it-no-such-gpu"
    expression = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == 'No Such GPU'"
    custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression}}]}})
    yield name
    custom.delete_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name)


def test_a_rollout_that_cannot_succeed_is_rolled_back_and_the_old_pod_keeps_running(api, custom, llm,
                                                                                    class_matching_nothing):
    ns = llm
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    before = apps.read_namespaced_deployment("llm", ns).to_dict()
    pods_before = running_pods(core, ns, "llm")
    failed = run_module("dra.gpu.gpu_workload_migrate", {"name": "llm", "namespace": ns, "timeout": 120,
                                                         "device_class": class_matching_nothing})
    assert failed.get("failed") and failed.get("rolled_back"), failed
    assert "cannot allocate" in failed["msg"] and "llm-gpu" in failed["msg"], failed["msg"]
    assert failed["rollback"]["state"] == "done", failed
    live = apps.read_namespaced_deployment("llm", ns).to_dict()
    assert live["spec"]["template"] == before["spec"]["template"]
    assert ANNOTATION not in (live["metadata"]["annotations"] or {})
    # The Deployment never took the old pod away (maxUnavailable rounds down to 0 for one replica).
    assert running_pods(core, ns, "llm") == pods_before
    assert templates(custom, ns) == []


def test_what_cannot_be_migrated_is_refused_and_nothing_changes(api, custom, llm):
    ns = llm
    apps = client.AppsV1Api(api)
    generation = apps.read_namespaced_deployment("llm", ns).metadata.generation
    missing_class = run_module("dra.gpu.gpu_workload_migrate", {"name": "llm", "namespace": ns,
                                                                "device_class": "no-such-class"})
    assert missing_class.get("failed") and not missing_class.get("changed"), missing_class
    assert "DeviceClass no-such-class does not exist" in missing_class["msg"], missing_class["msg"]
    job = run_module("dra.gpu.gpu_workload_migrate", {"kind": "Job", "name": "llm", "namespace": ns})
    assert job.get("failed") and "cannot change" in job["msg"], job
    absent = run_module("dra.gpu.gpu_workload_migrate", {"name": "nope", "namespace": ns})
    assert absent.get("failed") and "does not exist" in absent["msg"], absent
    bad = run_module("dra.gpu.gpu_workload_migrate", {"name": "Not_A_Name", "namespace": ns, "timeout": 0})
    assert bad.get("failed") and "name" in bad["msg"] and "timeout" in bad["msg"], bad
    assert apps.read_namespaced_deployment("llm", ns).metadata.generation == generation
    assert templates(custom, ns) == []
