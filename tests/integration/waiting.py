"""A watch-based wait for integration tests: list once, then watch until a predicate holds."""

import json
import os
import time

from kubernetes import watch


class WaitTimeout(AssertionError):
    pass


def wait_for_object(list_fn, predicate, description, timeout=60, **kwargs):
    """Return the first object for which ``predicate(obj_dict)`` holds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout("timed out after %ss waiting for %s; last object seen: %s"
                              % (timeout, description, json.dumps(last)[:2000] if last else "none"))
        listing = json.loads(list_fn(_preload_content=False, **kwargs).data)
        for item in listing.get("items") or []:
            last = item
            if predicate(item):
                return item
        stream = watch.Watch()
        try:
            for event in stream.stream(list_fn, resource_version=listing["metadata"]["resourceVersion"],
                                       timeout_seconds=max(1, int(remaining)), **kwargs):
                obj = event["raw_object"]
                if event["type"] in ("ADDED", "MODIFIED"):
                    last = obj
                    if predicate(obj):
                        stream.stop()
                        return obj
        except Exception:  # noqa: BLE001 - an expired watch (410) relists on the next turn
            pass


def wait_until_gone(list_fn, predicate, description, timeout=60, **kwargs):
    """Wait until no listed object matches ``predicate``."""
    deadline = time.monotonic() + timeout
    while True:
        listing = json.loads(list_fn(_preload_content=False, **kwargs).data)
        matching = [i for i in listing.get("items") or [] if predicate(i)]
        if not matching:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout("timed out after %ss waiting for %s to disappear; still there: %s"
                              % (timeout, description, [m["metadata"]["name"] for m in matching]))
        stream = watch.Watch()
        try:
            for event in stream.stream(list_fn, resource_version=listing["metadata"]["resourceVersion"],
                                       timeout_seconds=max(1, int(remaining)), **kwargs):
                if event["type"] == "DELETED" and predicate(event["raw_object"]):
                    stream.stop()
                    break
        except Exception:  # noqa: BLE001
            pass


def wait_for_log_line(path, text, description, timeout=30):
    """The last line of the file at ``path`` containing ``text``, once one is there.

    A process's log file has no watch: this re-reads the file when it has grown, every tenth of a
    second, up to ``timeout`` seconds. For what a process logs right after an API call the test
    also sees (the call's effect can arrive first)."""
    deadline = time.monotonic() + timeout
    size = -1
    while True:
        current = os.path.getsize(path) if os.path.exists(path) else 0
        if current != size:
            size = current
            with open(path) as handle:
                found = [line for line in handle if text in line]
            if found:
                return found[-1]
        if time.monotonic() >= deadline:
            raise WaitTimeout("timed out after %ss waiting for %s in %s" % (timeout, description, path))
        time.sleep(0.1)
