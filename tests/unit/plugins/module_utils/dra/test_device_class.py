"""device_class: the applied body, what counts as a change under server-side apply, the apply
request itself, input checks, the match preview and its no-match explanation."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.dra import device_class as dc
from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.api_fakes import Response


def test_desired_object_holds_only_what_the_module_declares():
    body = dc.desired_object("c", ["true"], labels={"a": "b"})
    assert body == {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"name": "c", "labels": {"a": "b"}},
                    "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    bare = dc.desired_object("c", [], config=[{"opaque": {"driver": "d", "parameters": {}}}],
                             extended_resource_name="example.com/gpu")
    assert bare["metadata"] == {"name": "c"}, "no labels key: the module would own an empty map"
    assert bare["spec"]["config"][0]["opaque"]["driver"] == "d"
    assert bare["spec"]["extendedResourceName"] == "example.com/gpu"


def managed(manager, operation, fields, time="2026-01-01T00:00:00Z"):
    return {"manager": manager, "operation": operation, "apiVersion": "resource.k8s.io/v1", "time": time,
            "fieldsType": "FieldsV1", "fieldsV1": fields}


OURS = {"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:selectors": {}}}


def live_class(labels=None, annotations=None, selector="true", version="9", entries=None, generation=1):
    metadata = {"name": "c", "uid": "u", "resourceVersion": version, "generation": generation,
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "managedFields": entries if entries is not None else [managed("dra.gpu", "Apply", OURS)]}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": metadata,
            "spec": {"selectors": [{"cel": {"expression": selector}}]}}


def test_content_drops_only_the_servers_bookkeeping():
    live = live_class(labels={"a": "b"}, annotations={"note": "kept"})
    assert dc.content(live) == {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                "metadata": {"name": "c", "labels": {"a": "b"}, "annotations": {"note": "kept"}},
                                "spec": {"selectors": [{"cel": {"expression": "true"}}]}}
    assert "managedFields" in live["metadata"], "content() must not change its argument"
    assert dc.content(None) is None


def test_ownership_is_the_apply_entry_of_dra_gpu_without_its_time():
    entries = [managed("kubectl-annotate", "Update", {"f:metadata": {"f:annotations": {}}}),
               managed("dra.gpu", "Apply", OURS, time="2026-02-02T00:00:00Z")]
    assert dc.ownership(live_class(entries=entries)) == {"apiVersion": "resource.k8s.io/v1", "fieldsV1": OURS}
    assert dc.ownership(live_class(entries=[managed("dra.gpu", "Update", OURS)])) is None
    assert dc.ownership(live_class(entries=[])) is None
    assert dc.ownership(None) is None


def test_a_dry_run_that_only_moves_bookkeeping_is_no_change():
    live = live_class(labels={"a": "b", "theirs": "x"}, annotations={"note": "kept"})
    # The dry-run answer of an apply that changes nothing: a newer apply time, nothing else.
    dry = live_class(labels={"a": "b", "theirs": "x"}, annotations={"note": "kept"}, version="10",
                     entries=[managed("dra.gpu", "Apply", OURS, time="2026-03-03T00:00:00Z")])
    assert not dc.apply_changes(live, dry)


def test_changes_to_content_or_to_what_dra_gpu_owns_are_changes():
    live = live_class(labels={"a": "b"})
    assert dc.apply_changes(None, live), "a class that does not exist yet"
    assert dc.apply_changes(live, live_class(labels={"a": "b"}, selector="false", generation=2))
    assert dc.apply_changes(live, live_class(labels={"a": "c"}))
    assert dc.apply_changes(live, live_class(labels={"a": "b"}, annotations={"x": "y"}))
    # Same content, written by an older release's replace: the first apply takes the fields over.
    written = live_class(labels={"a": "b"}, entries=[managed("OpenAPI-Generator", "Update", OURS)])
    assert dc.apply_changes(written, live_class(labels={"a": "b"}))


def test_apply_query_names_the_field_manager_and_forces():
    assert dc.apply_query(False) == [("fieldManager", "dra.gpu"), ("force", "true")]
    assert dc.apply_query(True) == [("fieldManager", "dra.gpu"), ("force", "true"), ("dryRun", "All")]


class ApplyApi:
    """The ApiClient calls apply_request makes (kubernetes >= 34)."""

    def __init__(self, status=200, answer=None):
        self.status, self.answer, self.requests = status, answer, []

    def param_serialize(self, method, resource_path, query_params=None, header_params=None, body=None,
                        auth_settings=None):
        self.requests.append({"method": method, "path": resource_path, "query": list(query_params),
                              "headers": dict(header_params), "body": body, "auth": auth_settings})
        return method, "https://api" + resource_path, header_params, body, None

    def call_api(self, method, url, headers, body, post_params, _request_timeout=None):
        return Response(self.status, self.answer)


def test_apply_request_sends_an_apply_patch_as_dra_gpu():
    body = dc.desired_object("c", ["true"], labels={"a": "b"})
    api = ApplyApi(answer=json.dumps(dict(body, metadata={"name": "c", "uid": "u"})).encode())
    assert dc.apply_request(api, body, dry_run=True)["metadata"]["uid"] == "u"
    sent = api.requests[0]
    assert sent["method"] == "PATCH" and sent["path"] == "/apis/resource.k8s.io/v1/deviceclasses/c"
    assert sent["headers"]["Content-Type"] == "application/apply-patch+yaml"
    assert sent["query"] == [("fieldManager", "dra.gpu"), ("force", "true"), ("dryRun", "All")]
    assert json.loads(sent["body"]) == body and sent["auth"] == ["BearerToken"]


def test_apply_request_raises_the_servers_answer():
    api = ApplyApi(status=422, answer=b'{"kind":"Status","message":"spec.selectors[0].cel.expression: Invalid"}')
    with pytest.raises(ApiException) as raised:
        dc.apply_request(api, dc.desired_object("c", ["device.driver == "]), dry_run=True)
    assert raised.value.status == 422 and "Invalid" in raised.value.body


class Kube:
    def __init__(self, api):
        self.api = api


def test_a_refused_apply_is_a_device_class_error_with_the_servers_message():
    api = ApplyApi(status=422, answer=b'{"kind":"Status","message":"Syntax error: mismatched input"}')
    with pytest.raises(dc.DeviceClassError, match="the API server rejected DeviceClass c: Syntax error"):
        dc.DeviceClasses(Kube(api)).apply(dc.desired_object("c", ["device.driver == "]), dry_run=True)
    with pytest.raises(ApiException):
        dc.DeviceClasses(Kube(ApplyApi(status=500, answer=b"boom"))).apply(dc.desired_object("c", []), dry_run=True)


def test_bad_input_is_refused_before_the_api_is_called():
    with pytest.raises(dc.DeviceClassError, match="selectors\\[0\\]"):
        dc.validate_input([" "], None)
    with pytest.raises(dc.DeviceClassError, match="config\\[0\\] must look like"):
        dc.validate_input(["true"], [{"driver": "x"}])


def slice_of(driver):
    return {"metadata": {"name": "s"}, "spec": {"driver": driver, "nodeName": "n",
                                                "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                                                "devices": [{"name": "gpu-0", "attributes": {
                                                    "productName": {"string": "NVIDIA A10"}},
                                                    "capacity": {"memory": {"value": "24Gi"}}}]}}


def test_no_match_explanation_points_at_the_real_driver_name():
    lines = dc.explain_no_match(['device.driver == "nvidia.com"'], [slice_of("gpu.nvidia.com")])
    assert "the driver here is gpu.nvidia.com" in lines[0]
    assert "device.attributes['gpu.nvidia.com'].productName (e.g. 'NVIDIA A10')" in lines[1]
    assert "device.capacity['gpu.nvidia.com'].memory (e.g. 24Gi)" in lines[1]


def test_no_match_explanation_without_any_slice():
    assert "no ResourceSlice is published" in dc.explain_no_match(["true"], [])[0]


def test_preview_lists_matches_and_runtime_errors():
    result = dc.preview(["device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A10'"],
                        [slice_of("gpu.nvidia.com"), dict(slice_of("other.io"),
                                                          spec=dict(slice_of("other.io")["spec"], driver="other.io"))])
    assert result["evaluated"] and result["devices_considered"] == 2
    assert [d["driver"] for d in result["matched_devices"]] == ["gpu.nvidia.com"]
    assert result["runtime_errors"] and result["runtime_errors"][0]["device"].startswith("other.io/")


def test_preview_says_when_it_cannot_evaluate():
    result = dc.preview(["device.driver.reverse() == 'x'"], [slice_of("gpu.nvidia.com")])
    assert result["evaluated"] is False and "reverse" in result["reason"] and result["matched_devices"] is None


def test_preview_says_when_a_class_matches_only_tainted_devices():
    tainted = slice_of("gpu.nvidia.com")
    tainted["spec"]["devices"][0]["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]
    result = dc.preview(["device.driver == 'gpu.nvidia.com'"], [tainted])
    assert result["only_tainted"] and result["matched_devices"][0]["taints"] == ["gpu.nvidia.com/xid=79:NoSchedule"]
    note = dc.only_tainted_note("gpu.nvidia.com", result["matched_devices"])
    assert "matches only tainted devices" in note and "n/gpu-0 gpu.nvidia.com/xid=79:NoSchedule" in note
    spec = {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "k", "effect": "NoExecute"}}
    rule = {"metadata": {"name": "r"}, "spec": spec}
    assert dc.preview(["true"], [slice_of("gpu.nvidia.com")], [rule])["only_tainted"]
    assert not dc.preview(["true"], [slice_of("gpu.nvidia.com")])["only_tainted"]
