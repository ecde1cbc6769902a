"""dra.gpu.device_class against the lab: dry-run validation, preview, idempotence, server-side
apply that keeps what others set, and that the preview agrees with the real scheduler."""

import uuid

import pytest
from kubernetes.client.exceptions import ApiException

from conftest import run_module
from waiting import wait_for_object, wait_until_gone

SEED_SELECTOR = 'device.driver == "nvidia.com" && device.attributes["nvidia.com"].type == "gpu"'
# Guarded by the driver, as a class for NVIDIA's GPUs must be: compute-domain devices have no memory.
MEMORY_AT_LEAST = "device.driver == 'gpu.nvidia.com' && " \
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('%s')) >= 0"


def _class_exists(custom, name):
    try:
        custom.get_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name)
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


@pytest.fixture
def class_name(custom):
    name = "it-" + uuid.uuid4().hex[:8]
    yield name
    if _class_exists(custom, name):
        custom.delete_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name)


def test_seed_articles_selector_matches_nothing_and_says_why(plugin_everywhere, custom, class_name):
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": [SEED_SELECTOR],
                                                 "require_match": True})
    assert result["failed"]
    assert "the driver here is gpu.nvidia.com" in result["msg"]
    assert "device.attributes['gpu.nvidia.com'].productName" in result["msg"]
    assert not _class_exists(custom, class_name), "nothing may be created when require_match fails"


def test_memory_selectors_match_the_expected_gpus(plugin_everywhere, custom, class_name):
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": [MEMORY_AT_LEAST % "16Gi"]})
    assert result["changed"] and not result.get("failed")
    models = sorted(d["model"] for d in result["matched_devices"])
    assert models == ["NVIDIA A10"] * 2 + ["NVIDIA L4"] * 4
    again = run_module("dra.gpu.device_class", {"name": class_name, "selectors": [MEMORY_AT_LEAST % "16Gi"]})
    assert not again["changed"], "a second run must change nothing"
    none = run_module("dra.gpu.device_class", {"name": class_name, "selectors": [MEMORY_AT_LEAST % "40Gi"]},
                      check_mode=True)
    assert none["matched_devices"] == [] and none["changed"]
    live = custom.get_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", class_name)
    assert "16Gi" in live["spec"]["selectors"][0]["cel"]["expression"], "check mode must not change the class"


def test_invalid_expression_fails_with_the_servers_message_and_creates_nothing(plugin_everywhere, custom,
                                                                               class_name):
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": ["device.driver == "]})
    assert result["failed"]
    assert "the API server rejected DeviceClass" in result["msg"] and "Syntax error" in result["msg"]
    assert not _class_exists(custom, class_name)


def test_non_boolean_expression_is_refused_by_the_server(plugin_everywhere, custom, class_name):
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": ["device.driver"]})
    # Refused by the local check (it names the selector and the fix) before the server's dry run would.
    assert result["failed"] and "selectors[0] 'device.driver' gives a string" in result["msg"]
    assert not _class_exists(custom, class_name)
    # An attribute is typed dynamically, so the server takes it; its published value is a string.
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": [
        "device.attributes['gpu.nvidia.com'].productName"]})
    assert result["failed"] and "not true or false" in result["msg"]
    assert not _class_exists(custom, class_name)
    # A type error the API server's compiler refuses is refused by the local check too (issue 33).
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": ["device.driver + 1 > 0"]})
    assert result["failed"] and "would be refused by the API server" in result["msg"] \
        and "no matching overload" in result["msg"], result["msg"]
    assert not _class_exists(custom, class_name)


def test_extended_resource_name_is_refused_where_the_server_drops_it(plugin_everywhere, custom, class_name, api):
    from kubernetes import client
    minor = int(client.VersionApi(api).get_code().minor.rstrip("+"))
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": ["true"],
                                                 "extended_resource_name": "example.com/gpu"})
    if minor < 36:
        assert result["failed"] and "does not keep spec.extendedResourceName" in result["msg"]
        assert not _class_exists(custom, class_name)
    else:
        assert not result.get("failed"), result.get("msg")


def test_unknown_function_is_reported_as_not_previewable(plugin_everywhere, class_name):
    expression = "device.attributes['gpu.nvidia.com'].productName.reverse() == 'x'"
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": [expression],
                                                 "require_match": True}, check_mode=True)
    # Either the server refuses the unknown function, or the preview says it cannot evaluate it:
    # never a guessed match.
    assert result["failed"]
    assert "rejected" in result["msg"] or "cannot be checked" in result["msg"]


def test_state_absent_removes_the_class_and_is_idempotent(plugin_everywhere, custom, class_name):
    run_module("dra.gpu.device_class", {"name": class_name, "selectors": ["true"]})
    assert _class_exists(custom, class_name)
    checked = run_module("dra.gpu.device_class", {"name": class_name, "state": "absent"}, check_mode=True)
    assert checked["changed"] and _class_exists(custom, class_name)
    gone = run_module("dra.gpu.device_class", {"name": class_name, "state": "absent"})
    assert gone["changed"] and not _class_exists(custom, class_name)
    assert not run_module("dra.gpu.device_class", {"name": class_name, "state": "absent"})["changed"]


def _read_class(custom, name):
    return custom.get_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name)


def _set_by_someone_else(custom, name, patch, manager="it-someone-else"):
    """A merge patch under another field manager, as kubectl annotate/label or a controller writes."""
    custom.patch_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", name, patch, field_manager=manager)


