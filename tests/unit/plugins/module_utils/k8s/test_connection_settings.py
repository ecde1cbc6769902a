"""connection_settings: which settings are in effect, where each comes from, and what a result may show."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.dra.gpu.plugins.module_utils.k8s import connection_settings


def params(**values):
    base = dict((name, None) for name in connection_settings.ENVIRONMENT)
    base.update(values)
    return base


def test_options_come_before_environment_variables():
    found = connection_settings.settings(params(context="prod"), {"K8S_AUTH_CONTEXT": "dev", "K8S_AUTH_HOST": "https://h"})
    assert found["context"].source == "option" and found["host"].source == "K8S_AUTH_HOST"
    assert "K8S_AUTH_HOST" in found["host"].where()


def test_host_and_token_need_no_kubeconfig():
    assert connection_settings.settings(params(host="https://h", api_key="x"), {"KUBECONFIG": "/k"})["_kubeconfig"] is None
    found = connection_settings.settings(params(), {"KUBECONFIG": "/k"})
    assert found["_kubeconfig"].source == "KUBECONFIG"
    assert connection_settings.settings(params(), {})["_kubeconfig"].source == "default"


def test_describe_leaves_secrets_out():
    summary = connection_settings.describe(connection_settings.settings(params(host="https://h", api_key="secret"), {}))
    assert summary["api_key"] == {"value": "(set)", "from": "option"} and "secret" not in json.dumps(summary)
    assert summary["kubeconfig_read"] is None


def test_the_kubeconfig_setting_is_named_with_its_fix():
    default = connection_settings.settings(params(), {})["_kubeconfig"]
    assert "neither the kubeconfig option nor KUBECONFIG is set" in connection_settings.kubeconfig_where(default)
    assert "module_defaults for group/dra.gpu.k8s" in connection_settings.kubeconfig_fix(default)
    variable = connection_settings.settings(params(), {"KUBECONFIG": "/k"})["_kubeconfig"]
    assert connection_settings.kubeconfig_where(variable) == "from the environment variable KUBECONFIG"
    assert connection_settings.kubeconfig_fix(variable).startswith("set KUBECONFIG to the path")
    option = connection_settings.settings(params(kubeconfig="/k"), {})["_kubeconfig"]
    assert connection_settings.kubeconfig_fix(option).startswith("set the kubeconfig option")
