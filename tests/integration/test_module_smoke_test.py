"""dra.gpu.claim_smoke_check against the lab. The allocation is the real scheduler's; the
probe's output is simulated from it (lab/labctl/apiserver/sim/probe.py)."""

import uuid

import pytest
from kubernetes.client.exceptions import ApiException

from conftest import run_module, run_playbook, task_results
from waiting import wait_for_object, wait_until_gone

L4 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"
A10 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'"


@pytest.fixture
def smoke_ns(core):
    """A namespace name the module will create and must remove."""
    name = "smoke-" + uuid.uuid4().hex[:6]
    yield name
    try:
        core.delete_namespace(name)
    except ApiException:
        pass


@pytest.fixture
def existing_ns(namespace):
    return namespace


def _left_in(core, custom, namespace):
    """Everything in the namespace the module could have created (the test lists it)."""
    objects = ["Pod/" + p.metadata.name for p in core.list_namespaced_pod(namespace).items]
    for plural in ("resourceclaims", "resourceclaimtemplates"):
        objects += ["%s/%s" % (plural, o["metadata"]["name"]) for o in
                    custom.list_namespaced_custom_object("resource.k8s.io", "v1", namespace, plural)["items"]]
    return objects


def _namespace_exists(core, name):
    try:
        core.read_namespace(name)
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


def smoke(args):
    return run_module("dra.gpu.claim_smoke_check", dict({"device_class": "lab-it-gpu", "timeout": 60}, **args))


def test_one_gpu_verified_from_the_container(plugin_everywhere, gpu_class, core, smoke_ns):
    result = smoke({"namespace": smoke_ns, "expect": {"min_memory": "16Gi"}})
    assert not result.get("failed"), result.get("msg")
    assert not result["changed"]
    assert len(result["devices"]) == 1 and result["devices"][0]["attributes"]["uuid"] in \
        result["probe_outputs"][0]["output"]
    assert result["timings"]["completed_after"] >= result["timings"]["allocated_after"]
    assert not _namespace_exists(core, smoke_ns), "the namespace the module created must be gone"


def test_two_gpus_in_one_claim(plugin_everywhere, gpu_class, existing_ns, core, custom):
    result = smoke({"namespace": existing_ns, "count": 2, "selectors": [L4], "expect": {"product_contains": "L4"}})
    assert not result.get("failed"), result.get("msg")
    assert result["node"] == "node-b" and len(result["devices"]) == 2
    assert _left_in(core, custom, existing_ns) == []


def test_shared_claim_used_by_two_pods(plugin_everywhere, gpu_class, existing_ns, core, custom):
    result = smoke({"namespace": existing_ns, "pods": 2})
    assert not result.get("failed"), result.get("msg")
    assert len(result["devices"]) == 1 and len(result["probe_outputs"]) == 2
    assert result["probe_outputs"][0]["output"] == result["probe_outputs"][1]["output"]
    assert _left_in(core, custom, existing_ns) == []


def test_first_available_prefers_the_first_and_falls_back(plugin_everywhere, gpu_class, existing_ns, core, custom):
    alternatives = [{"name": "a10", "selectors": [A10], "count": 2}, {"name": "l4", "selectors": [L4]}]
    first = smoke({"namespace": existing_ns, "first_available": alternatives})
    assert not first.get("failed"), first.get("msg")
    assert first["first_available_choice"] == "a10" and first["node"] == "node-a"
    # Take both A10s with a claim of our own, so the first alternative cannot be satisfied.
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", existing_ns, "resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "hog"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": gpu_class, "count": 2, "selectors": [{"cel": {"expression": A10}}]}}]}}})
    core.create_namespaced_pod(existing_ns, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hog"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "hog"}],
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "gpu"}]}}]}})
    wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Running",
                    "pod hog to run", timeout=60, namespace=existing_ns)
    second = smoke({"namespace": existing_ns, "first_available": alternatives})
    core.delete_namespaced_pod("hog", existing_ns, grace_period_seconds=0)
    custom.delete_namespaced_custom_object("resource.k8s.io", "v1", existing_ns, "resourceclaims", "hog")
    wait_until_gone(lambda **kw: custom.list_namespaced_custom_object("resource.k8s.io", "v1", existing_ns,
                                                                      "resourceclaims", **kw),
                    lambda c: c["metadata"]["name"] == "hog", "claim hog", timeout=60)
    assert not second.get("failed"), second.get("msg")
    assert second["first_available_choice"] == "l4" and second["node"] == "node-b"