def _managers(obj):
    return sorted((m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields") or [])


def test_what_others_set_survives_server_side_apply(plugin_everywhere, custom, class_name):
    args = {"name": class_name, "selectors": [MEMORY_AT_LEAST % "16Gi"], "labels": {"it.dra.gpu/team": "ml"}}
    assert run_module("dra.gpu.device_class", args)["changed"]
    _set_by_someone_else(custom, class_name, {"metadata": {
        "annotations": {"it.example.com/owner": "platform team"}, "labels": {"it.example.com/tier": "gold"}}})
    again = run_module("dra.gpu.device_class", args, diff=True)
    assert not again.get("failed"), again.get("msg")
    assert not again["changed"], "what others set is no change of this module's"
    assert again["diff"]["before"] == again["diff"]["after"]
    assert again["diff"]["after"]["metadata"]["annotations"] == {"it.example.com/owner": "platform team"}
    live = _read_class(custom, class_name)
    assert live["metadata"]["annotations"] == {"it.example.com/owner": "platform team"}
    assert live["metadata"]["labels"] == {"it.dra.gpu/team": "ml", "it.example.com/tier": "gold"}
    assert ("dra.gpu", "Apply") in _managers(live) and ("it-someone-else", "Update") in _managers(live)
    ours = [m for m in live["metadata"]["managedFields"] if m["manager"] == "dra.gpu"][0]
    assert "f:spec" in ours["fieldsV1"] and "f:annotations" not in ours["fieldsV1"]["f:metadata"]

    # A change of the spec (which a full replace wrote over everything with) keeps them too, and a
    # label this module applied before and no longer names is removed: it was the module's alone.
    changed = run_module("dra.gpu.device_class", dict(args, selectors=[MEMORY_AT_LEAST % "20Gi"], labels={}),
                         diff=True)
    assert changed["changed"] and changed["diff"]["after"]["metadata"]["annotations"] == {
        "it.example.com/owner": "platform team"}
    live = _read_class(custom, class_name)
    assert "20Gi" in live["spec"]["selectors"][0]["cel"]["expression"]
    assert live["metadata"]["annotations"] == {"it.example.com/owner": "platform team"}
    assert live["metadata"]["labels"] == {"it.example.com/tier": "gold"}
    assert not run_module("dra.gpu.device_class", dict(args, selectors=[MEMORY_AT_LEAST % "20Gi"], labels={}))[
        "changed"]


def test_fields_this_module_owns_are_taken_back(plugin_everywhere, custom, class_name):
    args = {"name": class_name, "selectors": ["device.driver == 'gpu.nvidia.com'"]}
    # Written first without this module (as a release that replaced whole classes did): the same
    # content, so only ownership moves; then changed by hand, which the next run takes back.
    custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": class_name},
        "spec": {"selectors": [{"cel": {"expression": args["selectors"][0]}}]}}, field_manager="it-older-release")
    first = run_module("dra.gpu.device_class", args)
    assert first["changed"] and ("dra.gpu", "Apply") in _managers(_read_class(custom, class_name))
    assert not run_module("dra.gpu.device_class", args)["changed"]
    _set_by_someone_else(custom, class_name, {"spec": {"selectors": [{"cel": {"expression": "true"}}]}})
    checked = run_module("dra.gpu.device_class", args, check_mode=True, diff=True)
    assert checked["changed"] and checked["diff"]["before"]["spec"]["selectors"][0]["cel"]["expression"] == "true"
    assert _read_class(custom, class_name)["spec"]["selectors"][0]["cel"]["expression"] == "true"
    taken = run_module("dra.gpu.device_class", args)
    assert taken["changed"] and not taken.get("failed"), taken.get("msg")
    live = _read_class(custom, class_name)
    assert live["spec"]["selectors"][0]["cel"]["expression"] == args["selectors"][0]
    assert not run_module("dra.gpu.device_class", args)["changed"]


def _claim(name, class_name, count):
    request = {"name": "gpu", "exactly": {"deviceClassName": class_name, "count": count}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [request]}}}


def _pod(name, claim):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
        "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "gpu"}]}}]}}


def test_preview_agrees_with_the_scheduler(plugin_everywhere, core, custom, namespace, class_name):
    selectors = ["device.driver == 'gpu.nvidia.com'",
                 "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA L')",
                 MEMORY_AT_LEAST % "20Gi"]
    result = run_module("dra.gpu.device_class", {"name": class_name, "selectors": selectors, "require_match": True})
    previewed = sorted((d["pool"], d["name"]) for d in result["matched_devices"])
    assert len(previewed) == 4

    def holds_node_b(claim):
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        return any(r["pool"] == "node-b" for r in results)

    # Claims of earlier tests go away with their namespaces; wait until node-b is free.
    wait_until_gone(lambda **kw: custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaims", **kw),
                    holds_node_b, "earlier claims on node-b", timeout=60)
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims",
                                           _claim("all-previewed", class_name, len(previewed)))
    core.create_namespaced_pod(namespace, _pod("takes-all", "all-previewed"))
    wait_for_object(core.list_namespaced_pod, lambda p: (p.get("status") or {}).get("phase") == "Running",
                    "pod takes-all to run", timeout=60, namespace=namespace)
    claim = custom.get_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims", "all-previewed")
    allocated = sorted((r["pool"], r["device"]) for r in claim["status"]["allocation"]["devices"]["results"])
    assert allocated == previewed
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaims",
                                           _claim("one-more", class_name, 1))
    core.create_namespaced_pod(namespace, _pod("wants-one-more", "one-more"))

    def unschedulable(pod):
        return any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
                   for c in (pod.get("status") or {}).get("conditions") or [])

    wait_for_object(core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "wants-one-more" and unschedulable(p),
                    "pod wants-one-more to be unschedulable", timeout=60, namespace=namespace)
