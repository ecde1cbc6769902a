# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounded, resumable watches shared by every wait in the collection.

A wait lists once, then watches from the list's resourceVersion and re-checks its
condition on every event, so it returns as soon as the awaited object appears. An expired
watch (410 Gone) or a dropped connection (an API server restart) leads to a fresh list;
nothing is missed because the condition is evaluated on the relisted state. Every wait
has a deadline, and on timeout reports what it last saw.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_errors
from ansible_collections.dra.gpu.plugins.module_utils.k8s.api_errors import ApiException

try:
    from kubernetes import watch as k8s_watch
except ImportError:  # reported by the module through client.check_libraries
    k8s_watch = None

# The longest a single watch request stays open; shorter than any proxy's idle timeout.
MAX_WATCH_SECONDS = 60
RECONNECT_PAUSE = 0.5
# An API server that has just restarted (kubeadm upgrade apply, a kubelet restart on a
# control plane) answers 401/403 until its authentication and RBAC caches are filled. Such
# answers are retried for this long; a real permission problem is reported after it.
AUTH_SETTLE_SECONDS = 30


class WaitTimeout(Exception):
    def __init__(self, message, state):
        super(WaitTimeout, self).__init__(message)
        self.state = state


class _Expired(Exception):
    pass


class ConditionFailed(Exception):
    """Raised by a condition when the awaited thing failed for good (a MIG manager that reports
    failed): the wait ends at once with it, instead of treating it like a dropped connection."""


class ObjectStore:
    """The current set of objects, keyed by namespace/name, as the watch keeps it."""

    def __init__(self):
        self.objects = {}

    @staticmethod
    def key(obj):
        meta = obj.get("metadata") or {}
        return "%s/%s" % (meta.get("namespace") or "", meta.get("name"))

    def replace(self, items):
        self.objects = dict((self.key(i), i) for i in items)

    def apply(self, event_type, obj):
        if event_type == "DELETED":
            self.objects.pop(self.key(obj), None)
        else:
            self.objects[self.key(obj)] = obj

    def items(self):
        return list(self.objects.values())


def wait_until(lister, watcher, condition, timeout, description, clock=time.monotonic, sleep=time.sleep,
               recheck_every=None):
    """Wait until ``condition(items)`` returns a truthy value, and return that value.

    ``lister()`` returns ``(items, resource_version)``; ``watcher(resource_version, seconds)``
    returns an iterable of ``(type, object)`` events. ``condition`` gets the current list of
    objects. Returns ``(result, stats)`` where stats counts relists and reconnects.
    ``recheck_every``: also re-check the condition this often when no event comes, for a
    condition that reads something besides the watched objects (a recorder thread's findings).
    """
    window = min(MAX_WATCH_SECONDS, recheck_every or MAX_WATCH_SECONDS)
    deadline = clock() + timeout
    store = ObjectStore()
    stats = {"relists": 0, "reconnects": 0, "events": 0}
    last_error = None
    auth_refused_since = None
    while True:
        try:
            items, version = lister()
            stats["relists"] += 1
            store.replace(items)
            result = condition(store.items())
            if result:
                return result, stats
            while True:
                remaining = deadline - clock()
                if remaining <= 0:
                    break
                for event_type, obj in watcher(version, min(window, max(1, int(remaining + 0.999)))):
                    if event_type == "ERROR":
                        # 410 Gone or any other watch error: the stream is over, relist.
                        raise _Expired()
                    version = ((obj or {}).get("metadata") or {}).get("resourceVersion") or version
                    if event_type == "BOOKMARK":
                        continue
                    stats["events"] += 1
                    store.apply(event_type, obj)
                    result = condition(store.items())
                    if result:
                        return result, stats
                    if clock() >= deadline:
                        break
                if recheck_every:
                    result = condition(store.items())
                    if result:
                        return result, stats
        except ConditionFailed:
            raise
        except _Expired:
            last_error = "watch expired (410), relisted"
        except ApiException as exc:
            status = getattr(exc, "status", None)
            kind = api_errors.classify_status(status)
            if kind == api_errors.AUTH:
                auth_refused_since = clock() if auth_refused_since is None else auth_refused_since
                if clock() - auth_refused_since >= AUTH_SETTLE_SECONDS:
                    raise
            elif kind == api_errors.PERMANENT and status != 410:
                raise
            last_error = "API error %s, reconnected" % getattr(exc, "status", "?")
            stats["reconnects"] += 1
            sleep(RECONNECT_PAUSE)
        except Exception as exc:  # noqa: BLE001 - connection refused/reset while the API server restarts
            last_error = "connection lost (%s), reconnected" % type(exc).__name__
            stats["reconnects"] += 1
            sleep(RECONNECT_PAUSE)
        if clock() >= deadline:
            raise WaitTimeout("timed out after %.0fs waiting for %s%s" % (
                timeout, description, "; last watch problem: %s" % last_error if last_error else ""),
                store.items())


def kube_watcher(list_fn, api_client, **kwargs):
    """A ``watcher`` for :func:`wait_until` over a kubernetes list function."""
    def watcher(version, seconds):
        stream = k8s_watch.Watch()
        for event in stream.stream(list_fn, resource_version=version, timeout_seconds=seconds,
                                   allow_watch_bookmarks=True, _request_timeout=seconds + 10, **kwargs):
            obj = event.get("raw_object")
            if not isinstance(obj, dict):
                obj = api_client.sanitize_for_serialization(event.get("object"))
            yield event["type"], obj
    return watcher
