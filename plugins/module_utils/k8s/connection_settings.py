# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which connection to the Kubernetes API a task asks for, and where each of its settings comes from.

kubernetes.core resolves the connection options (a task option or ``module_defaults``, then the
``K8S_AUTH_*`` variables, then KUBECONFIG or ``~/.kube/config``); this module follows the same
order, so that a failure can name the setting it comes from and the fix (connection_files checks
the files they name, connection_failures explains a failed connection). Also what the connection
uses, without secrets, for a module's result. Nothing here talks to a cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.k8s import redaction

DEFAULT_KUBECONFIG = "~/.kube/config"
IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
# How every sentence about a connection that cannot work begins.
PREFIX = "Cannot connect to the Kubernetes API: "

# Option -> the environment variables kubernetes.core reads for it, in its order.
ENVIRONMENT = {
    "kubeconfig": ("K8S_AUTH_KUBECONFIG",),
    "context": ("K8S_AUTH_CONTEXT",),
    "host": ("K8S_AUTH_HOST",),
    "api_key": ("K8S_AUTH_API_KEY",),
    "username": ("K8S_AUTH_USERNAME",),
    "password": ("K8S_AUTH_PASSWORD",),
    "validate_certs": ("K8S_AUTH_VALIDATE_CERTS", "K8S_AUTH_VERIFY_SSL"),
    "ca_cert": ("K8S_AUTH_CA_CERT", "K8S_AUTH_SSL_CA_CERT"),
    "client_cert": ("K8S_AUTH_CLIENT_CERT", "K8S_AUTH_CERT_FILE"),
    "client_key": ("K8S_AUTH_CLIENT_KEY", "K8S_AUTH_KEY_FILE"),
    "proxy": ("K8S_AUTH_PROXY",),
    "no_proxy": ("K8S_AUTH_NO_PROXY",),
}
SECRET = ("api_key", "password")


class ConnectionProblem(Exception):
    """A connection setting that cannot work; the message names it and the fix."""


class Setting:
    def __init__(self, name, value, source):
        self.name = name
        self.value = value
        self.source = source  # "option" or the environment variable's name

    def where(self):
        if self.source == "option":
            return "from the %s option of the task or module_defaults" % self.name
        return "from the environment variable %s" % self.source


def settings(params, environ=None):
    """The connection settings in effect: name -> Setting, only those that are set.

    Also ``_kubeconfig``: the kubeconfig that will be read (a Setting whose value is a path,
    a list of paths or an inline dict), or None when host and credentials suffice."""
    environ = os.environ if environ is None else environ
    found = {}
    for name, variables in ENVIRONMENT.items():
        value = params.get(name)
        if value is not None:
            found[name] = Setting(name, value, "option")
            continue
        for variable in variables:
            if environ.get(variable):
                found[name] = Setting(name, environ[variable], variable)
                break
    found["_kubeconfig"] = _kubeconfig_setting(found, environ)
    return found


def _set(found, *names):
    return all(found.get(n) is not None and found[n].value not in ("", None) for n in names)


def _kubeconfig_setting(found, environ):
    """The kubeconfig kubernetes.core will load, as it decides (client._create_configuration)."""
    if _set(found, "host", "api_key") or _set(found, "host", "username", "password") or \
            _set(found, "host", "client_cert", "client_key"):
        return None
    if "kubeconfig" in found:
        return found["kubeconfig"]
    if not _set(found, "context") and environ.get("KUBERNETES_SERVICE_HOST") and os.path.exists(IN_CLUSTER_TOKEN):
        return None  # in-cluster configuration comes first
    if environ.get("KUBECONFIG"):
        return Setting("kubeconfig", environ["KUBECONFIG"], "KUBECONFIG")
    return Setting("kubeconfig", DEFAULT_KUBECONFIG, "default")


def kubeconfig_where(setting):
    """Where the kubeconfig setting comes from, in words for a message."""
    if setting.source == "default":
        return "the default, as neither the kubeconfig option nor KUBECONFIG is set"
    return setting.where()


def kubeconfig_fix(setting):
    """How to point that setting at a kubeconfig that works, in words for a message."""
    if setting.source == "default":
        return ("set kubeconfig (a task option, or module_defaults for group/dra.gpu.k8s) or KUBECONFIG to your "
                "cluster's kubeconfig file, or host and api_key instead")
    if setting.source == "option":
        return "set the kubeconfig option to the path of your cluster's kubeconfig file (e.g. ~/.kube/config)"
    return "set %s to the path of your cluster's kubeconfig file (e.g. ~/.kube/config)" % setting.source


def describe(found):
    """What the connection uses, without secrets, for a module's result."""
    summary = {}
    for name, setting in found.items():
        if name.startswith("_") or setting is None:
            continue
        value = "(set)" if name in SECRET else ("(inline)" if isinstance(setting.value, dict) else
                                                redaction.url(setting.value))
        summary[name] = {"value": value, "from": setting.source}
    kubeconfig = found.get("_kubeconfig")
    summary["kubeconfig_read"] = None if kubeconfig is None else (
        "(inline)" if isinstance(kubeconfig.value, dict) else kubeconfig.value)
    return summary
