"""dra.gpu.gpu_usage_info and playbooks/report.yml against the lab: holders and idle allocations
for a template claim, a shared claim with two pods, a completed Job's claim and a pod stuck
Pending; free devices per DeviceClass checked against what the real scheduler then allocates;
the HTML report opened in headless chromium; the report made by a service account bound to the
ClusterRole of playbooks/files alone; memory shares of a GPU (issue 27) on the 1.37.2 lab of
test_gpu_fit_matches_scheduler: consumed and free memory per device, each claim's consumedCapacity
and shareID, and the largest claim per class, checked against the scheduler, on the page too."""

import os
import pathlib
import time

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from browser import dump_dom, screenshot  # browser.py beside this file: headless chromium
from conftest import PAUSE, on_node, run_module, run_playbook, task_results
from test_gpu_fit_matches_scheduler import decided, pod as share_pod, template
# The 1.37.2 memory-shares lab and a namespace in it, as fixtures of this module too.
from test_gpu_fit_matches_scheduler import mix, shares_cluster  # noqa: F401 pylint: disable=unused-import
from waiting import wait_for_object, wait_until_gone

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPORT = str(ROOT / "playbooks" / "report.yml")
CLUSTER_ROLE = ROOT / "playbooks" / "files" / "usage-reader-clusterrole.yml"
ARTIFACTS = ROOT / "tests" / "output"
SIMULATE = "lab.dra.gpu/simulate-probe"


def claim_body(name, device_class, count=1):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}}]}}}


def pod_spec(claim_ref, node=None, restart="Always"):
    spec = {"restartPolicy": restart, "resourceClaims": [dict(name="gpu", **claim_ref)],
            "containers": [{"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}]}
    if node:
        spec["nodeSelector"] = on_node(node)
    return spec


def pod(name, claim_ref, node=None, annotations=None):
    return {"metadata": {"name": name, "annotations": annotations or {}}, "spec": pod_spec(claim_ref, node)}


def phase_is(core, ns, name, goal, timeout=90):
    wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == goal,
                    "pod %s %s" % (name, goal), timeout=timeout, namespace=ns, field_selector="metadata.name=" + name)


def waiting_reason(core, ns, name):
    def reason(pod_obj):
        statuses = (pod_obj.get("status") or {}).get("containerStatuses") or []
        return statuses and ((statuses[0].get("state") or {}).get("waiting") or {}).get("reason")
    wait_for_object(core.list_namespaced_pod, reason, "pod %s waiting with a reason" % name, timeout=90,
                    namespace=ns, field_selector="metadata.name=" + name)


def unschedulable(core, ns, name):
    wait_for_object(core.list_namespaced_pod, lambda p: any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
        for c in (p.get("status") or {}).get("conditions") or []), "pod %s refused by the scheduler" % name,
        timeout=90, namespace=ns, field_selector="metadata.name=" + name)


@pytest.fixture
def workloads(api, custom, namespace, gpu_class, plugin_everywhere):
    """The four cases of issue 16, running in ``namespace``."""
    core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
    ns = namespace
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
        "metadata": {"name": "one-gpu"}, "spec": {"spec": claim_body("x", gpu_class)["spec"]}})
    apps.create_namespaced_deployment(ns, {"metadata": {"name": "notebook"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "notebook"}},
        "template": {"metadata": {"labels": {"app": "notebook"}},
                     "spec": pod_spec({"resourceClaimTemplateName": "one-gpu"}, node="node-b")}}})
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims", claim_body("shared", gpu_class))
    for index in range(2):
        core.create_namespaced_pod(ns, pod("share-%d" % index, {"resourceClaimName": "shared"}))
    core.create_namespaced_pod(ns, pod("stuck", {"resourceClaimTemplateName": "one-gpu"}, node="node-b",
                                       annotations={SIMULATE: "image-pull-error"}))
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims",
                                           claim_body("job-gpu", gpu_class))
    batch.create_namespaced_job(ns, {"metadata": {"name": "nightly"}, "spec": {"backoffLimit": 0, "template": {
        "spec": pod_spec({"resourceClaimName": "job-gpu"}, restart="Never")}}})

    wait_for_object(apps.list_namespaced_deployment, lambda d: (d.get("status") or {}).get("readyReplicas") == 1,
                    "deployment notebook ready", timeout=90, namespace=ns)
    for index in range(2):
        phase_is(core, ns, "share-%d" % index, "Running")
    waiting_reason(core, ns, "stuck")
    wait_for_object(batch.list_namespaced_job, lambda j: (j.get("status") or {}).get("succeeded") == 1,
                    "job nightly complete", timeout=90, namespace=ns)
    # The claim controller releases a finished pod's claim; the report must see what it leaves.
    wait_for_object(lambda **kw: custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims",
                                                                      **kw),
                    lambda c: c["metadata"]["name"] == "job-gpu" and not (c.get("status") or {}).get("allocation"),
                    "claim job-gpu released after its Job completed", timeout=90)
    return ns


