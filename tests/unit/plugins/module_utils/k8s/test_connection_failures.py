"""connection_failures: a failed connection in one sentence, and what a restarting API server answers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_failures, connection_files, connection_settings
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.k8s.connection_params import KUBECONFIG, params


class MaxRetryError(Exception):
    def __init__(self, reason):
        super(MaxRetryError, self).__init__("HTTPSConnectionPool(host='h'): Max retries exceeded (Caused by %r)" % reason)
        self.reason = reason


class NewConnectionError(Exception):
    pass


class ProxyError(Exception):
    pass


class SSLError(Exception):
    pass


class SSLCertVerificationError(Exception):
    pass


class ApiException(Exception):
    def __init__(self, status):
        super(ApiException, self).__init__("(%d)" % status)
        self.status = status


def refused():
    inner = ConnectionRefusedError(111, "Connection refused")
    outer = NewConnectionError("Failed to establish a new connection: [Errno 111] Connection refused")
    outer.__cause__ = inner
    return MaxRetryError(outer)


def untrusted():
    inner = SSLCertVerificationError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed")
    return MaxRetryError(SSLError(inner))


def proxy_down():
    return MaxRetryError(ProxyError("Unable to connect to proxy", NewConnectionError("refused")))


def test_explanations_name_the_setting_and_the_fix():
    host = connection_settings.settings(params(host="https://10.0.0.9:6443", api_key="x"), {})
    text = connection_failures.explain(refused(), host)
    assert "nothing answers at https://10.0.0.9:6443" in text and "host option" in text and "To fix: check host" in text
    text = connection_failures.explain(untrusted(), host)
    assert "does not trust" in text and "set ca_cert" in text
    proxied = connection_settings.settings(params(host="https://h", api_key="x", proxy="http://p:3128"), {})
    text = connection_failures.explain(proxy_down(), proxied)
    assert "the proxy http://p:3128" in text and "correct proxy" in text
    text = connection_failures.explain(ApiException(401), host)
    assert "refused the token from the api_key option" in text and "401 Unauthorized" in text and "api_key" in text


def test_the_server_of_a_kubeconfig_is_named(tmp_path):
    path = tmp_path / "config"
    path.write_text(json.dumps(KUBECONFIG))
    found = connection_settings.settings(params(kubeconfig=str(path)), {})
    connection_files.check_files(found)
    text = connection_failures.explain(refused(), found)
    assert "https://10.0.0.1:6443 (the server of context 'lab' in kubeconfig %s)" % path in text


def test_what_a_restarting_api_server_answers():
    assert connection_failures.may_be_restarting(refused())
    assert connection_failures.may_be_restarting(ApiException(503)) and connection_failures.may_be_restarting(ApiException(401))
    assert not connection_failures.may_be_restarting(untrusted())
    assert not connection_failures.may_be_restarting(proxy_down())
    assert not connection_failures.may_be_restarting(ApiException(404))


def test_a_password_in_the_proxy_url_is_never_repeated():
    # Issue 33: the proxy's URL was printed whole when the proxy did not answer.
    for proxy, environ in (("http://alice:s3cr%40t-pw@p:3128", {}), (None, {"K8S_AUTH_PROXY": "http://alice:s3cr%40t-pw@p:3128"})):
        found = connection_settings.settings(params(host="https://h", api_key="x", proxy=proxy), environ)
        text = connection_failures.explain(proxy_down(), found)
        assert "the proxy http://alice:***@p:3128" in text and "correct proxy" in text, text
        assert "s3cr" not in text
        summary = json.dumps(connection_settings.describe(found))
        assert "http://alice:***@p:3128" in summary and "s3cr" not in summary


def test_a_password_in_the_server_url_is_never_repeated(tmp_path):
    config = json.loads(json.dumps(KUBECONFIG))
    config["clusters"][0]["cluster"]["server"] = "https://admin:hunter22@10.0.0.1:6443"
    path = tmp_path / "config"
    path.write_text(json.dumps(config))
    found = connection_settings.settings(params(kubeconfig=str(path)), {})
    connection_files.check_files(found)
    text = connection_failures.explain(refused(), found)
    assert "https://admin:***@10.0.0.1:6443" in text and "hunter22" not in text
