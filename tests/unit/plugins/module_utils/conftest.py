from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest


class FakeClock:
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def clock():
    """For waits that take ``clock=`` and ``sleep=``: pass ``clock`` and ``clock.sleep``."""
    return FakeClock()