def of_namespace(entries, ns):
    return dict((e["name"], e) for e in entries if e["namespace"] == ns)


def test_holders_idle_allocations_and_released_claims(workloads):
    ns = workloads
    result = run_module("dra.gpu.gpu_usage_info", {})
    assert not result.get("failed"), result.get("msg")
    claims = of_namespace(result["claims"], ns)
    notebook = [name for name in claims if name.startswith("notebook-")]
    stuck = [name for name in claims if name.startswith("stuck-")]
    assert len(notebook) == 1 and len(stuck) == 1 and set(claims) == {notebook[0], stuck[0], "shared"}, claims
    assert "job-gpu" not in claims

    held = claims[notebook[0]]
    assert held["state"] == "in_use" and held["shared"] is False and held["devices"][0].startswith("node-b/")
    assert held["pods"][0]["owner"] == {"kind": "Deployment", "name": "notebook"}
    assert held["pods"][0]["phase"] == "Running" and held["since"] and 0 <= held["age_seconds"] < 900

    shared = claims["shared"]
    assert shared["state"] == "in_use" and shared["shared"] is True and len(shared["devices"]) == 1
    assert sorted(p["name"] for p in shared["pods"]) == ["share-0", "share-1"]

    idle = claims[stuck[0]]
    assert idle["state"] == "idle" and "pod %s/stuck is Pending (ErrImagePull)" % ns in idle["idle_reason"]
    assert [c["name"] for c in result["idle"] if c["namespace"] == ns] == [stuck[0]]
    assert [t for t in result["by_namespace"] if t["namespace"] == ns] == [
        {"namespace": ns, "claims": 3, "devices": 3, "pods": 4, "idle_claims": 1, "idle_devices": 1}]

    # Every device of those claims shows its holder on its node; the Job's device is not held by it.
    by_device = dict(("%s/%s" % (n["name"], d["name"]), d) for n in result["nodes"] for d in n["devices"])
    for name, entry in claims.items():
        for device in entry["devices"]:
            assert by_device[device]["claim"]["name"] == name and by_device[device]["state"] == entry["state"]
    assert not any((d["claim"] or {}).get("name") == "job-gpu" for d in by_device.values())
    assert result["summary"]["devices"] == len(by_device) == 6


def test_free_per_class_is_what_the_scheduler_then_allocates(api, custom, namespace, gpu_class, plugin_everywhere):
    core, ns = client.CoreV1Api(api), namespace
    # An earlier test's namespace still terminating frees its claims' devices later, which made
    # "one more" fit after the report said 0 (CI-like load, a fresh clone): let those end first.
    wait_until_gone(core.list_namespace, lambda n: (n.get("status") or {}).get("phase") == "Terminating",
                    "earlier tests' namespaces to finish terminating", timeout=180)
    result = run_module("dra.gpu.gpu_usage_info", {})
    free = dict((c["class"], c) for c in result["free_by_class"])[gpu_class]
    assert free["previewable"] and free["free"] == sum(free["by_node"].values()) > 0
    for node, count in sorted(free["by_node"].items()):
        custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims",
                                               claim_body("all-of-" + node, gpu_class, count))
        core.create_namespaced_pod(ns, pod("fill-" + node, {"resourceClaimName": "all-of-" + node}, node=node))
        phase_is(core, ns, "fill-" + node, "Running")
    again = run_module("dra.gpu.gpu_usage_info", {})
    assert dict((c["class"], c) for c in again["free_by_class"])[gpu_class]["free"] == 0
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims",
                                           claim_body("one-more", gpu_class))
    core.create_namespaced_pod(ns, pod("one-more", {"resourceClaimName": "one-more"}))
    unschedulable(core, ns, "one-more")


