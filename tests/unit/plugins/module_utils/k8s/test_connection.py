from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection

KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "lab",
              "clusters": [{"name": "lab", "cluster": {"server": "https://10.0.0.1:6443"}}],
              "users": [{"name": "admin", "user": {"token": "t"}}],
              "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "admin"}}]}


def params(**values):
    base = dict((name, None) for name in connection.ENVIRONMENT)
    base.update(values)
    return base


def problem(found):
    with pytest.raises(connection.ConnectionProblem) as err:
        connection.check_files(found)
    return str(err.value)


def test_options_come_before_environment_variables():
    found = connection.settings(params(context="prod"), {"K8S_AUTH_CONTEXT": "dev", "K8S_AUTH_HOST": "https://h"})
    assert found["context"].source == "option" and found["host"].source == "K8S_AUTH_HOST"
    assert "K8S_AUTH_HOST" in found["host"].where()


def test_host_and_token_need_no_kubeconfig():
    assert connection.settings(params(host="https://h", api_key="x"), {"KUBECONFIG": "/k"})["_kubeconfig"] is None
    found = connection.settings(params(), {"KUBECONFIG": "/k"})
    assert found["_kubeconfig"].source == "KUBECONFIG"
    assert connection.settings(params(), {})["_kubeconfig"].source == "default"


def test_a_kubeconfig_that_does_not_exist(tmp_path):
    missing = str(tmp_path / "nope")
    text = problem(connection.settings(params(kubeconfig=missing), {}))
    assert missing in text and "does not exist" in text and "set the kubeconfig option" in text
    text = problem(connection.settings(params(), {"KUBECONFIG": missing}))
    assert "environment variable KUBECONFIG" in text and "set KUBECONFIG" in text


def test_not_a_kubeconfig(tmp_path):
    plain = tmp_path / "notes.txt"
    plain.write_text("just some text\n")
    assert "has no clusters and contexts" in problem(connection.settings(params(kubeconfig=str(plain)), {}))
    broken = tmp_path / "broken.yml"
    broken.write_text("clusters: [a\n b: }\n")
    text = problem(connection.settings(params(kubeconfig=str(broken)), {}))
    assert "not valid YAML (line 2)" in text


def test_a_context_that_is_not_in_the_kubeconfig(tmp_path):
    path = tmp_path / "config"
    path.write_text(json.dumps(KUBECONFIG))
    text = problem(connection.settings(params(kubeconfig=str(path), context="prod"), {}))
    assert "context 'prod'" in text and "whose contexts are: lab" in text and "set context to one of them" in text
    found = connection.settings(params(kubeconfig=str(path)), {})
    connection.check_files(found)
    assert found["_parsed"]["server"] == "https://10.0.0.1:6443"


def test_the_first_kubeconfig_of_a_list_wins(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_text(json.dumps(dict(KUBECONFIG, **{"current-context": "other", "contexts": []})))
    second.write_text(json.dumps(KUBECONFIG))
    found = connection.settings(params(), {"KUBECONFIG": "%s:%s" % (tmp_path / "gone", first) + ":" + str(second)})
    text = problem(found)
    assert "current-context 'other'" in text


def test_certificate_files_must_exist():
    text = problem(connection.settings(params(host="https://h", api_key="x", ca_cert="/no/ca.crt"), {}))
    assert "ca_cert /no/ca.crt" in text and "set ca_cert" in text


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
    host = connection.settings(params(host="https://10.0.0.9:6443", api_key="x"), {})
    text = connection.explain(refused(), host)
    assert "nothing answers at https://10.0.0.9:6443" in text and "host option" in text and "To fix: check host" in text
    text = connection.explain(untrusted(), host)
    assert "does not trust" in text and "set ca_cert" in text
    proxied = connection.settings(params(host="https://h", api_key="x", proxy="http://p:3128"), {})
    text = connection.explain(proxy_down(), proxied)
    assert "the proxy http://p:3128" in text and "correct proxy" in text
    text = connection.explain(ApiException(401), host)
    assert "refused the token from the api_key option" in text and "401 Unauthorized" in text and "api_key" in text


def test_the_server_of_a_kubeconfig_is_named(tmp_path):
    path = tmp_path / "config"
    path.write_text(json.dumps(KUBECONFIG))
    found = connection.settings(params(kubeconfig=str(path)), {})
    connection.check_files(found)
    text = connection.explain(refused(), found)
    assert "https://10.0.0.1:6443 (the server of context 'lab' in kubeconfig %s)" % path in text


def test_what_a_restarting_api_server_answers():
    assert connection.may_be_restarting(refused())
    assert connection.may_be_restarting(ApiException(503)) and connection.may_be_restarting(ApiException(401))
    assert not connection.may_be_restarting(untrusted())
    assert not connection.may_be_restarting(proxy_down())
    assert not connection.may_be_restarting(ApiException(404))


def test_describe_leaves_secrets_out():
    summary = connection.describe(connection.settings(params(host="https://h", api_key="secret"), {}))
    assert summary["api_key"] == {"value": "(set)", "from": "option"} and "secret" not in json.dumps(summary)
    assert summary["kubeconfig_read"] is None


def test_a_password_in_the_proxy_url_is_never_repeated():
    # Issue 33: the proxy's URL was printed whole when the proxy did not answer.
    for proxy, environ in (("http://alice:s3cr%40t-pw@p:3128", {}), (None, {"K8S_AUTH_PROXY": "http://alice:s3cr%40t-pw@p:3128"})):
        found = connection.settings(params(host="https://h", api_key="x", proxy=proxy), environ)
        text = connection.explain(proxy_down(), found)
        assert "the proxy http://alice:***@p:3128" in text and "correct proxy" in text, text
        assert "s3cr" not in text
        summary = json.dumps(connection.describe(found))
        assert "http://alice:***@p:3128" in summary and "s3cr" not in summary


def test_a_password_in_the_server_url_is_never_repeated(tmp_path):
    config = json.loads(json.dumps(KUBECONFIG))
    config["clusters"][0]["cluster"]["server"] = "https://admin:hunter22@10.0.0.1:6443"
    path = tmp_path / "config"
    path.write_text(json.dumps(config))
    found = connection.settings(params(kubeconfig=str(path)), {})
    connection.check_files(found)
    text = connection.explain(refused(), found)
    assert "https://admin:***@10.0.0.1:6443" in text and "hunter22" not in text
