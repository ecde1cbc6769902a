"""client.py: raw JSON lists (list_raw, RawReader), paging, error messages, and Kube over fakes of the typed API."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import client
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.api_fakes import Response


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

    def call_api(self, path, method, query_params=None, header_params=None, body=None, auth_settings=None,
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


def test_a_new_client_error_keeps_the_status_and_passes_the_timeout_on():
    class TimedApi(NewApi):
        def call_api(self, method, url, headers, body, post_params, _request_timeout=None):
            self.timeout = _request_timeout
            return Response(500, b"")

    api = TimedApi([], status=500)
    with pytest.raises(client.ApiException) as caught:
        client.get_json(api, "/api/v1/nodes", timeout=(5, 15))
    assert caught.value.status == 500 and api.timeout == (5, 15)


def test_list_raw_leaves_out_parameters_that_are_none_and_orders_the_rest_by_name():
    api = NewApi([{"metadata": {}, "items": []}])
    assert client.list_raw(api, "/api/v1/pods", page_size=10, labelSelector="a=b", fieldSelector=None,
                           allowWatchBookmarks="false") == ([], None)
    assert api.requests == [("GET", "/api/v1/pods", [("allowWatchBookmarks", "false"), ("labelSelector", "a=b"), ("limit", 10)])]


# ----- all_pages ------------------------------------------------------------------------

def test_all_pages_follows_the_continue_token_and_keeps_the_newest_version():
    answers = {None: {"metadata": {"resourceVersion": "5", "continue": "t1"}, "items": [1, 2]},
               "t1": {"metadata": {"continue": "t2"}, "items": None},
               "t2": {"items": [3]}}
    asked = []

    def page(token):
        asked.append(token)
        return answers[token]
    # a page without a resourceVersion keeps the one read before
    assert client.all_pages(page) == ([1, 2, 3], "5")
    assert asked == [None, "t1", "t2"]


def test_all_pages_of_an_empty_list():
    assert client.all_pages(lambda token: {}) == ([], None)


# ----- api_error_message ------------------------------------------------------------------

def test_the_servers_message_is_taken_from_a_status_body():
    exc = client.ApiException(status=422, reason="Unprocessable Entity")
    exc.body = '{"kind": "Status", "message": "spec.selectors[0]: Invalid value"}'
    assert client.api_error_message(exc) == "spec.selectors[0]: Invalid value"


def test_a_body_that_is_not_json_is_given_as_it_is():
    exc = client.ApiException(status=502, reason="Bad Gateway")
    exc.body = "<html>bad gateway</html>"
    assert client.api_error_message(exc) == "<html>bad gateway</html>"


def test_without_a_message_the_exceptions_own_text_is_given():
    exc = client.ApiException(status=404, reason="Not Found")
    assert client.api_error_message(exc) == str(exc) and "Not Found" in client.api_error_message(exc)
    exc.body = '{"kind": "Status"}'
    assert "Not Found" in client.api_error_message(exc)
    assert client.api_error_message(ValueError("plain")) == "plain"


# ----- RawReader's other lists ----------------------------------------------------------

def test_raw_reader_lists_nodes_pods_and_device_classes_at_their_paths():
    page = {"metadata": {}, "items": [{"metadata": {"name": "x"}}]}
    reader = client.RawReader(NewApi([page] * 4), page_size=50)
    assert reader.nodes() == reader.pods() == reader.device_classes() == page["items"]
    assert reader.nodes("gpu=true") == page["items"]
    assert reader.api.requests == [("GET", "/api/v1/nodes", [("limit", 50)]),
                                   ("GET", "/api/v1/pods", [("limit", 50)]),
                                   ("GET", "/apis/resource.k8s.io/v1/deviceclasses", [("limit", 50)]),
                                   ("GET", "/api/v1/nodes", [("labelSelector", "gpu=true"), ("limit", 50)])]


# ----- Kube, over fakes of the typed API classes ----------------------------------------

class Model:
    """What a typed call returns; the ApiClient turns it into a dict."""

    def __init__(self, data):
        self.data = data


class SerializingApi:
    @staticmethod
    def sanitize_for_serialization(obj):
        return obj.data


class Lister:
    """A typed list call: each call answers the next page and is recorded with its arguments."""

    def __init__(self, pages):
        self.pages = list(pages)
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.pages.pop(0)


def kube():
    # Without __init__: it builds the typed API classes, whose import costs seconds; each test
    # sets the one it calls to a fake.
    k = client.Kube.__new__(client.Kube)
    k.api = SerializingApi()
    return k


def test_list_all_pages_with_continue_and_turns_models_into_dicts():
    lister = Lister([Model({"metadata": {"continue": "c", "resourceVersion": "1"}, "items": [{"n": 1}]}),
                     {"metadata": {"resourceVersion": "2"}, "items": [{"n": 2}]}])
    assert kube().list_all(lister, page_size=7, label_selector="a=b") == ([{"n": 1}, {"n": 2}], "2")
    assert lister.calls == [((), {"limit": 7, "label_selector": "a=b"}),
                            ((), {"limit": 7, "_continue": "c", "label_selector": "a=b"})]


class FakeCustom:
    def __init__(self):
        self.calls = []

    def list_cluster_custom_object(self, group, version, plural, **kwargs):
        self.calls.append(("cluster", group, version, plural, kwargs))
        return {"metadata": {"resourceVersion": "9"}, "items": [{"metadata": {"name": plural}}]}

    def list_namespaced_custom_object(self, group, version, namespace, plural, **kwargs):
        self.calls.append((namespace, group, version, plural, kwargs))
        return {"metadata": {}, "items": []}


def test_resources_are_read_cluster_wide_or_in_a_namespace_and_slices_by_driver():
    k = kube()
    k.custom = FakeCustom()
    assert k.slices("gpu.nvidia.com") == ([{"metadata": {"name": "resourceslices"}}], "9")
    assert k.slices() == ([{"metadata": {"name": "resourceslices"}}], "9")
    assert k.claims() == [{"metadata": {"name": "resourceclaims"}}]
    assert k.list_resource("resourceclaims", namespace="ns") == ([], None)
    assert k.custom.calls == [
        ("cluster", "resource.k8s.io", "v1", "resourceslices", {"limit": 500, "field_selector": "spec.driver=gpu.nvidia.com"}),
        ("cluster", "resource.k8s.io", "v1", "resourceslices", {"limit": 500}),
        ("cluster", "resource.k8s.io", "v1", "resourceclaims", {"limit": 500}),
        ("ns", "resource.k8s.io", "v1", "resourceclaims", {"limit": 500})]


def test_node_names_are_sorted():
    k = kube()
    lister = Lister([{"items": [{"metadata": {"name": "w2"}}, {"metadata": {"name": "w10"}},
                                {"metadata": {"name": "cp"}}]}])

    class Core:
        list_node = lister
    k.core = Core()
    assert k.node_names("gpu=true") == ["cp", "w10", "w2"]
    assert lister.calls[0][1]["label_selector"] == "gpu=true"


def test_workloads_are_read_for_every_kind_that_makes_pods():
    k = kube()

    class Every:
        def __getattr__(self, name):
            return lambda **kwargs: {"items": [{"listed_by": name}]}
    k.apps = k.batch = k.core = Every()
    found = k.workloads()
    assert sorted(found) == ["CronJob", "DaemonSet", "Deployment", "Job", "Pod", "ReplicaSet", "StatefulSet"]
    assert found["CronJob"] == [{"listed_by": "list_cron_job_for_all_namespaces"}]
    assert found["Pod"] == [{"listed_by": "list_pod_for_all_namespaces"}]


class ConfigMaps:
    def __init__(self, data=None, status=None):
        self.data, self.status, self.read = data, status, []

    def read_namespaced_config_map(self, name, namespace):
        self.read.append((name, namespace))
        if self.status:
            raise client.ApiException(status=self.status)
        return Model(self.data)


@pytest.mark.parametrize("data, expected", [
    ({"ClusterConfiguration": "kubernetesVersion: v1.35.4\n"}, {"kubernetesVersion": "v1.35.4"}),
    ({"other": "x: 1"}, {}),
    (None, {}),
    ({"ClusterConfiguration": "a: [unclosed"}, {}),
])
def test_kube_system_config_reads_one_yaml_key_or_gives_an_empty_dict(data, expected):
    k = kube()
    k.core = ConfigMaps(data)
    assert k.kube_system_config("kubeadm-config", "ClusterConfiguration") == expected
    assert k.core.read == [("kubeadm-config", "kube-system")]


def test_kube_system_config_missing_is_empty_but_other_errors_are_raised():
    k = kube()
    k.core = ConfigMaps(status=404)
    assert k.kube_system_config("kube-proxy", "config.conf") == {}
    k.core = ConfigMaps(status=403)
    with pytest.raises(client.ApiException):
        k.kube_system_config("kube-proxy", "config.conf")


class Named:
    def __init__(self, **fields):
        self.__dict__.update(fields)


@pytest.mark.parametrize("groups, served", [
    ([Named(name="apps", versions=[Named(version="v1")]),
      Named(name="resource.k8s.io", versions=[Named(version="v1beta2"), Named(version="v1")])], True),
    ([Named(name="resource.k8s.io", versions=[Named(version="v1beta1")])], False),
    ([Named(name="resource.k8s.io", versions=None)], False),
    (None, False),
])
def test_serves_resource_v1_looks_for_the_v1_version_of_the_group(monkeypatch, groups, served):
    class ApisApi:
        def __init__(self, api):
            pass

        def get_api_versions(self):
            return Named(groups=groups)
    monkeypatch.setattr(client.k8s_client, "ApisApi", ApisApi)
    assert kube().serves_resource_v1() is served


def test_an_api_server_that_cannot_list_its_groups_does_not_serve_v1(monkeypatch):
    class ApisApi:
        def __init__(self, api):
            pass

        def get_api_versions(self):
            raise client.ApiException(status=503)
    monkeypatch.setattr(client.k8s_client, "ApisApi", ApisApi)
    assert kube().serves_resource_v1() is False


# ----- a read-only module's run ---------------------------------------------------------

class Exited(Exception):
    pass


class FakeModule:
    params = {}

    def fail_json(self, **kwargs):
        raise Exited("fail", kwargs)

    def exit_json(self, **kwargs):
        raise Exited("exit", kwargs)


def outcome(monkeypatch, read, input_errors=()):
    monkeypatch.setattr(client, "api_client", lambda module: "api")
    monkeypatch.setattr(client, "Kube", lambda api: "kube of %s" % api)
    with pytest.raises(Exited) as done:
        client.exit_with_reading(FakeModule(), read, input_errors)
    return done.value.args


def test_exit_with_reading_returns_the_reading_unchanged(monkeypatch):
    assert outcome(monkeypatch, lambda kube: {"seen": kube}) == ("exit", {"changed": False, "seen": "kube of api"})


def test_exit_with_reading_fails_with_the_input_errors_text_or_the_servers_message(monkeypatch):
    def bad_input(kube):
        raise KeyError("no such pool")
    assert outcome(monkeypatch, bad_input, (KeyError,)) == ("fail", {"msg": "'no such pool'"})

    def refused(kube):
        exc = client.ApiException(status=403)
        exc.body = '{"message": "nodes is forbidden"}'
        raise exc
    assert outcome(monkeypatch, refused) == ("fail", {"msg": "could not read the cluster: nodes is forbidden"})


@pytest.mark.skipif(not client.HAS_K8S_CORE, reason="the options are kubernetes.core's")
def test_the_auth_argument_spec_is_a_copy_callers_may_change():
    spec = client.auth_argument_spec()
    assert "kubeconfig" in spec
    spec["kubeconfig"]["type"] = "changed"
    assert client.auth_argument_spec()["kubeconfig"]["type"] != "changed"


def test_the_module_shim_gives_kubernetes_core_what_it_reads():
    failed = []

    class Module:
        params = {"kubeconfig": "/k"}

        def fail_json(self, **kwargs):
            failed.append(kwargs)
    shim = client._ModuleShim(Module())
    assert shim.params == {"kubeconfig": "/k"} and shim.check_mode is False and shim.requires("anything")
    shim.fail_json(msg="x")
    assert failed == [{"msg": "x"}]


@pytest.mark.parametrize("body", ["null", '"forbidden"', "[1, 2]"])
def test_api_error_message_shows_a_json_body_that_is_no_status_as_it_came(body):
    assert client.api_error_message(client.ApiException(status=500, reason="x")) and \
        client.api_error_message(_with_body(body)) == body


def _with_body(body):
    exc = client.ApiException(status=500, reason="Internal Server Error")
    exc.body = body
    return exc
