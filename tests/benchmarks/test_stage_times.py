"""stage_times.py reads the stages of a `make test` log, containers left out by their shape."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import stage_times  # noqa: E402  pylint: disable=wrong-import-position

LOG = """\
=== integration, node lab: started beside the other steps (pid 1, log .lab/logs/integration-nodes.log)
=== sanity (ansible-test)
[node lab] integration: node lab up in 154s
=== sanity (ansible-test): ok in 54s
=== integration, API-server lab (lab + pytest + molecule)
integration: lab up in 5s
..........[node lab] === pytest tests/integration/labs/test_node_*.py: done in 630s
.....
=== pytest tests/integration: done in 1298s
=== integration, API-server lab (lab + pytest + molecule): ok in 1310s
=== a renamed step that holds others
=== molecule test -s default: done in 73s
=== a renamed step that holds others: ok in 80s
=== integration, node lab (started beside the steps above)
=== integration, node lab: its log
integration: node lab up in 154s
=== pytest tests/integration/labs/test_node_*.py: done in 630s
=== integration, node lab (started beside the steps above): ok in 0s
=== all tests passed in 2444s
"""

# A failed run: the node part stopped, its last lines shown, no total.
FAILED = """\
=== integration, node lab: started beside the other steps (pid 1, log /c/.lab/logs/integration-nodes.log)
=== sanity (ansible-test): ok in 54s
[node lab] integration: node lab up in 153s
....F.[node lab] === pytest tests/integration/labs/test_node_mirror.py: done in 20s
=== pytest tests/integration/labs (the lab itself): done in 170s
--- last lines of /c/.lab/test/run/etcd.log
integration: something in the etcd log in 3s
=== integration, node lab: stopping it (the other steps failed)
--- last lines of /c/.lab/logs/integration-nodes.log
integration: node lab up in 153s
=== pytest tests/integration/labs/test_node_mirror.py: done in 20s
=== integration FAILED during: pytest tests/integration/labs/test_node_*.py
"""


def test_stages_by_part_without_the_steps_that_hold_others():
    found, total = stage_times.stages(LOG.splitlines(True))
    assert found == [("node lab", "node lab up", 154), ("main", "sanity (ansible-test)", 54), ("main", "lab up", 5),
                     ("node lab", "pytest tests/integration/labs/test_node_*.py", 630),
                     ("main", "pytest tests/integration", 1298), ("main", "molecule test -s default", 73),
                     # the main part's wait for the node part, once its own steps were done
                     ("main", "integration, node lab (started beside the steps above)", 0)]
    assert total == 2444


def test_a_failed_runs_node_stages_are_read_from_their_live_lines_once():
    found, total = stage_times.stages(FAILED.splitlines(True))
    assert found == [("main", "sanity (ansible-test)", 54), ("node lab", "node lab up", 153),
                     ("node lab", "pytest tests/integration/labs/test_node_mirror.py", 20),
                     ("main", "pytest tests/integration/labs (the lab itself)", 170),
                     ("main", "something in the etcd log", 3)]
    assert total is None


def test_a_step_with_nothing_inside_is_a_stage():
    found, _total = stage_times.stages(["=== units\n", "=== units: ok in 57s\n"])
    assert found == [("main", "units", 57)]
