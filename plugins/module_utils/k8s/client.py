# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to reach the Kubernetes API: kubernetes.core's authentication, our own calls.

The connection options (kubeconfig, context, host, api_key, certificates, proxy and the
``K8S_AUTH_*`` variables) are exactly kubernetes.core's, resolved by its ``get_api_client``,
so ``module_defaults`` written for kubernetes.core work here too. The collection then talks
through the plain ``kubernetes`` ApiClient underneath, because DRA waits need list paging,
resource versions and watches that the dynamic client's helpers do not expose.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import functools

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dra.gpu.plugins.module_utils.inputs import inputs
from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_failures, connection_files
from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_settings
from ansible_collections.dra.gpu.plugins.module_utils.k8s import redaction
from ansible_collections.dra.gpu.plugins.module_utils.k8s.api_errors import ApiException

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
    HAS_K8S_CORE = True
    K8S_CORE_IMPORT_ERROR = None
except ImportError as exc:
    HAS_K8S_CORE = False
    K8S_CORE_IMPORT_ERROR = exc
    AUTH_ARG_SPEC = {}

try:
    from kubernetes import client as k8s_client
    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError as exc:
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = exc

RESOURCE_GROUP = "resource.k8s.io"
RESOURCE_VERSION = "v1"
# The plural of each resource.k8s.io kind, as the custom-object calls name it.
PLURALS = {"DeviceClass": "deviceclasses", "ResourceClaim": "resourceclaims",
           "ResourceClaimTemplate": "resourceclaimtemplates", "ResourceSlice": "resourceslices"}


def auth_argument_spec():
    """kubernetes.core's connection options, copied so callers may extend them."""
    return copy.deepcopy(AUTH_ARG_SPEC)


def kube_module(options, checks=None, needs_libraries=True, **module_options):
    """The AnsibleModule every dra.gpu module starts with (kubernetes.core's AnsibleK8SModule, ours).

    ``options`` gets kubernetes.core's connection options added; the module supports check
    mode; the libraries are checked; ``checks(params)``, a function returning the list of problem
    messages (built with inputs.Problems), fails the module before it reads or changes anything.
    ``module_options`` go to AnsibleModule (required_if, mutually_exclusive...)."""
    spec = auth_argument_spec()
    spec.update(options)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True, **module_options)
    mask_credentials(module)
    if needs_libraries:
        check_libraries(module)
    if checks:
        inputs.refuse(module, checks(module.params))
    return module


def mask_credentials(module):
    """Have Ansible mask every credential of the connection in all the module returns.

    kubernetes.core marks api_key, password and kubeconfig no_log, but a password in a proxy's
    or server's URL, a token in the kubeconfig file, or one from a K8S_AUTH_* variable can still
    reach a message through a library's error text; Ansible writes each no_log value as
    ******** wherever it occurs in the result, -vvv's invocation included."""
    found = connection_settings.settings(module.params)
    module.no_log_values.update(redaction.secret_values(found, module.params.get("proxy_headers")))


def check_libraries(module):
    """Fail the module with an install hint when a library is missing."""
    from ansible.module_utils.basic import missing_required_lib
    if not HAS_KUBERNETES:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=str(KUBERNETES_IMPORT_ERROR))
    if not HAS_K8S_CORE:
        module.fail_json(msg="the kubernetes.core collection is required: it comes with the `ansible` package, "
                             "or install it with ansible-galaxy collection install kubernetes.core",
                         exception=str(K8S_CORE_IMPORT_ERROR))


class _ModuleShim:
    """What kubernetes.core's ``get_api_client`` reads from a module, for a plain AnsibleModule."""

    def __init__(self, module):
        self.params = module.params
        self.check_mode = False
        self.server_side_dry_run = False
        self._module = module

    def requires(self, *args, **kwargs):
        return True

    def fail_json(self, **kwargs):
        self._module.fail_json(**kwargs)


# Modules whose whole job is to wait across an API server restart (a control-plane upgrade):
# for them a refused connection, a 5xx or a 401/403 at the start is what a restarting API
# server answers, so the first probe lets it pass and their own wait rides it out. Every
# other module, and every setting that cannot get better by waiting, fails at once.
PROBE_TIMEOUT = (5, 15)  # seconds: connect, read


