"""dra.gpu.claim_smoke_check with share_memory (issue 27 item 6) on a lab whose simulated NVIDIA
driver publishes memory shares (share_lab: Kubernetes 1.37.2, or 1.36.3 where only that is
built): two pods with an 8Gi claim each land on one GPU and both see its UUID (the simulated
kubelet prints nvidia-smi -L from the real allocation), each claim's consumedCapacity and shareID
come from the real scheduler, and a claim 1Mi above the largest free share is Unschedulable,
named in words. Where the driver publishes no shares the second claim is refused by the
scheduler, and on 1.35.4 the test is refused before anything is made."""

import uuid

import pytest
from kubernetes.client.exceptions import ApiException

import shares_lab
from conftest import PAUSE, run_module, run_playbook, task_results
from waiting import wait_for_object

L4 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"


@pytest.fixture(scope="module")
def shares_cluster():
    with shares_lab.started("smoke-share", offset=700) as kubeconfig:
        _api, _core, _apps, custom = shares_lab.clients(kubeconfig)
        shares_lab.share_class(custom)
        yield kubeconfig


def gone(core, name):
    try:
        core.read_namespace(name)
        return False
    except ApiException as exc:
        return exc.status == 404


def smoke(kubeconfig, **args):
    return run_module("dra.gpu.claim_smoke_check", dict({"device_class": shares_lab.CLASS, "timeout": 90}, **args),
                      env={"KUBECONFIG": kubeconfig})


def check_two_shares(result, memory="8Gi"):
    share = result["share"]
    assert [c["consumed"] for c in share["claims"]] == [{"memory": memory}] * 2, share
    assert len(set((c["pool"], c["device"]) for c in share["claims"])) == 1, share
    assert len(set(c["share_id"] for c in share["claims"])) == 2 and all(c["share_id"] for c in share["claims"])
    assert (share["device"]["pool"], share["device"]["name"]) == (share["claims"][0]["pool"],
                                                                  share["claims"][0]["device"])
    # both probes printed that GPU's UUID, and nothing else
    assert len(result["probe_outputs"]) == 2 and result["shared"]["same_devices"]
    assert result["shared"]["seen"] == [share["device"]["uuid"]], result["shared"]
    for probe in result["probe_outputs"]:
        assert "(UUID: %s)" % share["device"]["uuid"] in probe["output"], probe
    return share


def test_two_8gi_claims_share_one_gpu_and_a_claim_above_every_free_share_is_unschedulable(shares_cluster):
    _api, core, _apps, custom = shares_lab.clients(shares_cluster)
    ns = "smoke-share-" + uuid.uuid4().hex[:6]
    result = smoke(shares_cluster, namespace=ns, share_memory="8Gi")
    assert not result.get("failed"), result.get("msg")
    share = check_two_shares(result)
    # Every other GPU is free: the largest free share is a whole L4 (23034Mi), the shared one has
    # 23034Mi - 16Gi (L4) or 23028Mi - 16Gi (A10) left.
    left = dict(((f["node"], f["device"]), f["free"]) for f in share["free"])
    assert left[(share["device"]["node"], share["device"]["name"])] in ("6650Mi", "6644Mi"), share["free"]
    assert share["free"][0]["free"] == "23034Mi" and len(share["free"]) == 6
    too_big = share["too_big"]
    assert too_big["memory"] == "23035Mi" and too_big["unschedulable"], too_big
    assert too_big["why"].startswith("no GPU has 23035Mi free: the largest free share is 23034Mi (gpu-"), too_big
    assert "cannot allocate all claims" in too_big["scheduler_message"], too_big
    assert any(line.startswith("a claim of 23035Mi: Unschedulable") for line in result["report"]), result["report"]
    assert gone(core, ns), "the namespace the module created must be gone"
    assert custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaims")["items"] == []


def test_a_share_larger_than_every_gpu_is_refused_saying_what_is_free(shares_cluster):
    _api, core, _apps, custom = shares_lab.clients(shares_cluster)
    ns = "smoke-share-" + uuid.uuid4().hex[:6]
    result = smoke(shares_cluster, namespace=ns, share_memory="40Gi")
    assert result.get("failed") and result["failure"] == "unschedulable", result
    assert result["msg"].startswith("the first share cannot be placed: no GPU has 40Gi free: the largest free share "
                                    "is 23034Mi (gpu-0 on node-b); the scheduler said: "), result["msg"]
    assert "cannot allocate all claims" in result["scheduler_message"]
    assert gone(core, ns) and custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaims")["items"] == []


