# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting until a restarted API server serves authorized requests again.

After ``kubeadm upgrade apply``, ``kubeadm upgrade node`` on a control plane or a kubelet
restart that recreates the static pods, kube-apiserver first refuses connections, then
answers 5xx, then answers 401/403 while its RBAC informers fill, and only then serves.
``/readyz`` turns 200 when its checks pass (etcd, informer-sync, the RBAC bootstrap hook);
an authorized read of the caller's own (a node) then proves the credentials are served
too. Nothing can be watched while the server is away, so this is a bounded poll with a
short pause; it names the checks that were still failing when it gives up.

In that window /readyz itself answers 403 too (RBAC grants it to every user through the
``system:public-info-viewer`` role, which the unsynced authorizer does not know yet), so a
401/403 from /readyz is the restart and is waited out. A 401/403 to the authorized read
while /readyz passes is a real refusal: it is reported after ``auth_grace`` seconds (a load
balancer may still send a request to a second API server that is not ready yet).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_errors
from ansible_collections.dra.gpu.plugins.module_utils.k8s.api_errors import ApiException

POLL_PAUSE = 0.5


class NotReady(Exception):
    """The API server did not become ready in time; ``waited_for`` says what was missing."""


class Refused(Exception):
    """A ready API server refuses the caller: a permission problem, not a restart."""


class Answer:
    """One probe's outcome: ``ok``, the HTTP status (0: no connection) and a short detail."""

    def __init__(self, ok, status=200, detail=""):
        self.ok, self.status, self.detail = ok, status, detail

    def __repr__(self):
        return "Answer(%r, %r, %r)" % (self.ok, self.status, self.detail)


def failing_checks(readyz_body):
    """The names of the checks ``/readyz?verbose`` lists as failed ([-] lines)."""
    names = []
    for line in (readyz_body or "").splitlines():
        line = line.strip()
        if line.startswith("[-]"):
            names.append(line[3:].split(" ", 1)[0])
    return names


def wait_ready(readyz, authorized_read, timeout, auth_grace=10, clock=time.monotonic, sleep=time.sleep):
    """Wait until ``readyz()`` and then ``authorized_read()`` both answer ok.

    Each returns an :class:`Answer`. Returns a dict with the seconds waited, the number of
    probes and each phase the server went through (``refused``, ``not ready: <checks>``,
    ``auth``), in order, so a caller can show what it rode out.
    """
    started = clock()
    deadline = started + timeout
    phases, probes = [], 0
    refused_since = None
    last = "no answer yet"
    while True:
        probes += 1
        ready = readyz()
        if ready.ok:
            read = authorized_read()
            if read.ok:
                return {"elapsed": round(clock() - started, 3), "probes": probes, "rode_out": phases}
            kind = api_errors.classify_status(read.status)
            if kind == api_errors.PERMANENT:
                raise Refused("the API server is ready but the read failed with %s: %s" % (read.status, read.detail))
            if kind == api_errors.AUTH:
                refused_since = clock() if refused_since is None else refused_since
                if clock() - refused_since >= auth_grace:
                    raise Refused(
                        "the API server is ready (/readyz passes) but refuses these credentials (%s: %s) "
                        "for %.0fs: that is a missing permission, not a restart" % (read.status, read.detail,
                                                                                    clock() - refused_since))
            last = _phase("the read", read)
        else:
            refused_since = None
            last = _phase("/readyz", ready)
        if not phases or phases[-1] != last:
            phases.append(last)
        if clock() >= deadline:
            raise NotReady("timed out after %ss waiting for the API server to serve authorized requests "
                           "(/readyz and an authorized read); last answer: %s" % (timeout, last))
        sleep(POLL_PAUSE)


def _phase(probe, answer):
    """One line for what the server answered, e.g. "/readyz: 403 (authorizer not ready)"."""
    if answer.status == 0:
        return "%s: no connection (%s)" % (probe, answer.detail or "refused")
    if api_errors.classify_status(answer.status) == api_errors.AUTH:
        return "%s: %s (authorizer not ready)" % (probe, answer.status)
    return "%s: %s%s" % (probe, answer.status, " (%s)" % answer.detail if answer.detail else "")


def _get_raw(api, path, query):
    """GET a non-resource path with the client's credentials; returns (status, text).

    kubernetes >= 34 generates ``param_serialize`` + ``call_api(method, url, ...)``; older
    clients take the path and parameters in ``call_api`` itself.
    """
    if hasattr(api, "param_serialize"):
        request = api.param_serialize(method="GET", resource_path=path, query_params=query,
                                      auth_settings=["BearerToken"])
        response = api.call_api(*request, _request_timeout=5)
        response.read()
        return response.status, (response.data or b"").decode("utf-8", "replace")
    try:
        body = api.call_api(path, "GET", query_params=query, auth_settings=["BearerToken"], response_type="str",
                            _return_http_data_only=True, _request_timeout=5)
        return 200, body or ""
    except ApiException as exc:
        return exc.status or 0, getattr(exc, "body", "") or ""


def kube_probes(kube, node_name=None):
    """The two probes over a client.Kube: ``/readyz?verbose`` and a read of a node."""

    def readyz():
        try:
            status, body = _get_raw(kube.api, "/readyz", [("verbose", "true")])
        except Exception as exc:  # noqa: BLE001 - connection refused/reset while the server restarts
            return Answer(False, 0, type(exc).__name__)
        if status == 200:
            return Answer(True)
        return Answer(False, status, ", ".join(failing_checks(body)))

    def authorized_read():
        try:
            if node_name:
                kube.core.read_node(node_name, _request_timeout=5)
            else:
                kube.core.list_node(limit=1, _request_timeout=5)
            return Answer(True)
        except ApiException as exc:
            what = "node %s" % node_name if node_name else "nodes"
            return Answer(False, exc.status or 0, "reading %s: %s" % (what, exc.reason or exc.status))
        except Exception as exc:  # noqa: BLE001
            return Answer(False, 0, type(exc).__name__)

    return readyz, authorized_read