def api_client(module, rides_out_restarts=False):
    """A kubernetes ApiClient configured from the module's connection options, checked once.

    Every module connects through here, so a wrong setting (a kubeconfig path that does not
    exist or is not a kubeconfig, a context it lacks, a closed port, an untrusted
    certificate, a proxy that is down, refused credentials) fails in one way: a message that
    names the setting, where it came from, and the fix; no traceback.
    """
    settings = connection_settings.settings(module.params)
    try:
        connection_files.check_files(settings)
        api = get_api_client(module=_ModuleShim(module)).client.client
    except Exception as exc:  # noqa: BLE001 - every failure becomes one message
        module.fail_json(msg=connection_failures.explain(exc, settings),
                         connection=connection_settings.describe(settings))
    try:
        k8s_client.VersionApi(api).get_code(_request_timeout=PROBE_TIMEOUT)
    except Exception as exc:  # noqa: BLE001
        if not (rides_out_restarts and connection_failures.may_be_restarting(exc)):
            module.fail_json(msg=connection_failures.explain(exc, settings),
                             connection=connection_settings.describe(settings))
    return api


def _typed_api(name):
    """A Kube attribute that makes kubernetes' ``name`` API object over the Kube's ApiClient on
    first use and keeps it."""
    def make(kube):
        return getattr(k8s_client, name)(kube.api)
    return functools.cached_property(make)


class Kube:
    """The few typed calls the collection needs, over one ApiClient.

    The typed API objects are made on first use: kubernetes' client imports an API's module and
    its models only then, and that is most of a module run's time (CoreV1Api 0.77 s, AppsV1Api
    0.40 s of CPU with kubernetes 37, against 0.05 s for CustomObjectsApi), while most module runs
    need one or two of them (docs/benchmarks.md)."""

    custom = _typed_api("CustomObjectsApi")
    core = _typed_api("CoreV1Api")
    apps = _typed_api("AppsV1Api")
    batch = _typed_api("BatchV1Api")
    policy = _typed_api("PolicyV1Api")

    def __init__(self, api):
        self.api = api

    def list_all(self, list_fn, page_size=500, **kwargs):
        """Every item of a list call, page by page; returns (items, resourceVersion)."""
        def page(token):
            answer = list_fn(limit=page_size, _continue=token, **kwargs) if token else list_fn(limit=page_size, **kwargs)
            return answer if isinstance(answer, dict) else self.api.sanitize_for_serialization(answer)
        return all_pages(page)

    def list_resource(self, plural, namespace=None, **kwargs):
        if namespace:
            return self.list_all(lambda **kw: self.custom.list_namespaced_custom_object(
                RESOURCE_GROUP, RESOURCE_VERSION, namespace, plural, **kw), **kwargs)
        return self.list_all(lambda **kw: self.custom.list_cluster_custom_object(
            RESOURCE_GROUP, RESOURCE_VERSION, plural, **kw), **kwargs)

    def slices(self, driver=None):
        selector = "spec.driver=%s" % driver if driver else None
        return self.list_resource("resourceslices", field_selector=selector) if selector \
            else self.list_resource("resourceslices")

    def claims(self):
        return self.list_resource("resourceclaims")[0]

    def node_names(self, label_selector):
        items, _version = self.list_all(self.core.list_node, label_selector=label_selector)
        return sorted(n["metadata"]["name"] for n in items)

    def workloads(self):
        """Every object that makes pods, by kind, in every namespace (dicts as the API returns them)."""
        lists = {"Deployment": self.apps.list_deployment_for_all_namespaces,
                 "StatefulSet": self.apps.list_stateful_set_for_all_namespaces,
                 "DaemonSet": self.apps.list_daemon_set_for_all_namespaces,
                 "ReplicaSet": self.apps.list_replica_set_for_all_namespaces,
                 "CronJob": self.batch.list_cron_job_for_all_namespaces,
                 "Job": self.batch.list_job_for_all_namespaces,
                 "Pod": self.core.list_pod_for_all_namespaces}
        return dict((kind, self.list_all(list_fn)[0]) for kind, list_fn in lists.items())

    def kube_system_config(self, name, key):
        """A YAML document stored in a kube-system ConfigMap (kube-proxy's, kubeadm's), or {}."""
        import yaml
        try:
            data = self.core.read_namespaced_config_map(name, "kube-system").data or {}
        except ApiException as exc:
            if exc.status == 404:
                return {}
            raise
        try:
            return yaml.safe_load(data.get(key) or "") or {}
        except yaml.YAMLError:
            return {}

    def server_version(self):
        info = k8s_client.VersionApi(self.api).get_code()
        return info.git_version

    def serves_resource_v1(self):
        try:
            groups = k8s_client.ApisApi(self.api).get_api_versions()
        except ApiException:
            return False
        for group in groups.groups or []:
            if group.name == RESOURCE_GROUP:
                return any(v.version == RESOURCE_VERSION for v in group.versions or [])
        return False


# Lists read as raw JSON. The kubernetes client's typed API classes cost their import (CoreV1Api
# alone imports hundreds of pydantic models: about 1.5 s of a module's start) and its models
# cost a deserialisation and a sanitize_for_serialization per object; a module that only reads
# lists of plain dicts needs neither. These helpers use the same ApiClient (so the same
# credentials, certificates and proxy as every other call) and parse each page with json.loads.
RAW_PAGE_SIZE = 500  # kubectl's chunk size; 250-1,000 measured alike over 1,000 slices, 100 slower


