# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failed connection to the Kubernetes API, in one sentence that names the setting and the fix.

Turns the failures of building the client or of its first request (urllib3, YAML, kubeconfig and
TLS errors, an HTTP status) into words that name the API server, the setting it comes from and
what to change, and tells whether a failure is what an API server that is restarting answers.
client.api_client uses it; nothing here talks to a cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_errors, redaction
from ansible_collections.dra.gpu.plugins.module_utils.k8s.connection_settings import (
    PREFIX, ConnectionProblem, kubeconfig_fix, kubeconfig_where)


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
                                         kubeconfig_where(kubeconfig)) if kubeconfig is not None else \
            "the connection settings"
        return PREFIX + ("%s cannot be used: %s. To fix: %s" % (
            source, text.replace("Could not create API client: ", ""),
            kubeconfig_fix(kubeconfig) if kubeconfig is not None else "check host, api_key and the certificates"))
    return PREFIX + ("%s: %s (from %s). To fix: check the connection settings (kubeconfig, context, host, ca_cert, "
                     "proxy)" % (type(chain[-1] if chain else exc).__name__, text, where))


def _first_line(exc):
    text = str(exc).strip()
    if "Caused by" in text:
        text = text.split("Caused by", 1)[1].strip(" ()")
    return text.splitlines()[0][:300] if text else type(exc).__name__
