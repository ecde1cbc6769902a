from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dra.gpu.plugins.test import api_transient as plugin

# As Jinja sees it: through the plugin's table of tests.
api_transient = plugin.TestModule().tests()["api_transient"]
FORBIDDEN = {"failed": True, "msg": "Failed to retrieve node 'cp1' due to: Forbidden", "status": 403}
REFUSED = {"failed": True, "msg": "Failed to patch node due to: [Errno 111] Connection refused"}


def test_a_403_is_retried_only_inside_the_restart_window():
    assert api_transient(FORBIDDEN, restarted_at=time.time() - 10, window=120) is True
    assert api_transient(FORBIDDEN, restarted_at=time.time() - 300, window=120) is False
    assert api_transient(FORBIDDEN) is False


def test_a_lost_connection_is_always_retried_and_success_never():
    assert api_transient(REFUSED) is True
    assert api_transient({"changed": False}) is False
    assert api_transient({"failed": True, "msg": "Node cp9 not found."}, restarted_at=time.time(), window=60) is False


def test_restarted_at_may_come_as_text_from_a_template():
    assert api_transient(FORBIDDEN, restarted_at=str(time.time()), window="120") is True