def test_the_report_in_a_browser_shows_every_node(api, workloads, tmp_path):
    rc, report, stderr = run_playbook(REPORT, extra_args=["-e", "report_dir=%s" % tmp_path,
                                                          "-e", "report_cluster_name=lab"])
    assert rc == 0, (stderr, [r.get("msg") for _n, r in task_results(report) if r.get("failed")])
    page = tmp_path / "gpu-usage.html"
    assert page.is_file() and (tmp_path / "gpu-usage.md").is_file()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot(str(page), str(ARTIFACTS / "report-screenshot-lab.png"))
    assert (ARTIFACTS / "report-screenshot-lab.png").stat().st_size > 10000
    dom = dump_dom(str(page))
    nodes = [n.metadata.name for n in client.CoreV1Api(api).list_node().items]
    missing = [name for name in nodes if name not in dom]
    assert not missing, "the page does not show nodes %s" % missing
    assert "<svg" in dom and "IDLE" in dom and workloads in dom
    summary = [r for n, r in task_results(report) if n == "Show the summary and where the report is"][0]["msg"]
    assert summary[-1] == "report: %s/gpu-usage.html (and gpu-usage.md)" % tmp_path


def _token_kubeconfig(core, ns, account, path):
    token = core.create_namespaced_service_account_token(account, ns, {"spec": {"expirationSeconds": 3600}})
    with open(os.environ["KUBECONFIG"]) as handle:
        admin = yaml.safe_load(handle)
    cluster = admin["clusters"][0]
    config = {"apiVersion": "v1", "kind": "Config", "clusters": [cluster],
              "users": [{"name": account, "user": {"token": token.status.token}}],
              "contexts": [{"name": account, "context": {"cluster": cluster["name"], "user": account}}],
              "current-context": account}
    with open(path, "w") as handle:
        yaml.safe_dump(config, handle)
    return path


def _may_list_pods(kubeconfig):
    from kubernetes import config as kube_config
    api = kube_config.new_client_from_config(config_file=kubeconfig)
    review = client.AuthorizationV1Api(api).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}}})
    return review.status.allowed


def test_the_cluster_role_alone_is_enough_for_the_report(api, namespace, plugin_everywhere, tmp_path):
    core, rbac, ns = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api), namespace
    role = yaml.safe_load(CLUSTER_ROLE.read_text())
    binding_name = "it-report-" + ns
    try:
        rbac.create_cluster_role(role)
    except ApiException as exc:
        if exc.status != 409:
            raise
    core.create_namespaced_service_account(ns, {"metadata": {"name": "reporter"}})
    kubeconfig = _token_kubeconfig(core, ns, "reporter", str(tmp_path / "reporter.kubeconfig"))
    env = {"K8S_AUTH_KUBECONFIG": kubeconfig}
    try:
        rc, report, _stderr = run_playbook(REPORT, extra_args=["-e", "report_dir=%s" % (tmp_path / "denied")], env=env)
        refused = [r for _n, r in task_results(report) if r.get("failed")]
        assert rc != 0 and "dra-gpu-usage-reader" in refused[0]["msg"] and "forbidden" in refused[0]["msg"]
        assert not (tmp_path / "denied").exists()

        rbac.create_cluster_role_binding({"metadata": {"name": binding_name},
                                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                      "name": role["metadata"]["name"]},
                                          "subjects": [{"kind": "ServiceAccount", "name": "reporter",
                                                        "namespace": ns}]})
        # The authorizer learns of a new binding from its informer: a moment, not a fixed sleep.
        deadline = time.monotonic() + 30
        while not _may_list_pods(kubeconfig):
            assert time.monotonic() < deadline, "the binding did not take effect within 30 s"
            time.sleep(0.2)
        rc, report, stderr = run_playbook(REPORT, extra_args=["-e", "report_dir=%s" % (tmp_path / "ok")], env=env)
        assert rc == 0, (stderr, [r.get("msg") for _n, r in task_results(report) if r.get("failed")])
        page = (tmp_path / "ok" / "gpu-usage.html").read_text()
        assert "node-a" in page and "node-b" in page
    finally:
        try:
            rbac.delete_cluster_role_binding(binding_name)
        except ApiException:
            pass
        rbac.delete_cluster_role(role["metadata"]["name"])


