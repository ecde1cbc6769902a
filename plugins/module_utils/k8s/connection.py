# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a connection to the Kubernetes API comes from, and what is wrong with it, in words.

kubernetes.core resolves the connection options (a task option or ``module_defaults``,
then the ``K8S_AUTH_*`` variables, then KUBECONFIG or ``~/.kube/config``); this module
follows the same order to say which setting a failure comes from, checks the files those
settings name before a client is built, and turns the failures of building the client or
of the first request (urllib3, YAML, kubeconfig and TLS errors) into one sentence that
names the setting and the fix. client.api_client uses it; nothing here talks to a cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_errors, redaction

DEFAULT_KUBECONFIG = "~/.kube/config"
IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
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


def _kubeconfig_where(setting):
    if setting.source == "default":
        return "the default, as neither the kubeconfig option nor KUBECONFIG is set"
    return setting.where()


def _kubeconfig_fix(setting):
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


# ----- the files the settings name ---------------------------------------------------------


def check_files(found, reader=None):
    """Raise ConnectionProblem for a certificate file or kubeconfig that cannot work.

    Leaves the parsed kubeconfig in ``found["_parsed"]`` (for the server's name in later
    messages)."""
    reader = reader or _read
    for name, what in (("ca_cert", "the cluster's CA certificate (certificate-authority in a kubeconfig)"),
                       ("client_cert", "your client certificate"), ("client_key", "your client certificate's key")):
        setting = found.get(name)
        if setting is None or not setting.value:
            continue
        path = os.path.expanduser(str(setting.value))
        if not os.path.isfile(path):
            raise ConnectionProblem(PREFIX + "%s %s (%s) does not exist. To fix: set %s to the file of %s"
                                    % (name, setting.value, setting.where(), name, what))
    kubeconfig = found.get("_kubeconfig")
    if kubeconfig is None:
        return
    if isinstance(kubeconfig.value, dict):
        documents = [("(inline kubeconfig)", kubeconfig.value)]
    else:
        documents = _read_kubeconfigs(kubeconfig, reader)
    merged = _merge(documents, kubeconfig)
    found["_parsed"] = merged
    _check_context(found, merged)


def _read(path):
    with open(path) as handle:
        return handle.read()


def _read_kubeconfigs(setting, reader):
    import yaml
    paths = [p for p in str(setting.value).split(os.pathsep) if p]
    documents, missing = [], []
    for path in paths:
        full = os.path.expanduser(path)
        if not os.path.exists(full):
            missing.append(path)
            continue
        if os.path.isdir(full):
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) is a directory, not a kubeconfig file. To fix: %s"
                                    % (path, _kubeconfig_where(setting), _kubeconfig_fix(setting)))
        try:
            text = reader(full)
        except (IOError, OSError) as exc:
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) cannot be read: %s. To fix: make it readable "
                                    "for this user, or %s" % (path, _kubeconfig_where(setting),
                                                              getattr(exc, "strerror", None) or exc,
                                                              _kubeconfig_fix(setting)))
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = " (line %d)" % (mark.line + 1) if mark is not None else ""
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) is not a kubeconfig: it is not valid YAML%s. "
                                    "To fix: %s" % (path, _kubeconfig_where(setting), where,
                                                    _kubeconfig_fix(setting)))
        if not _looks_like_kubeconfig(document):
            raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) is not a kubeconfig: it has no clusters and "
                                    "contexts (a kubeconfig is YAML with apiVersion: v1, kind: Config, clusters, "
                                    "users and contexts). To fix: %s"
                                    % (path, _kubeconfig_where(setting), _kubeconfig_fix(setting)))
        documents.append((path, document))
    if not documents:
        shown = ", ".join(missing)
        if setting.source == "default":
            raise ConnectionProblem(PREFIX + "no connection settings: neither the kubeconfig nor the host option is "
                                    "set, KUBECONFIG is not set, and %s does not exist. To fix: %s"
                                    % (shown, _kubeconfig_fix(setting)))
        raise ConnectionProblem(PREFIX + "kubeconfig %s (%s) does not exist. To fix: %s"
                                % (shown, _kubeconfig_where(setting), _kubeconfig_fix(setting)))
    return documents


def _looks_like_kubeconfig(document):
    if not isinstance(document, dict):
        return False
    return any(isinstance(document.get(key), list) for key in ("clusters", "contexts")) or \
        bool(document.get("current-context"))