@pytest.fixture
def three_l4_taken(shares_cluster):
    """Three of node-b's four L4s held whole (claims with no memory request take all of it in
    memory mode) by pods of a namespace of their own."""
    _api, core, apps, custom = shares_lab.clients(shares_cluster)
    ns = shares_lab.namespace(core, "it-hog-")
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "whole-l4"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": shares_lab.CLASS, "selectors": [{"cel": {"expression": L4}}]}}]}}}})
    labels = {"app": "hog"}
    apps.create_namespaced_deployment(ns, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hog"},
        "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "whole-l4"}],
                     "containers": [{"name": "c", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}]}}}})
    wait_for_object(apps.list_namespaced_deployment, lambda d: (d.get("status") or {}).get("readyReplicas") == 3,
                    "three pods holding an L4 each", timeout=90, namespace=ns)
    yield ns
    core.delete_namespace(ns)


def test_the_claim_too_large_is_sized_by_what_the_shares_left_when_the_other_gpus_are_taken(
        shares_cluster, three_l4_taken):
    result = smoke(shares_cluster, namespace="smoke-share-" + uuid.uuid4().hex[:6], share_memory="8Gi",
                   selectors=[L4])
    assert not result.get("failed"), result.get("msg")
    share = check_two_shares(result)
    assert [f["free"] for f in share["free"]] == ["6650Mi", "0", "0", "0"], share["free"]
    assert (share["free"][0]["node"], share["free"][0]["device"]) == ("node-b", share["device"]["name"])
    assert share["too_big"]["memory"] == "6651Mi"
    assert share["too_big"]["why"].startswith("no GPU has 6651Mi free: the largest free share is 6650Mi (%s on node-b)"
                                              % share["device"]["name"]), share["too_big"]


def test_the_role_runs_the_share_test_and_reports_it(shares_cluster):
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local", "roles": [{
        "role": "dra.gpu.smoke_test", "vars": {
            "smoke_test_device_class": shares_lab.CLASS, "smoke_test_share_memory": "4Gi",
            "smoke_test_wait_node_selector": "", "smoke_test_timeout": 90,
            "smoke_test_namespace": "smoke-share-" + uuid.uuid4().hex[:6]}}]}]
    rc, report, stderr = run_playbook(play, env={"KUBECONFIG": shares_cluster})
    results = dict((name.split(" : ", 1)[-1], result) for name, result in task_results(report))
    assert rc == 0, (stderr[-2000:], [r.get("msg") for r in results.values() if r.get("failed")])
    lines = results["Report the share of a card"]["msg"]
    assert lines[0].startswith("two pods, a claim of 4Gi each, on one GPU: gpu-"), lines
    assert results["Report the smoke test"].get("skipped"), results["Report the smoke test"]


def test_without_shares_published_the_second_claim_is_refused_by_the_scheduler():
    with shares_lab.started("smoke-no-share", offset=650, shares="disabled") as kubeconfig:
        _api, core, _apps, custom = shares_lab.clients(kubeconfig)
        shares_lab.share_class(custom)
        ns = "smoke-share-" + uuid.uuid4().hex[:6]
        result = smoke(kubeconfig, namespace=ns, share_memory="8Gi", timeout=60)
        assert result.get("failed") and result["failure"] == "not_shared", result
        assert "the device holding the first share of 8Gi did not take a second one" in result["msg"], result["msg"]
        assert "cannot allocate all claims" in result["scheduler_message"]
        assert gone(core, ns) and custom.list_cluster_custom_object(
            "resource.k8s.io", "v1", "resourceclaims")["items"] == []


def test_on_1_35_the_share_test_is_refused_before_anything_is_made():
    with shares_lab.started("smoke-share", offset=650, k8s_version="1.35.4") as kubeconfig:
        _api, core, _apps, custom = shares_lab.clients(kubeconfig)
        shares_lab.share_class(custom)
        ns = "smoke-share-" + uuid.uuid4().hex[:6]
        result = smoke(kubeconfig, namespace=ns, share_memory="8Gi")
        assert result.get("failed") and result["failure"] == "capacity_dropped", result
        assert "this API server (v1.35.4) drops a claim's capacity requests" in result["msg"], result["msg"]
        assert gone(core, ns) and custom.list_cluster_custom_object(
            "resource.k8s.io", "v1", "resourceclaims")["items"] == []
        assert core.list_pod_for_all_namespaces(label_selector="dra.gpu/smoke-test-run").items == []