def test_check_mode_writes_no_report_file(tmp_path):
    rc, report, stderr = run_playbook(REPORT, extra_args=["--check", "-e", "report_dir=%s" % tmp_path])
    assert rc == 0, stderr
    assert not (tmp_path / "gpu-usage.html").exists()


def test_memory_shares_per_device_and_what_still_fits(mix, tmp_path):
    """Three 8Gi claims on the L4-only class: two share node-b's first card (slice order), one the
    next. The report must show both shares with the scheduler's consumedCapacity and shareID, the
    memory left, and a largest claim the scheduler really allocates (one Mi more it refuses)."""
    kubeconfig, api, ns = mix
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    workload = {"name": "notebook", "memory": "8Gi", "replicas": 3, "device_class": "fit-l4"}
    template(custom, ns, workload)
    for index in range(3):
        core.create_namespaced_pod(ns, share_pod(workload, index))
    assert all(v[0] == "scheduled" for v in decided(core, ns, workload).values())
    results = [r for c in custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims")["items"]
               for r in c["status"]["allocation"]["devices"]["results"]]
    env = {"KUBECONFIG": kubeconfig}
    usage = run_module("dra.gpu.gpu_usage_info", {}, env=env)
    assert not usage.get("failed"), usage.get("msg")
    devices = dict(("%s/%s" % (n["name"], d["name"]), d) for n in usage["nodes"] for d in n["devices"])
    held = [d for d in devices.values() if d["shares"]]
    assert sorted(len(d["shares"]) for d in held) == [1, 2]
    assert sorted(s["share_id"] for d in held for s in d["shares"]) == sorted(r["shareID"] for r in results)
    assert all(s["consumed"] == {"memory": "8Gi"} for d in held for s in d["shares"])
    full = [d for d in held if len(d["shares"]) == 2][0]
    assert (full["memory_consumed"], full["memory_free"], full["state"]) == ("16Gi", "6650Mi", "in_use")
    l4 = dict((c["class"], c) for c in usage["free_by_class"])["fit-l4"]
    # 6650Mi and 14842Mi left on the shared cards, two untouched 23034Mi cards
    assert (l4["memory_free"], l4["largest_claim"]) == (usage_bytes(6650 + 14842 + 2 * 23034), "23034Mi")

    # What the report calls the largest claim the scheduler allocates; one Mi more it refuses.
    for name, memory in (("too-big", "%dMi" % (l4["largest_claim_bytes"] // 2 ** 20 + 1)),
                         ("largest", l4["largest_claim"])):
        one = {"name": name, "memory": memory, "replicas": 1, "device_class": "fit-l4"}
        template(custom, ns, one)
        core.create_namespaced_pod(ns, share_pod(one, 0))
        expected = "unschedulable" if name == "too-big" else "scheduled"
        assert [v[0] for v in decided(core, ns, one).values()] == [expected]

    rc, report, stderr = run_playbook(REPORT, extra_args=["-e", "report_dir=%s" % tmp_path], env=env)
    assert rc == 0, (stderr, [r.get("msg") for _n, r in task_results(report) if r.get("failed")])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot(str(tmp_path / "gpu-usage.html"), str(ARTIFACTS / "report-screenshot-shares.png"))
    dom = dump_dom(str(tmp_path / "gpu-usage.html"))
    assert "consumed 16Gi, free 6650Mi" in dom and "largest claim that fits" in dom
    assert all(r["shareID"] in dom for r in results)
    assert "consumed 16Gi, free 6650Mi" in (tmp_path / "gpu-usage.md").read_text()


def usage_bytes(mebibytes):
    from ansible_collections.dra.gpu.plugins.module_utils.dra.quantity import human_bytes
    return human_bytes(mebibytes * 2 ** 20)
