from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_settings, redaction


def params(**values):
    base = dict((name, None) for name in connection_settings.ENVIRONMENT)
    base.update(values)
    return base


@pytest.mark.parametrize("text,expected", [
    ("http://alice:pw@proxy:3128", "http://alice:***@proxy:3128"),
    ("the proxy https://u:p%40ss@10.0.0.1:8443/x does not answer", "the proxy https://u:***@10.0.0.1:8443/x does not answer"),
    ("socks5://tok3n@proxy", "socks5://***@proxy"),
    ("https://10.0.0.1:6443", "https://10.0.0.1:6443"),
    ("no URL here: user:pw@host", "no URL here: user:pw@host"),
    ("two: http://a:1@x and http://b:2@y", "two: http://a:***@x and http://b:***@y"),
    (None, None),
])
def test_url_credentials_are_written_as_stars(text, expected):
    assert redaction.url(text) == expected


def kubeconfig(user, server="https://10.0.0.1:6443"):
    return {"apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}


def test_every_credential_of_a_kubeconfig_file_is_listed(tmp_path):
    path = tmp_path / "config"
    path.write_text(json.dumps(kubeconfig(
        {"token": "tok-123", "password": "basic-pw", "username": "bob", "client-key-data": "S0VZREFUQQ==",
         "client-certificate-data": "Q0VSVA==",
         "auth-provider": {"config": {"access-token": "acc-tok", "refresh-token": "ref-tok"}},
         "exec": {"env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "aws-secret"}, {"name": "REGION", "value": "eu"}]}},
        server="https://root:srv-pw@10.0.0.1:6443")))
    values = redaction.secret_values(connection_settings.settings(params(kubeconfig=str(path)), {}))
    assert set(values) == {"tok-123", "basic-pw", "S0VZREFUQQ==", "acc-tok", "ref-tok", "aws-secret", "srv-pw"}


def test_credentials_from_options_variables_and_headers():
    found = connection_settings.settings(params(host="https://h", password="opt-pw", username="u"),
                                         {"K8S_AUTH_API_KEY": "env-token", "K8S_AUTH_PROXY": "http://p:px%21pw@proxy:1"})
    values = redaction.secret_values(found, {"proxy_basic_auth": "pu:hdr-pw"})
    assert {"opt-pw", "env-token", "px%21pw", "px!pw", "pu:hdr-pw", "hdr-pw"} <= set(values)


def test_the_default_kubeconfig_and_an_inline_one(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(json.dumps(kubeconfig({"token": "home-token"})))
    assert redaction.secret_values(connection_settings.settings(params(), {})) == ["home-token"]
    inline = connection_settings.settings(params(kubeconfig=kubeconfig({"password": "inline-pw"})), {})
    assert redaction.secret_values(inline) == ["inline-pw"]


def test_unreadable_kubeconfigs_and_short_values_are_skipped(tmp_path):
    broken = tmp_path / "broken"
    broken.write_text("clusters: [")
    found = connection_settings.settings(params(kubeconfig="%s:%s" % (broken, tmp_path / "missing"), api_key="x"), {})
    assert redaction.secret_values(found) == []  # "x" is too short to mask as a free-standing string
