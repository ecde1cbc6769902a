"""client.list_raw / RawReader: lists read as raw JSON over the ApiClient, page by page."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils import client


class Response:
    def __init__(self, status, body):
        self.status = status
        self.reason = "OK" if status == 200 else "Forbidden"
        self.data = body
        self.headers = {}
        self.response = self

    def read(self):
        return self.data


class NewApi:
    """kubernetes >= 34: param_serialize + call_api(method, url, headers, ...) -> RESTResponse."""

    def __init__(self, pages, status=200):
        self.pages = list(pages)
        self.status = status
        self.requests = []

    def param_serialize(self, method, resource_path, query_params=None, header_params=None, auth_settings=None):
        assert auth_settings == ["BearerToken"] and header_params == {"Accept": "application/json"}
        self.requests.append((method, resource_path, list(query_params)))
        return method, "https://api" + resource_path, header_params, None, None

    def call_api(self, method, url, headers, body, post_params, _request_timeout=None):
        if self.status != 200:
            return Response(self.status, b'{"kind":"Status","message":"resourceslices is forbidden"}')
        return Response(200, json.dumps(self.pages.pop(0)).encode())


class OldApi:
    """kubernetes < 34: call_api(path, method, ...) with _preload_content=False -> a urllib3 response."""

    def __init__(self, pages):
        self.pages = list(pages)
        self.requests = []

    def call_api(self, path, method, query_params=None, header_params=None, auth_settings=None,
                 _preload_content=True, _return_http_data_only=False, _request_timeout=None):
        assert not _preload_content and _return_http_data_only and auth_settings == ["BearerToken"]
        self.requests.append((method, path, list(query_params)))
        return Response(200, json.dumps(self.pages.pop(0)).encode())


PAGES = [{"metadata": {"resourceVersion": "7", "continue": "tok"}, "items": [{"metadata": {"name": "a"}}]},
         {"metadata": {"resourceVersion": "8"}, "items": [{"metadata": {"name": "b"}}]}]


@pytest.mark.parametrize("api_class", [NewApi, OldApi])
def test_pages_are_followed_and_items_kept_as_dicts(api_class):
    api = api_class(PAGES)
    items, version = client.list_raw(api, "/apis/resource.k8s.io/v1/resourceslices", page_size=2,
                                     fieldSelector="spec.driver=gpu.nvidia.com", labelSelector=None)
    assert items == [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}] and version == "8"
    assert api.requests == [
        ("GET", "/apis/resource.k8s.io/v1/resourceslices", [("fieldSelector", "spec.driver=gpu.nvidia.com"),
                                                            ("limit", 2)]),
        ("GET", "/apis/resource.k8s.io/v1/resourceslices", [("fieldSelector", "spec.driver=gpu.nvidia.com"),
                                                            ("limit", 2), ("continue", "tok")])]


def test_an_error_answer_raises_api_exception_with_the_servers_message():
    with pytest.raises(client.ApiException) as caught:
        client.list_raw(NewApi([], status=403), "/apis/resource.k8s.io/v1/resourceslices")
    assert caught.value.status == 403
    assert client.api_error_message(caught.value) == "resourceslices is forbidden"


def test_raw_reader_reads_what_kube_reads():
    node_pages = [{"metadata": {}, "items": [{"metadata": {"name": "n2"}}, {"metadata": {"name": "n1"}}]}]
    reader = client.RawReader(NewApi(node_pages))
    assert reader.node_names("gpu=true") == ["n1", "n2"]
    assert reader.api.requests[0] == ("GET", "/api/v1/nodes", [("labelSelector", "gpu=true"),
                                                               ("limit", client.RAW_PAGE_SIZE)])
    reader = client.RawReader(NewApi([PAGES[1], PAGES[1], PAGES[1]]), page_size=1000)
    assert reader.slices("gpu.nvidia.com") == ([{"metadata": {"name": "b"}}], "8")
    assert reader.slices() == ([{"metadata": {"name": "b"}}], "8")
    assert reader.claims() == [{"metadata": {"name": "b"}}]
    assert [r[1:] for r in reader.api.requests] == [
        ("/apis/resource.k8s.io/v1/resourceslices", [("fieldSelector", "spec.driver=gpu.nvidia.com"), ("limit", 1000)]),
        ("/apis/resource.k8s.io/v1/resourceslices", [("limit", 1000)]),
        ("/apis/resource.k8s.io/v1/resourceclaims", [("limit", 1000)])]