def test_unsatisfiable_claim_fails_fast_with_the_schedulers_reason(plugin_everywhere, gpu_class, smoke_ns, core):
    result = smoke({"namespace": smoke_ns, "count": 5, "selectors": [L4], "timeout": 120})
    assert result["failed"] and result["failure"] == "unschedulable"
    assert "cannot allocate all claims" in result["msg"]
    assert result["timings"].get("allocated_after") is None
    assert not _namespace_exists(core, smoke_ns)


@pytest.mark.parametrize("behaviour,kind,words", [
    ("wrong-uuid", "mismatch", "but was allocated"),
    ("extra-gpu", "extra_devices", "not allocated"),
    ("fail", "probe_failed", "simulated probe failure"),
    ("image-pull-error", "image_pull", "cannot pull image"),
])
def test_failure_paths_say_why_and_leave_nothing(plugin_everywhere, gpu_class, existing_ns, core, custom,
                                                 behaviour, kind, words):
    result = smoke({"namespace": existing_ns, "pod_annotations": {"lab.dra.gpu/simulate-probe": behaviour}})
    assert result["failed"] and result["failure"] == kind, result.get("msg")
    assert words in result["msg"]
    assert _left_in(core, custom, existing_ns) == []


def test_allocation_level_ignores_the_probe_output(plugin_everywhere, gpu_class, existing_ns):
    result = smoke({"namespace": existing_ns, "verify": "allocation",
                    "pod_annotations": {"lab.dra.gpu/simulate-probe": "wrong-uuid"}})
    assert not result.get("failed"), result.get("msg")


def test_expectations_are_checked(plugin_everywhere, gpu_class, existing_ns, core, custom):
    result = smoke({"namespace": existing_ns, "selectors": [A10], "expect": {"min_memory": "40Gi"}})
    assert result["failed"] and result["failure"] == "expectation" and "less than 40Gi" in result["msg"]
    assert _left_in(core, custom, existing_ns) == []


def test_keep_leaves_the_objects(plugin_everywhere, gpu_class, existing_ns, core, custom):
    result = smoke({"namespace": existing_ns, "keep": True})
    assert result["changed"] and not result.get("failed")
    assert any(o.startswith("Pod/") for o in _left_in(core, custom, existing_ns))


def test_the_old_name_still_runs_with_a_deprecation_warning(plugin_everywhere, gpu_class, existing_ns, core, custom):
    """claim_smoke_test, the module's first name, redirects to claim_smoke_check (meta/runtime.yml)
    and says so, as ansible-playbook shows a deprecation."""
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "tasks": [{"name": "old name", "dra.gpu.claim_smoke_test": {
                 "device_class": gpu_class, "namespace": existing_ns, "timeout": 60}}]}]
    rc, report, stderr = run_playbook(play)
    (_name, result), = task_results(report)
    assert rc == 0 and not result.get("failed"), result.get("msg")
    assert len(result["devices"]) == 1 and result["devices"][0]["attributes"]["uuid"] in \
        result["probe_outputs"][0]["output"]
    warning = "dra.gpu.claim_smoke_test has been deprecated. Use dra.gpu.claim_smoke_check, its new name."
    assert warning in " ".join(stderr.split()), stderr
    assert [(d["msg"], d["version"]) for d in result["deprecations"]] == [(warning, "2.0.0")]
    assert _left_in(core, custom, existing_ns) == []
