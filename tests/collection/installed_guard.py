"""Is the installed tarball the only dra.gpu that Ansible and Python can find?

tests/integration/run.sh runs molecule `default` and the module tests from the collection
installed by build-and-install.sh. If the checkout stayed reachable (build/collections is a
symlink to it) those runs would still pass while testing the checkout, so this fails loudly
instead. Used by run.sh (CLI), by tests/integration/conftest.py and tested in
test_tarball.py.

CLI: reads DRA_GPU_INSTALLED_COLLECTIONS (the collections path installed into) and
ANSIBLE_COLLECTIONS_PATH; exit status 1 with the problems printed when anything is off.
"""

import importlib
import json
import os
import subprocess
import sys

CHECKOUT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def _real(path):
    return os.path.realpath(path)


def _under(path, root):
    path, root = _real(path), _real(root)
    return path == root or path.startswith(root + os.sep)


def problems(installed, collections_path, galaxy="ansible-galaxy", env=None):
    """What says that ``installed`` (a collections path holding ansible_collections/dra/gpu)
    is not the only dra.gpu reachable through ``collections_path`` (ANSIBLE_COLLECTIONS_PATH
    as a string); empty when it is. ``galaxy`` is the ansible-galaxy to ask."""
    found = []
    target = os.path.join(installed, "ansible_collections", "dra", "gpu")
    if os.path.islink(target) or not os.path.isdir(target):
        found.append("%s is a symlink or missing, not an installed collection" % target)
    elif not os.path.isfile(os.path.join(target, "MANIFEST.json")) or os.path.exists(
            os.path.join(target, "galaxy.yml")):
        found.append("%s has no MANIFEST.json or has a galaxy.yml: a checkout, not a built artifact" % target)
    entries = [entry for entry in collections_path.split(os.pathsep) if entry]
    if not entries:
        found.append("ANSIBLE_COLLECTIONS_PATH is empty")
    for entry in entries:
        candidate = os.path.join(entry, "ansible_collections", "dra", "gpu")
        if os.path.exists(candidate) and _real(candidate) == CHECKOUT:
            found.append("ANSIBLE_COLLECTIONS_PATH entry %s reaches the checkout %s" % (entry, CHECKOUT))
        elif os.path.exists(candidate) and not _under(candidate, installed):
            found.append("ANSIBLE_COLLECTIONS_PATH entry %s holds another dra.gpu" % entry)
    # Ask Ansible itself: it also scans sys.path and playbook-adjacent directories.
    run_env = dict(env if env is not None else os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path)
    proc = subprocess.run([galaxy, "collection", "list", "dra.gpu", "--format", "json"], capture_output=True,
                          text=True, env=run_env, check=False)
    try:
        locations = sorted(json.loads(proc.stdout))
    except ValueError:
        locations = None
        found.append("ansible-galaxy collection list printed no JSON (rc %s): %s"
                     % (proc.returncode, (proc.stdout + proc.stderr)[-500:]))
    if locations is not None:
        wanted = _real(os.path.join(installed, "ansible_collections"))
        if [_real(location) for location in locations] != [wanted]:
            found.append("ansible-galaxy finds dra.gpu in %s, want only %s" % (locations or "nothing", wanted))
    return found


def python_problems(installed):
    """The same for Python's import system in this process (the tests import module_utils):
    every directory of the namespace package ansible_collections.dra.gpu must be the installed one."""
    try:
        collection = importlib.import_module("ansible_collections.dra.gpu")
    except ImportError as exc:
        return ["ansible_collections.dra.gpu cannot be imported: %s" % exc]
    wanted = _real(os.path.join(installed, "ansible_collections", "dra", "gpu"))
    paths = [_real(path) for path in collection.__path__]
    if paths != [wanted]:
        return ["ansible_collections.dra.gpu imports from %s, want only %s" % (paths, wanted)]
    return []


def main():
    installed = os.environ.get("DRA_GPU_INSTALLED_COLLECTIONS")
    if not installed:
        print("installed_guard: DRA_GPU_INSTALLED_COLLECTIONS is not set", file=sys.stderr)
        return 2
    collections_path = os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")
    # As tests/integration/conftest.py does, so the import check sees what the tests see.
    for entry in collections_path.split(os.pathsep):
        if entry and entry not in sys.path:
            sys.path.insert(0, entry)
    galaxy = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")
    found = problems(installed, collections_path, galaxy=galaxy) + python_problems(installed)
    for problem in found:
        print("installed_guard: " + problem, file=sys.stderr)
    if not found:
        print("installed_guard: dra.gpu resolves only to %s (Ansible and Python)"
              % os.path.join(installed, "ansible_collections", "dra", "gpu"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
