"""What the kubernetes ApiClient answers, for the unit tests of raw API calls (client.request_json)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class Response:
    """A urllib3-like response (kubernetes < 34) that is also its RESTResponse (>= 34)."""

    def __init__(self, status, body):
        self.status = status
        self.reason = "OK" if 200 <= status <= 299 else "Refused"
        self.data = body
        self.headers = {}
        self.response = self

    def read(self):
        return self.data
