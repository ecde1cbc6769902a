"""connection_files: the certificate files and kubeconfigs the settings name, checked before a client is built."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_files, connection_settings
from ansible_collections.dra.gpu.tests.unit.plugins.module_utils.k8s.connection_params import KUBECONFIG, params


def problem(found):
    with pytest.raises(connection_settings.ConnectionProblem) as err:
        connection_files.check_files(found)
    return str(err.value)


def test_a_kubeconfig_that_does_not_exist(tmp_path):
    missing = str(tmp_path / "nope")
    text = problem(connection_settings.settings(params(kubeconfig=missing), {}))
    assert missing in text and "does not exist" in text and "set the kubeconfig option" in text
    text = problem(connection_settings.settings(params(), {"KUBECONFIG": missing}))
    assert "environment variable KUBECONFIG" in text and "set KUBECONFIG" in text


def test_not_a_kubeconfig(tmp_path):
    plain = tmp_path / "notes.txt"
    plain.write_text("just some text\n")
    assert "has no clusters and contexts" in problem(connection_settings.settings(params(kubeconfig=str(plain)), {}))
    broken = tmp_path / "broken.yml"
    broken.write_text("clusters: [a\n b: }\n")
    text = problem(connection_settings.settings(params(kubeconfig=str(broken)), {}))
    assert "not valid YAML (line 2)" in text


def test_a_context_that_is_not_in_the_kubeconfig(tmp_path):
    path = tmp_path / "config"
    path.write_text(json.dumps(KUBECONFIG))
    text = problem(connection_settings.settings(params(kubeconfig=str(path), context="prod"), {}))
    assert "context 'prod'" in text and "whose contexts are: lab" in text and "set context to one of them" in text
    found = connection_settings.settings(params(kubeconfig=str(path)), {})
    connection_files.check_files(found)
    assert found["_parsed"]["server"] == "https://10.0.0.1:6443"


def test_the_first_kubeconfig_of_a_list_wins(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_text(json.dumps(dict(KUBECONFIG, **{"current-context": "other", "contexts": []})))
    second.write_text(json.dumps(KUBECONFIG))
    found = connection_settings.settings(params(), {"KUBECONFIG": "%s:%s" % (tmp_path / "gone", first) + ":" + str(second)})
    text = problem(found)
    assert "current-context 'other'" in text


def test_certificate_files_must_exist():
    text = problem(connection_settings.settings(params(host="https://h", api_key="x", ca_cert="/no/ca.crt"), {}))
    assert "ca_cert /no/ca.crt" in text and "set ca_cert" in text