def _merge(documents, setting):
    """KUBECONFIG's merge: the first file that names an entry wins, as does its current-context."""
    merged = {"current-context": None, "contexts": {}, "clusters": {}, "users": {}, "files": [],
              "setting": setting}
    for path, document in documents:
        merged["files"].append(path)
        if not merged["current-context"] and document.get("current-context"):
            merged["current-context"] = document["current-context"]
        for key in ("contexts", "clusters", "users"):
            for entry in document.get(key) or []:
                if isinstance(entry, dict) and entry.get("name") and entry["name"] not in merged[key]:
                    merged[key][entry["name"]] = entry.get(key[:-1]) or {}
    return merged


def _check_context(found, merged):
    setting = merged["setting"]
    files = ", ".join(merged["files"])
    names = sorted(merged["contexts"])
    context = found.get("context")
    wanted = context.value if context is not None and context.value else merged["current-context"]
    if not wanted:
        raise ConnectionProblem(PREFIX + "kubeconfig %s has no current-context and the context option is not set. "
                                "To fix: set context to one of: %s" % (files, ", ".join(names) or "(none)"))
    if wanted not in merged["contexts"]:
        if context is not None and context.value:
            raise ConnectionProblem(PREFIX + "context %r (%s) is not in kubeconfig %s, whose contexts are: %s. "
                                    "To fix: set context to one of them, or leave it unset for the "
                                    "current-context%s" % (wanted, context.where(), files, ", ".join(names) or
                                                           "(none)", " %r" % merged["current-context"]
                                                           if merged["current-context"] else ""))
        raise ConnectionProblem(PREFIX + "the current-context %r of kubeconfig %s is not one of its contexts (%s). "
                                "To fix: set context to one of them, or repair current-context in %s"
                                % (wanted, files, ", ".join(names) or "none", files))
    cluster_name = (merged["contexts"][wanted] or {}).get("cluster")
    cluster = merged["clusters"].get(cluster_name)
    host = found.get("host")
    if host is None and (cluster is None or not cluster.get("server")):
        raise ConnectionProblem(PREFIX + "context %r of kubeconfig %s names cluster %r, which %s. To fix: add the "
                                "cluster with its server to %s, or set host"
                                % (wanted, files, cluster_name, "has no server" if cluster is not None
                                   else "is not in it", files))
    merged["context"] = wanted
    merged["server"] = (cluster or {}).get("server")
    merged["user"] = (merged["contexts"][wanted] or {}).get("user")


# ----- failures of building the client and of the first request ----------------------------


def _chain(exc):
    """The exception and what caused it (urllib3 keeps the cause in ``reason``)."""
    seen = []
    while isinstance(exc, BaseException) and all(exc is not s for s in seen):
        seen.append(exc)
        following = getattr(exc, "reason", None)
        if not isinstance(following, BaseException):
            following = getattr(exc, "original_error", None)
        if not isinstance(following, BaseException):
            following = next((a for a in getattr(exc, "args", ()) if isinstance(a, BaseException)), None)
        exc = following if isinstance(following, BaseException) else (exc.__cause__ or exc.__context__)
    return seen


def _names(chain):
    return [type(e).__name__ for e in chain]


def _status(chain):
    for exc in chain:
        status = getattr(exc, "status", None)
        if isinstance(status, int) and status:
            return status
    return None


def server(found):
    """The API server's address and which setting it comes from."""
    host = found.get("host")
    if host is not None and host.value:
        return host.value, host.where(), "host"
    parsed = found.get("_parsed") or {}
    if parsed.get("server"):
        return parsed["server"], "the server of context %r in kubeconfig %s" % (
            parsed.get("context"), ", ".join(parsed["files"])), "the server in that kubeconfig (or host)"
    return "the API server", "the connection settings", "host or the kubeconfig"


def credentials(found):
    key = found.get("api_key")
    if key is not None and key.value:
        return "the token %s" % key.where(), "pass a valid bearer token in api_key"
    user = found.get("username")
    if user is not None and user.value:
        return "username %s (%s)" % (user.value, user.where()), "correct username and password"
    cert = found.get("client_cert")
    if cert is not None and cert.value:
        return "the client certificate %s (%s)" % (cert.value, cert.where()), "use a client certificate the cluster's CA signed"
    parsed = found.get("_parsed") or {}
    if parsed.get("user"):
        return "the credentials of user %r in kubeconfig %s" % (parsed["user"], ", ".join(parsed["files"])), \
            "renew that kubeconfig's credentials (a fresh kubeconfig from the cluster's administrator), or pass api_key"
    return "a request without credentials", "give credentials: a kubeconfig with a user, or api_key"


