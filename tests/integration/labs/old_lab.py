"""Short-lived labs beside the test lab: an older Kubernetes version, one without DRA, or
one with another topology (used by tests/integration and tests/integration/labs).

Started with the project's own lab tooling (lab/lab.py) from the same cache, on ports
300 (or, without DRA, 400) above the test lab's unless the caller names a port base, with
state directories of their own beside the test lab's (LAB_STATE_DIR, default .lab/test:
.lab/test-1.34.4, .lab/test-1.34.4-without-dra) unless the caller names one, and always
stopped afterwards.
"""

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# The version the preflight and upgrade tests start from (built by tests/integration/run-apiserver-lab.sh).
OLD_VERSION = "1.34.4"
# The current release (also built there): DRA's extended-resource path (GA) and memory shares
# (DRAConsumableCapacity, beta, on by default from 1.36) served, which the test lab's 1.35.4 lacks.
NEW_VERSION = "1.37.2"
LAB = [sys.executable, os.path.join(ROOT, "lab", "lab.py")]


def lab_env(version, without_dra=False, topology=None, state_dir=None, port_base=None, driver_mode=None,
            consumable_shares=None, feature_gates=None):
    """The environment of ``lab.py`` for such a lab. ``version`` None: the test lab's own;
    ``topology`` None: the default one; ``consumable_shares`` (driver mode always): the
    ConsumableShares mode its simulated driver publishes (LAB_CONSUMABLE_SHARES), None for none;
    ``feature_gates``: Kubernetes gates set against the version's defaults (LAB_FEATURE_GATES)."""
    base = port_base or int(os.environ.get("LAB_PORT_BASE", "26500")) + (400 if without_dra else 300)
    env = dict(os.environ)
    test_lab = os.environ.get("LAB_STATE_DIR") or os.path.join(ROOT, ".lab", "test")
    default_state = "%s-%s%s" % (test_lab.rstrip("/"), version, "-without-dra" if without_dra else "")
    env.update(LAB_STATE_DIR=state_dir or default_state, LAB_PORT_BASE=str(base),
               LAB_DRIVER_MODE=driver_mode or ("plugin" if without_dra else "always"),
               LAB_WITHOUT_DRA="1" if without_dra else "")
    if version:
        env["LAB_K8S_VERSION"] = version
    env.pop("LAB_TOPOLOGY", None)
    env.pop("LAB_CONSUMABLE_SHARES", None)
    env.pop("LAB_FEATURE_GATES", None)
    if feature_gates:
        env["LAB_FEATURE_GATES"] = feature_gates
    if consumable_shares:
        env["LAB_CONSUMABLE_SHARES"] = consumable_shares
    if topology:
        env["LAB_TOPOLOGY"] = topology
    return env


def start(version, without_dra=False, **settings):
    """Start the lab (building that version first if the cache lacks it); return its kubeconfig.
    ``settings``: lab_env's topology, state_dir, port_base, driver_mode, consumable_shares, feature_gates."""
    env = lab_env(version, without_dra, **settings)
    proc = subprocess.run(LAB + ["up"], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        stop(version, without_dra, **settings)
        what = " ".join(filter(None, [version, settings.get("topology")])) or "second"
        raise AssertionError("could not start a %s lab:\n%s\n%s" % (what, proc.stdout[-3000:], proc.stderr[-3000:]))
    return os.path.join(env["LAB_STATE_DIR"], "kubeconfig")


def stop(version, without_dra=False, **settings):
    subprocess.run(LAB + ["down"], env=lab_env(version, without_dra, **settings), capture_output=True, text=True,
                   check=False)
