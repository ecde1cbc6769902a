"""A second, short-lived lab at an older Kubernetes version, beside the test lab.

Started with the project's own lab tooling (tests/lab/lab.py) from the same cache, on ports
300 above the test lab's and its own state directory, and always stopped afterwards.
"""

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAB = [sys.executable, os.path.join(ROOT, "tests", "lab", "lab.py")]


def lab_env(version):
    base = int(os.environ.get("LAB_PORT_BASE", "26500")) + 300
    env = dict(os.environ)
    env.update(LAB_STATE_DIR=os.path.join(ROOT, ".lab", "test-%s" % version), LAB_PORT_BASE=str(base),
               LAB_K8S_VERSION=version, LAB_DRIVER_MODE="always")
    env.pop("LAB_TOPOLOGY", None)
    return env


def start(version):
    """Start the lab (building that version first if the cache lacks it); return its kubeconfig."""
    env = lab_env(version)
    proc = subprocess.run(LAB + ["up"], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        stop(version)
        raise AssertionError("could not start a %s lab:\n%s\n%s" % (version, proc.stdout[-3000:], proc.stderr[-3000:]))
    return os.path.join(env["LAB_STATE_DIR"], "kubeconfig")


def stop(version):
    subprocess.run(LAB + ["down"], env=lab_env(version), capture_output=True, text=True, check=False)