def may_be_restarting(exc):
    """Whether a failed first request is what an API server that is restarting answers."""
    chain = _chain(exc)
    names = _names(chain)
    if any(n in names for n in ("ProxyError", "SSLError", "SSLCertVerificationError", "NameResolutionError",
                                "gaierror", "LocationParseError", "ConnectionProblem")):
        return False
    status = _status(chain)
    if status is not None:
        return api_errors.classify_status(status) != api_errors.PERMANENT
    return True  # refused, reset, timed out


def explain(exc, found):
    """One sentence for a failure to build the client or of the first request, with the
    password of any URL in it written as *** (the rest of the credentials are masked by
    Ansible: client.mask_credentials)."""
    return redaction.url(_explain(exc, found))


def _explain(exc, found):
    if isinstance(exc, ConnectionProblem):
        return str(exc)
    chain = _chain(exc)
    names = _names(chain)
    text = _first_line(chain[-1] if chain else exc)
    address, where, fix_setting = server(found)
    proxy = found.get("proxy")
    if "ProxyError" in names and proxy is not None:
        return PREFIX + ("the proxy %s (%s) does not answer (%s). To fix: correct proxy, or remove it (or list the "
                         "API server's host in no_proxy) when %s is reachable directly"
                         % (proxy.value, proxy.where(), text, address))
    if "ProxyError" in names:
        return PREFIX + ("the proxy on the way to %s does not answer (%s). To fix: correct the proxy setting "
                         "(proxy, or proxy-url in the kubeconfig)" % (address, text))
    if any(n in names for n in ("SSLCertVerificationError",)) or "CERTIFICATE_VERIFY_FAILED" in str(exc):
        return PREFIX + ("the API server at %s (%s) presented a certificate this machine does not trust (%s). To fix: "
                         "set ca_cert to the cluster's CA certificate (certificate-authority in its kubeconfig), or "
                         "connect with a kubeconfig that carries it; validate_certs: false only for a throw-away "
                         "cluster" % (address, where, text))
    if "SSLError" in names:
        return PREFIX + ("TLS with %s (%s) failed (%s). To fix: check that %s is the API server's https:// address "
                         "and port, and the ca_cert, client_cert and client_key settings" % (address, where, text,
                                                                                             fix_setting))
    if any(n in names for n in ("NameResolutionError", "gaierror")):
        return PREFIX + ("the host name of %s (%s) cannot be resolved (%s). To fix: correct %s" % (
            address, where, text, fix_setting))
    if any(n in names for n in ("NewConnectionError", "ConnectionRefusedError")):
        return PREFIX + ("nothing answers at %s (%s): %s. To fix: check %s: the API server's address and port "
                         "(`kubectl cluster-info` shows them), and that the API server runs" % (
                             address, where, "connection refused" if "refused" in str(exc).lower() else text,
                             fix_setting))
    if any(n in names for n in ("ConnectTimeoutError", "ReadTimeoutError", "TimeoutError", "timeout")):
        return PREFIX + ("%s (%s) did not answer in time (%s). To fix: check %s and the network (firewall, VPN, "
                         "proxy)" % (address, where, text, fix_setting))
    if "LocationParseError" in names or "LocationValueError" in names:
        return PREFIX + ("%s (%s) is not a URL. To fix: write %s like https://api.example.com:6443" % (
            address, where, fix_setting))
    status = _status(chain)
    if status in (401, 403):
        who, fix = credentials(found)
        return PREFIX + ("the API server at %s refused %s (%d %s). To fix: %s" % (
            address, who, status, "Unauthorized" if status == 401 else "Forbidden", fix))
    if status is not None:
        return PREFIX + ("the API server at %s (%s) answered %d (%s). To fix: check that %s is a Kubernetes API "
                         "server's address" % (address, where, status, text, fix_setting))
    kubeconfig = found.get("_kubeconfig")
    if "ConfigException" in names or "CoreException" in names:
        source = "kubeconfig %s (%s)" % (kubeconfig.value if not isinstance(kubeconfig.value, dict) else "(inline)",
                                         _kubeconfig_where(kubeconfig)) if kubeconfig is not None else \
            "the connection settings"
        return PREFIX + ("%s cannot be used: %s. To fix: %s" % (
            source, text.replace("Could not create API client: ", ""),
            _kubeconfig_fix(kubeconfig) if kubeconfig is not None else "check host, api_key and the certificates"))
    return PREFIX + ("%s: %s (from %s). To fix: check the connection settings (kubeconfig, context, host, ca_cert, "
                     "proxy)" % (type(chain[-1] if chain else exc).__name__, text, where))


def _first_line(exc):
    text = str(exc).strip()
    if "Caused by" in text:
        text = text.split("Caused by", 1)[1].strip(" ()")
    return text.splitlines()[0][:300] if text else type(exc).__name__
