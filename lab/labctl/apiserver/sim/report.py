"""What the simulator tells `lab up` and `lab status` about its own failures.

A slice the API server refuses is a bug of the lab (the real driver never publishes one),
and in plugin mode it can happen long after `lab up` returned, in a process nobody
watches. So the simulator writes each refusal, and any crash, into a small JSON file in
the run directory: `lab up` fails when it appears, `lab status` prints it. Plain JSON and
no Kubernetes imports, so `lab.py` can read it without the client library.
"""

import json
import os
import time

from labctl.apiserver.sim.gpus import DRIVER

FILE_NAME = "simulator.error"
# How many refused nodes a message names; the rest are counted.
NAMED = 3


def path_for(state_dir):
    return os.path.join(state_dir, "run", FILE_NAME)


def write(path, rejected, failed=None):
    """Record ``rejected`` ({node: {"status", "reason", "message"}}) and a crash, if any;
    remove the file when there is nothing to report. Written whole, then renamed, so a
    reader never sees half a file."""
    if not rejected and not failed:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    report = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "rejected": rejected}
    if failed:
        report["failed"] = failed
    temporary = path + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(report, handle, indent=2, sort_keys=True)
    os.replace(temporary, path)


def read(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def describe(report):
    """One message for a person: what failed, with the API server's own words."""
    if not report:
        return None
    parts = []
    if report.get("failed"):
        parts.append("the simulator failed: %s" % report["failed"])
    rejected = report.get("rejected") or {}
    if rejected:
        names = sorted(rejected)
        lines = ["%s: %s %s: %s" % (name, rejected[name].get("status"), rejected[name].get("reason"),
                                    rejected[name].get("message")) for name in names[:NAMED]]
        more = " (and %d more)" % (len(names) - NAMED) if len(names) > NAMED else ""
        parts.append("the API server rejected the %s ResourceSlices of %d node(s)%s:\n  %s"
                     % (DRIVER, len(names), more, "\n  ".join(lines)))
    return "\n".join(parts) or None
