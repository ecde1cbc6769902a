"""Tests of the lab itself against a running lab: the API-server lab (test_lab_dra.py; run by
tests/integration/run-apiserver-lab.sh) and the node lab's mirror (test_node_*.py; run by
tests/integration/run-node-lab.sh). The lab's unit tests, which need no lab, are in lab/tests.

They use the integration suite's fixtures and helpers (tests/integration/conftest.py, waiting.py),
imported from there. This directory is a package so that this file is not a second module
named `conftest`, which would shadow the suite's in a pytest run that collects both: run
tests/integration/labs on its own and tests/integration with --ignore=tests/integration/labs
(their session fixtures are separate), as run-apiserver-lab.sh does. Its name is not `lab`, the
top-level lab/ directory beside lab/lab.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# old_lab here; the suite's conftest and waiting first, so that `conftest` is never this file.
for _path in (HERE, os.path.abspath(os.path.join(HERE, ".."))):
    if _path in sys.path:
        sys.path.remove(_path)
    sys.path.insert(0, _path)

# The suite's fixtures: imported into this conftest, they serve the tests here too.
from conftest import (  # noqa: E402,F401 pylint: disable=unused-import
    api, core, custom, gpu_class, installed_collection_only, namespace, old_cluster, plugin_everywhere,
    test_driver, two_gpu_managers, upgrade_inventory)
