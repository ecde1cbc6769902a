from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.inputs import helm_reach

UNAUTHORIZED = "Error: Kubernetes cluster unreachable: the server has asked for the client to provide credentials"


class FakeHelm:
    """run_command's shape: records what Helm was started with, answers as told."""

    def __init__(self, rc=0, err=""):
        self.rc, self.err, self.calls = rc, err, []

    def __call__(self, command, environ_update=None):
        self.calls.append((command, dict(environ_update or {})))
        return self.rc, "[]", self.err


def test_the_fallbacks_are_kubernetes_core_helms_own():
    assert helm_reach.fallbacks("api_key") == ("K8S_AUTH_API_KEY",)
    assert helm_reach.fallbacks("ca_cert") == ("K8S_AUTH_SSL_CA_CERT",)
    assert helm_reach.fallbacks("validate_certs") == ("K8S_AUTH_VERIFY_SSL",)


def test_options_first_then_the_helm_modules_own_variables():
    used = helm_reach.helm_settings({"context": "prod", "api_key": None},
                                    {"K8S_AUTH_CONTEXT": "dev", "K8S_AUTH_API_KEY": "tok",
                                     "K8S_AUTH_CA_CERT": "/ca",  # not a variable kubernetes.core.helm reads
                                     "K8S_AUTH_SSL_CA_CERT": "/ssl-ca"})
    assert used["context"].value == "prod" and used["context"].source == "option"
    assert used["api_key"].source == "K8S_AUTH_API_KEY" and used["ca_cert"].value == "/ssl-ca"


def test_the_environment_helm_gets():
    used = helm_reach.helm_settings({"host": "https://h:6443", "api_key": "tok", "validate_certs": False}, {})
    variables, files = helm_reach.environment(used, {"KUBECONFIG": os.devnull})
    assert variables == {"KUBECONFIG": os.devnull, "HELM_KUBEAPISERVER": "https://h:6443", "HELM_KUBETOKEN": "tok",
                         "HELM_KUBEINSECURE_SKIP_TLS_VERIFY": "true"} and files == []


def test_an_inline_kubeconfig_is_written_and_removed(tmp_path):
    helm = FakeHelm()
    assert helm_reach.check(helm, "helm", None, "gpu-operator", {"kubeconfig": {"clusters": []}}, {}, environ={}) is None
    command, variables = helm.calls[0]
    assert command == ["helm", "list", "--namespace", "gpu-operator", "--max", "1", "--output", "json"]
    assert variables["KUBECONFIG"].startswith("/") and not os.path.exists(variables["KUBECONFIG"])


def test_a_token_from_the_environment_beside_a_kubeconfig_is_named():
    helm = FakeHelm(rc=1, err=UNAUTHORIZED)
    message = helm_reach.check(helm, "helm", "timeout", "gpu-operator", {"kubeconfig": "/lab/kubeconfig"}, {},
                               environ={"K8S_AUTH_API_KEY": "bad-token-value"})
    assert helm.calls[0][0][:2] == ["timeout", str(helm_reach.TIMEOUT)]
    assert helm.calls[0][1]["HELM_KUBETOKEN"] == "bad-token-value"
    assert "nothing was changed" in message and "the environment variable K8S_AUTH_API_KEY" in message
    assert "in place of the credentials in kubeconfig /lab/kubeconfig" in message
    assert "unset K8S_AUTH_API_KEY" in message and "bad-token-value" not in message


def test_other_failures_name_what_helm_connected_with():
    message = helm_reach.check(FakeHelm(rc=1, err="Error: dial tcp: connection refused"), "helm", None, "ns",
                               {"host": "https://u:pw@h:6443", "api_key": "t0ken"}, {"KUBECONFIG": os.devnull},
                               environ={})
    assert "host https://u:***@h:6443" in message and "pw@" not in message
    message = helm_reach.check(FakeHelm(rc=1, err="Error: context \"x\" does not exist"), "helm", None, "ns",
                               {"context": "x"}, {}, environ={"KUBECONFIG": "/k"})
    assert "kubeconfig /k (the environment variable KUBECONFIG) and context x" in message
    message = helm_reach.check(FakeHelm(rc=124), "helm", "timeout", "ns", {}, {}, environ={})
    assert "no answer within 30s" in message
