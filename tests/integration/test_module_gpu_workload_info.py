"""dra.gpu.gpu_workload_info against the lab: workloads on nvidia.com/gpu (served by the
simulated device plugin on node-a, placed by the real scheduler) beside workloads on DRA claims
(node-b), and a node served both ways once the lab is told to allow it."""

from kubernetes import client

from conftest import BOTH_GPU_MANAGERS, DRIVER, PAUSE, deployment, gpu_container, run_module, slices_lister
from waiting import wait_for_object


def test_workloads_on_the_device_plugin_and_on_claims_are_told_apart(api, custom, two_gpu_managers, gpu_class):
    ns = two_gpu_managers
    core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
    # node-b offers no nvidia.com/gpu (DRA only): the scheduler can place these on node-a alone
    apps.create_namespaced_deployment(ns, deployment("llm", {"containers": [gpu_container(1)]}, 2))
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
        "metadata": {"name": "one-gpu"}, "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": gpu_class}}]}}}})
    notebook = {"containers": [{"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}
    apps.create_namespaced_deployment(ns, deployment("notebook", notebook, 1))
    batch.create_namespaced_cron_job(ns, {"metadata": {"name": "nightly"}, "spec": {
        "schedule": "0 3 * * *", "suspend": True, "jobTemplate": {"spec": {"parallelism": 2, "template": {
            "spec": {"restartPolicy": "Never", "containers": [gpu_container(4)]}}}}}})
    for app in ("llm", "notebook"):
        wait_for_object(apps.list_namespaced_deployment, lambda d: (d.get("status") or {}).get("readyReplicas")
                        == d["spec"]["replicas"], "deployment %s ready" % app, timeout=90, namespace=ns,
                        field_selector="metadata.name=" + app)
    # A third GPU on node-a does not exist: this pod stays Pending, with no node. Created only
    # once llm's two pods hold node-a's two GPUs: before, the scheduler could give it one of
    # them and leave an llm pod Pending instead (seen with the machine's cores busy).
    core.create_namespaced_pod(ns, {"metadata": {"name": "stray"}, "spec": {"containers": [gpu_container(1)]}})
    wait_for_object(core.list_namespaced_pod, lambda p: any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
        for c in (p.get("status") or {}).get("conditions") or []), "pod stray refused by the scheduler",
        timeout=60, namespace=ns, field_selector="metadata.name=stray")

    result = run_module("dra.gpu.gpu_workload_info", {"namespaces": [ns]})
    assert not result.get("failed"), result
    found = dict(((w["kind"], w["name"]), w) for w in result["workloads"])
    assert sorted(found) == [("CronJob", "nightly"), ("Deployment", "llm"), ("Deployment", "notebook"),
                             ("Pod", "stray")]
    llm = found[("Deployment", "llm")]
    assert (llm["asks"], llm["replicas"], llm["gpus_per_pod"]) == ("device-plugin", 2, 1)
    assert [(p["node"], p["node_served_by"], p["phase"]) for p in llm["pods"]] == [
        ("node-a", "device-plugin", "Running")] * 2
    book = found[("Deployment", "notebook")]
    wanted = ("dra", 0, [{"name": "gpu", "template": "one-gpu"}])
    assert (book["asks"], book["gpus_per_pod"], book["claims"]) == wanted
    [pod] = book["pods"]
    assert (pod["node"], pod["node_served_by"]) == ("node-b", "dra")
    [claim] = pod["claims"]
    assert claim["exists"] and claim["allocated"] and claim["devices"][0].startswith(DRIVER + "/node-b/")
    stray = found[("Pod", "stray")]
    assert [(p["node"], p["phase"]) for p in stray["pods"]] == [(None, "Pending")]
    nightly = found[("CronJob", "nightly")]
    assert (nightly["replicas"], nightly["gpus_per_pod"], nightly["pods"]) == (2, 4, [])
    assert result["nodes"]["node-a"] == "device-plugin" and result["nodes"]["node-b"] == "dra"
    assert result["summary"] == {"device_plugin_workloads": 3, "dra_workloads": 1, "mixed_workloads": 0,
                                 "device_plugin_gpus_held": 2, "nodes_served_by_both": []}

    # The lab withholds node-a's DRA slices while its device plugin runs; allowed both, it
    # publishes them too, and the module names the node that hands out its GPUs twice.
    core.patch_node("node-a", {"metadata": {"annotations": {BOTH_GPU_MANAGERS: "true"}}})
    wait_for_object(slices_lister(custom), lambda s: s["spec"].get("nodeName") == "node-a",
                    "a ResourceSlice for node-a", timeout=60)
    result = run_module("dra.gpu.gpu_workload_info", {"namespaces": [ns]})
    assert result["nodes"]["node-a"] == "both"
    assert result["summary"]["nodes_served_by_both"] == ["node-a"]


def test_bad_input_is_refused_before_reading():
    result = run_module("dra.gpu.gpu_workload_info", {"driver": "Not A Driver"})
    assert result.get("failed") and "driver" in result["msg"], result
