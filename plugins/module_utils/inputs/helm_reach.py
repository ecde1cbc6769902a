# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether Helm reaches the cluster with the connection the role hands it, asked before any change.

kubernetes.core.helm does not connect as kubernetes.core's other modules do: it turns its own
options into Helm's variables (api_key -> HELM_KUBETOKEN, host -> HELM_KUBEAPISERVER, context
-> HELM_KUBECONTEXT, ca_cert -> HELM_KUBECAFILE) and falls back to its own list of ``K8S_AUTH_*``
variables. A token in K8S_AUTH_API_KEY beside a kubeconfig with a token of its own is the case
that bit: the Kubernetes client kubernetes.core builds keeps the kubeconfig's token (it writes
api_key under a key the client reads only when no kubeconfig set one), Helm is handed the
variable's token and is refused - after the role had labelled nodes. So input_check runs
one read-only Helm command with exactly what kubernetes.core.helm would give Helm, and a
refusal names the setting Helm used. ``run`` is AnsibleModule.run_command (tests pass a fake).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile

from ansible_collections.dra.gpu.plugins.module_utils.k8s import redaction

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.helm_args_common import HELM_AUTH_ARG_SPEC
except ImportError:  # pragma: no cover - input_check checks the libraries before it calls check()
    HELM_AUTH_ARG_SPEC = {}

# kubernetes.core.helm's connection options and the variable of Helm's own each one sets
# (helm.py, _prepare_helm_environment: a method of its module, so written here); the
# K8S_AUTH_* variables it falls back to are read from its argument spec.
HELM_OPTIONS = (
    ("api_key", "HELM_KUBETOKEN"),
    ("host", "HELM_KUBEAPISERVER"),
    ("context", "HELM_KUBECONTEXT"),
    ("ca_cert", "HELM_KUBECAFILE"),
    ("kubeconfig", "KUBECONFIG"),
    ("validate_certs", "HELM_KUBEINSECURE_SKIP_TLS_VERIFY"),
)


def fallbacks(option):
    """The environment variables kubernetes.core.helm reads for ``option`` when it is not set."""
    fallback = (HELM_AUTH_ARG_SPEC.get(option) or {}).get("fallback") or (None, [])
    return tuple(fallback[1])


TIMEOUT = 30  # seconds for the one Helm command
REFUSED = ("Unauthorized", "provide credentials", "Forbidden", "forbidden")


class Used:
    """One setting kubernetes.core.helm will use, and where it comes from, in words."""

    def __init__(self, option, value, source):
        self.option, self.value, self.source = option, value, source

    def where(self):
        if self.source == "option":
            return "the %s option (a task option or module_defaults for group/dra.gpu.k8s)" % self.option
        return "the environment variable %s" % self.source


def helm_settings(params, environ):
    """option -> Used, for the options kubernetes.core.helm will see set."""
    used = {}
    for option, _helm_variable in HELM_OPTIONS:
        if params.get(option) not in (None, ""):
            used[option] = Used(option, params[option], "option")
            continue
        for variable in fallbacks(option):
            if environ.get(variable):
                used[option] = Used(option, environ[variable], variable)
                break
    return used


def _false(value):
    return value is False or str(value).lower() in ("false", "no", "0", "off")


def environment(used, role_environment, temp_dir=None):
    """The variables Helm runs with over the process's: the role's (its KUBECONFIG=/dev/null
    when host and a token are given), then what kubernetes.core.helm sets. Returns (variables,
    files to remove): an inline kubeconfig is written to a file, as the module does."""
    variables = dict(role_environment or {})
    files = []
    for option, helm_variable in HELM_OPTIONS:
        setting = used.get(option)
        if setting is None:
            continue
        if option == "validate_certs":
            if _false(setting.value):
                variables[helm_variable] = "true"
        elif option == "kubeconfig" and isinstance(setting.value, dict):
            handle, path = tempfile.mkstemp(prefix="dra-gpu-helm-", dir=temp_dir)
            with os.fdopen(handle, "w") as out:
                json.dump(setting.value, out)
            files.append(path)
            variables[helm_variable] = path
        elif option == "kubeconfig":
            variables[helm_variable] = os.path.expanduser(str(setting.value))
        else:
            variables[helm_variable] = str(setting.value)
    return variables, files


def _kubeconfig_named(used, variables, environ):
    setting = used.get("kubeconfig")
    if setting is not None:
        return "kubeconfig %s (%s)" % ("(inline)" if isinstance(setting.value, dict) else setting.value,
                                       setting.where())
    path = variables.get("KUBECONFIG", environ.get("KUBECONFIG"))
    if path == os.devnull:
        return None
    return "kubeconfig %s (%s)" % (path or "~/.kube/config",
                                   "the environment variable KUBECONFIG" if path else "Helm's default")


def refusal(used, variables, environ, stderr, namespace):
    """The sentence for a Helm command that failed: what Helm was given, the setting to fix.
    URL passwords are written as ***; the module's no_log_values mask every other credential."""
    reason = redaction.url(" ".join((stderr or "").strip().splitlines()[-1:]) or "no output")
    kubeconfig = _kubeconfig_named(used, variables, environ)
    token, host = used.get("api_key"), used.get("host")
    head = ("gpu_operator: Helm cannot reach the cluster with the connection the role gives it, so nothing was "
            "changed (helm list --namespace %s: %s). " % (namespace, reason))
    if token is not None and any(word in reason for word in REFUSED):
        beside = (" Helm sends it in place of the credentials in %s, which the role's other steps used as "
                  "well, so they connected and Helm alone is refused." % kubeconfig) if kubeconfig and host is None \
            else ""
        return head + ("The API server refused the token Helm sends, from %s (kubernetes.core.helm hands it to Helm "
                       "as HELM_KUBETOKEN).%s To fix: set a token the API server accepts, or unset %s so that "
                       "every step uses one set of credentials" % (
                           token.where(), beside, token.source if token.source != "option" else "api_key"))
    if host is not None:
        address = redaction.url(host.value)
        return head + ("Helm connects to host %s (%s). To fix: check host, api_key and ca_cert, or connect with a "
                       "kubeconfig (kubeconfig and context) that kubectl can use" % (address, host.where()))
    return head + ("Helm connects with %s%s. To fix: check that `helm list` works with that kubeconfig (KUBECONFIG=... "
                   "helm list), or set kubeconfig and context for group/dra.gpu.k8s" % (
                       kubeconfig or "no kubeconfig",
                       " and context %s (%s)" % (used["context"].value, used["context"].where())
                       if "context" in used else ""))


def check(run, helm, timeout_bin, namespace, params, role_environment, environ=None):
    """None when ``helm list`` answers with the role's connection, else the refusal's sentence."""
    environ = os.environ if environ is None else environ
    used = helm_settings(params, environ)
    variables, files = environment(used, role_environment)
    command = [helm, "list", "--namespace", namespace, "--max", "1", "--output", "json"]
    if timeout_bin:
        command = [timeout_bin, str(TIMEOUT)] + command
    try:
        rc, _out, err = run(command, environ_update=variables)
    finally:
        for path in files:
            os.remove(path)
    if rc == 0:
        return None
    if rc == 124:
        err = "no answer within %ds" % TIMEOUT
    return refusal(used, variables, environ, err, namespace)