def get_json(api, path, query=None, timeout=None):
    """GET ``path`` (``/apis/...``) with the ApiClient's credentials; the body parsed by json.loads.

    ``query`` is a list of (name, value) pairs. A non-2xx answer raises :class:`ApiException`
    with the server's status and body, as the typed calls do.
    """
    return request_json(api, "GET", path, query, timeout=timeout)


def request_json(api, method, path, query=None, body=None, content_type=None, timeout=None):
    """``method`` on ``path`` through the ApiClient ``api`` (its credentials, certificates and
    proxy), ``body`` sent as JSON text (which is also YAML, for apply patches) with
    ``content_type``; the answer parsed by json.loads. A non-2xx answer raises :class:`ApiException`."""
    import json
    query = list(query or [])
    headers = {"Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    text = None if body is None else json.dumps(body)
    if hasattr(api, "param_serialize"):  # kubernetes >= 34
        extra = {} if text is None else {"body": text}
        request = api.param_serialize(method=method, resource_path=path, query_params=query, header_params=headers,
                                      auth_settings=["BearerToken"], **extra)
        response = api.call_api(*request, _request_timeout=timeout)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise ApiException.from_response(http_resp=response, body=(data or b"").decode("utf-8", "replace"),
                                             data=None)
    else:  # older clients raise non-2xx answers themselves
        response = api.call_api(path, method, query_params=query, header_params=headers, body=text,
                                auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True,
                                _request_timeout=timeout)
        data = response.data
    return json.loads(data)


def list_raw(api, path, page_size=RAW_PAGE_SIZE, **query):
    """Every item of the list at ``path``, page by page, as plain dicts; returns (items, resourceVersion).

    ``query`` takes the list call's parameters by their API names (``fieldSelector``,
    ``labelSelector``); None values are left out. The same contract as :meth:`Kube.list_all`.
    """
    params = [(name, value) for name, value in sorted(query.items()) if value is not None]
    return all_pages(lambda token: get_json(api, path, params + [("limit", page_size)] +
                                            ([("continue", token)] if token else [])))


def all_pages(page):
    """Items of every page ``page(continue token or None)`` returns, following the list's continue
    token; returns (items, the newest resourceVersion)."""
    items, token, version = [], None, None
    while True:
        answer = page(token)
        items.extend(answer.get("items") or [])
        meta = answer.get("metadata") or {}
        version = meta.get("resourceVersion") or version
        token = meta.get("continue")
        if not token:
            return items, version


class RawReader:
    """The read calls of :class:`Kube` that the inventory needs (``slices``, ``claims``,
    ``node_names``), with the same results, read through :func:`list_raw`; and the lists the
    usage report reads (``nodes``, ``pods``, ``device_classes``)."""

    RESOURCE_PATH = "/apis/%s/%s" % (RESOURCE_GROUP, RESOURCE_VERSION)

    def __init__(self, api, page_size=RAW_PAGE_SIZE):
        self.api = api
        self.page_size = page_size

    def list_resource(self, plural, **query):
        return list_raw(self.api, "%s/%s" % (self.RESOURCE_PATH, plural), self.page_size, **query)

    def slices(self, driver=None):
        return self.list_resource("resourceslices", fieldSelector="spec.driver=%s" % driver if driver else None)

    def claims(self):
        return self.list_resource("resourceclaims")[0]

    def node_names(self, label_selector):
        return sorted(n["metadata"]["name"] for n in self.nodes(label_selector))

    def nodes(self, label_selector=None):
        return list_raw(self.api, "/api/v1/nodes", self.page_size, labelSelector=label_selector)[0]

    def pods(self):
        return list_raw(self.api, "/api/v1/pods", self.page_size)[0]

    def device_classes(self):
        return self.list_resource("deviceclasses")[0]


def exit_with_reading(module, read, input_errors=()):
    """The whole run of a read-only module: ``read(kube)`` returns the result dict.
    ``input_errors`` are the exception types that mean bad input (their text is the message)."""
    try:
        result = read(Kube(api_client(module)))
    except input_errors as exc:
        module.fail_json(msg=str(exc))
    except ApiException as exc:
        module.fail_json(msg="could not read the cluster: %s" % api_error_message(exc))
    module.exit_json(changed=False, **result)


def api_error_message(exc):
    """The API server's own message from an ApiException, else its text."""
    import json
    body = getattr(exc, "body", None)
    if body:
        try:
            status = json.loads(body)
        except (TypeError, ValueError):
            return str(body)
        # A Status object carries the message; any other JSON body is shown as it came.
        if isinstance(status, dict):
            return status.get("message") or str(exc)
        return str(body)
    return str(exc)
