"""usage_wording: how the report writes what it shows, here an age for people."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.report import usage_wording


@pytest.mark.parametrize("seconds,text", [
    (None, "unknown"), (0, "0s"), (45, "45s"), (59.9, "59s"), (60, "1m"), (12 * 60 + 5, "12m"), (3600, "1h"),
    (3 * 3600 + 12 * 60 + 30, "3h 12m"), (86400, "1d"), (2 * 86400 + 4 * 3600 + 59, "2d 4h"), (-5, "0s")])
def test_human_age(seconds, text):
    assert usage_wording.human_age(seconds) == text
