"""stage_times.py reads the stages of a `make test` log, containers left out by their shape."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import stage_times  # noqa: E402  pylint: disable=wrong-import-position

LOG = """\
=== sanity (ansible-test)
=== sanity (ansible-test): ok in 54s
=== integration, API-server lab (lab + pytest + molecule)
integration: lab up in 5s
=== pytest tests/integration: done in 1298s
[node lab] === pytest tests/integration/labs/test_node_*.py: done in 630s
=== integration, API-server lab (lab + pytest + molecule): ok in 1310s
=== a renamed step that holds others
=== molecule test -s default: done in 73s
=== a renamed step that holds others: ok in 80s
=== integration, node lab (started beside the steps above)
=== integration, node lab: its log
integration: node lab up in 154s
=== pytest tests/integration/labs/test_node_*.py: done in 630s
=== integration, node lab (started beside the steps above): ok in 900s
=== all tests passed in 2444s
"""


def test_stages_by_part_without_the_steps_that_hold_others():
    found, total = stage_times.stages(LOG.splitlines(True))
    assert found == [("main", "sanity (ansible-test)", 54), ("main", "lab up", 5),
                     ("main", "pytest tests/integration", 1298), ("main", "molecule test -s default", 73),
                     ("node lab", "node lab up", 154), ("node lab", "pytest tests/integration/labs/test_node_*.py", 630)]
    assert total == 2444


def test_a_step_with_nothing_inside_is_a_stage():
    found, _total = stage_times.stages(["=== units\n", "=== units: ok in 57s\n"])
    assert found == [("main", "units", 57)]
