# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which API failures are worth waiting out, decided in one place.

Three kinds of failure, named by KINDS:

- ``transient``: the API server is away or busy (connection refused or reset, timeouts,
  429, 5xx). Always retried within a bounded time.
- ``auth``: 401 or 403. Right after kube-apiserver restarts its authenticator and RBAC
  caches are empty and it refuses requests it will allow a moment later; the same answer
  from a settled API server is a real refusal. Retried only inside a restart window that
  the caller opened itself, so a missing permission still fails fast.
- ``permanent``: anything else (400, 404, 409, 422...): retrying cannot help.

Used by the watches (watch.py), the readiness wait (api_ready.py) and, through the
``dra.gpu.api_transient`` test, by role tasks that call other collections' modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    # Imported for the modules that catch it (client, watch, api_ready, cluster_identity).
    from kubernetes.client.exceptions import ApiException  # noqa: F401  pylint: disable=unused-import
except ImportError:  # the module reports the missing library through client.check_libraries

    class ApiException(Exception):
        """Stands in for kubernetes' ApiException where the library is missing, so that
        ``except ApiException`` clauses stay valid; nothing raises it then."""
        status = None

TRANSIENT = "transient"
AUTH = "auth"
PERMANENT = "permanent"
KINDS = (TRANSIENT, AUTH, PERMANENT)

TRANSIENT_STATUSES = frozenset((408, 429, 500, 502, 503, 504))
AUTH_STATUSES = frozenset((401, 403))

# What other modules write when they fail (kubernetes.core's messages carry the reason
# phrase, sometimes the status in parentheses, or the urllib3 error of a lost connection).
_CONNECTION_WORDS = re.compile(
    r"connection refused|connection reset|connection aborted|max retries exceeded|remotedisconnected|"
    r"failed to establish a new connection|timed out|read timeout|eof occurred|broken pipe|"
    r"newconnectionerror|protocolerror|name or service not known", re.I)
_REASONS = (
    (re.compile(r"\bunauthorized\b", re.I), 401),
    (re.compile(r"\bforbidden\b", re.I), 403),
    (re.compile(r"too many requests|disruption budget", re.I), 429),
    (re.compile(r"internal server error", re.I), 500),
    (re.compile(r"bad gateway", re.I), 502),
    (re.compile(r"service unavailable", re.I), 503),
    (re.compile(r"gateway time-?out", re.I), 504),
)
_STATUS_IN_TEXT = re.compile(r"\((\d{3})\)|\bstatus(?: code)?[:= ]+(\d{3})\b", re.I)


def classify_status(status):
    """The kind of an HTTP status; None or 0 (no answer at all) is transient."""
    if not status:
        return TRANSIENT
    if status in TRANSIENT_STATUSES:
        return TRANSIENT
    if status in AUTH_STATUSES:
        return AUTH
    return PERMANENT


def status_from_text(text):
    """The HTTP status a failure message speaks of, 0 for a lost connection, or None."""
    text = text or ""
    found = _STATUS_IN_TEXT.search(text)
    if found:
        return int(found.group(1) or found.group(2))
    for pattern, status in _REASONS:
        if pattern.search(text):
            return status
    if _CONNECTION_WORDS.search(text):
        return 0
    return None


def classify_result(result):
    """The kind of a registered task result's failure, or None when it did not fail.

    A failure whose message says nothing about the API (a bad parameter, a template
    error) is permanent: it fails at once.
    """
    if not isinstance(result, dict) or not result.get("failed"):
        return None
    status = result.get("status")
    if not isinstance(status, int):
        status = status_from_text("%s %s" % (result.get("msg", ""), result.get("exception", "")))
    if status is None:
        return PERMANENT
    return classify_status(status)


def worth_retrying(kind, in_restart_window):
    return kind == TRANSIENT or (kind == AUTH and in_restart_window)
