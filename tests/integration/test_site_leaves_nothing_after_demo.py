"""playbooks/demo.yml against the lab: it shows a claim held by a pod, then removes the pod,
the claim and its namespace again, also when it fails, so `make demo` leaves no GPU held.

site.yml itself is checked by molecule/default, whose verify compares every namespace, pod
and claim with a list taken before site.yml ran.
"""

import os

import pytest
from kubernetes.client.exceptions import ApiException

from conftest import run_playbook, task_results

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOK = os.path.join(ROOT, "playbooks", "demo.yml")
INVENTORY = os.path.join(ROOT, "playbooks", "inventory", "lab.yml")
DEMO_NAMESPACE = "dra-gpu-demo"
MIGRATION_NAMESPACE = "dra-gpu-demo-migration"


def cluster_objects(core, custom):
    """Every namespace, pod and ResourceClaim, as Kind/namespace/name, leaving out what is
    being deleted (earlier tests remove their namespaces without waiting)."""
    found = set()
    for ns in core.list_namespace().items:
        if not ns.metadata.deletion_timestamp:
            found.add("Namespace/" + ns.metadata.name)
    for pod in core.list_pod_for_all_namespaces().items:
        if not pod.metadata.deletion_timestamp:
            found.add("Pod/%s/%s" % (pod.metadata.namespace, pod.metadata.name))
    for claim in custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaims")["items"]:
        if not claim["metadata"].get("deletionTimestamp"):
            found.add("ResourceClaim/%s/%s" % (claim["metadata"]["namespace"], claim["metadata"]["name"]))
    return found


def demo(gpu_class, **extra):
    args = ["-e", "demo_device_class=" + gpu_class]
    for key, value in extra.items():
        args += ["-e", "%s=%s" % (key, value)]
    rc, report, stderr = run_playbook(PLAYBOOK, inventory=INVENTORY, extra_args=args)
    results = task_results(report)
    failed = ["%s: %s" % (name, result.get("msg")) for name, result in results if result.get("failed")]
    return rc, dict(results), stderr + "\n".join(failed)


@pytest.fixture
def no_demo_namespace(core):
    """The demo's namespaces are the demo's own: none before the test, and none left after it."""
    assert not {DEMO_NAMESPACE, MIGRATION_NAMESPACE} & {n.metadata.name for n in core.list_namespace().items}
    yield
    for name in (DEMO_NAMESPACE, MIGRATION_NAMESPACE):
        try:
            core.delete_namespace(name)
        except ApiException as exc:
            if exc.status != 404:
                raise


def test_demo_shows_the_held_gpu_keeps_it_when_asked_and_a_plain_run_leaves_nothing(
        plugin_everywhere, gpu_class, core, custom, namespace, no_demo_namespace):
    """One kept run and one plain run (each demo run costs most of a minute), in a namespace of
    the user's (demo_namespace), which the plain run must leave; that the demo removes a namespace
    it created itself is checked by the failed run below and by test_demo_on_current_release.py."""
    before = cluster_objects(core, custom)
    rc, results, stderr = demo(gpu_class, demo_keep="true", demo_namespace=namespace)
    assert rc == 0, stderr
    shown = results["Show which GPU the scheduler gave to whom"]["msg"]
    assert "was allocated by the kube-scheduler" in shown[0] and "NVIDIA" in shown[0]
    assert "held by pod %s/gpu-consumer, Running" % namespace in shown[1]
    # the Deployment written for the device plugin, Pending before, runs on a claim after
    before_migration = str(results["Show it before"])
    assert "Before: Deployment %s/inference asks for 1 nvidia.com/gpu per pod; pods Pending" % MIGRATION_NAMESPACE \
        in before_migration, before_migration
    report = results["dra.gpu.workload_migration : Report it"]["msg"]
    assert "moved to ResourceClaimTemplate inference-gpu: 1 of 1 pods updated and available" in report[0], report
    assert "before: container server asks nvidia.com/gpu: 1" in report
    assert "asks via dra" in str(results["Show it after"]) and "pods Running" in str(results["Show it after"])
    kept = cluster_objects(core, custom) - before
    migrated = {k for k in kept if MIGRATION_NAMESPACE in k}
    assert kept - migrated == {"Pod/%s/gpu-consumer" % namespace, "ResourceClaim/%s/one-gpu" % namespace}
    # the migrated Deployment's pod and the claim made from its template
    assert sorted(k.split("/")[0] for k in migrated) == ["Namespace", "Pod", "ResourceClaim"], migrated
    assert all(k.split("/")[-1].startswith("inference") for k in migrated if not k.startswith("Namespace/"))

    rc, results, stderr = demo(gpu_class, demo_namespace=namespace)
    assert rc == 0, stderr
    removed = results["Show that the demo holds no GPU any more"]["msg"]
    assert "Removed the demo's pod, claim:" in removed and "GPUs free" in removed, removed
    assert cluster_objects(core, custom) == before


def test_a_failed_demo_says_why_and_leaves_nothing(plugin_everywhere, gpu_class, core, custom, no_demo_namespace):
    before = cluster_objects(core, custom)
    # No GPU of the lab has 100Gi: the pod never starts, and the demo must still clean up.
    rc, results, _stderr = demo(gpu_class, demo_min_memory="100Gi", demo_timeout="15")
    assert rc != 0
    failure = results["Fail with what went wrong and what the pod's conditions say"]["msg"]
    assert "Run a pod that consumes the claim" in failure and "cannot allocate" in failure, failure
    assert cluster_objects(core, custom) == before
