from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_ready
from ansible_collections.dra.gpu.plugins.module_utils.k8s.api_ready import Answer


def script(*answers):
    """A probe that gives the answers in turn, then keeps giving the last one."""
    answers = list(answers)

    def probe():
        return answers.pop(0) if len(answers) > 1 else answers[0]
    return probe


READY = Answer(True)
REFUSED = Answer(False, 0, "MaxRetryError")
RBAC_PENDING = Answer(False, 500, "poststarthook/rbac/bootstrap-roles")
FORBIDDEN = Answer(False, 403, "reading node cp1: Forbidden")
# In the window RBAC refuses /readyz itself (granted through system:public-info-viewer).
READYZ_FORBIDDEN = Answer(False, 403, "Forbidden")


def test_rides_out_a_restart_in_order_and_reports_the_phases(clock):
    readyz = script(REFUSED, REFUSED, READYZ_FORBIDDEN, RBAC_PENDING, RBAC_PENDING, READY)
    result = api_ready.wait_ready(readyz, script(READY), 60, clock=clock, sleep=clock.sleep)
    assert result["probes"] == 6
    assert result["rode_out"] == ["/readyz: no connection (MaxRetryError)", "/readyz: 403 (authorizer not ready)",
                                  "/readyz: 500 (poststarthook/rbac/bootstrap-roles)"]
    assert result["elapsed"] == pytest.approx(2.5)


def test_a_403_right_after_readyz_passes_is_waited_out_within_the_grace(clock):
    read = script(FORBIDDEN, FORBIDDEN, FORBIDDEN, READY)
    result = api_ready.wait_ready(script(READY), read, 60, auth_grace=10, clock=clock, sleep=clock.sleep)
    assert result["rode_out"] == ["the read: 403 (authorizer not ready)"]


def test_a_403_from_a_ready_server_is_a_real_refusal_and_fails_fast(clock):
    with pytest.raises(api_ready.Refused, match="refuses these credentials .*missing permission"):
        api_ready.wait_ready(script(READY), script(FORBIDDEN), 300, auth_grace=5, clock=clock, sleep=clock.sleep)
    assert clock.now <= 5.5


def test_403_from_readyz_itself_is_the_restart_window_not_a_refusal(clock):
    readyz = script(*([READYZ_FORBIDDEN] * 40 + [READY]))
    read = script(READY)
    result = api_ready.wait_ready(readyz, read, 60, auth_grace=5, clock=clock, sleep=clock.sleep)
    assert result["probes"] == 41


def test_a_read_that_cannot_succeed_fails_at_once(clock):
    with pytest.raises(api_ready.Refused, match="404"):
        api_ready.wait_ready(script(READY), script(Answer(False, 404, "reading node cp9: Not Found")), 300,
                             clock=clock, sleep=clock.sleep)
    assert clock.now == 0


def test_times_out_naming_what_it_waited_for_and_the_last_answer(clock):
    with pytest.raises(api_ready.NotReady, match=r"timed out after 30s .*authorized read.*rbac/bootstrap-roles"):
        api_ready.wait_ready(script(RBAC_PENDING), script(READY), 30, clock=clock, sleep=clock.sleep)
    assert 30 <= clock.now <= 31


def test_failing_checks_reads_the_verbose_readyz_body():
    body = "[+]ping ok\n[-]informer-sync failed: reason withheld\n[+]etcd ok\n" \
           "[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nreadyz check failed\n"
    assert api_ready.failing_checks(body) == ["informer-sync", "poststarthook/rbac/bootstrap-roles"]


class NewStyleClient:
    """kubernetes >= 37: param_serialize, then call_api(method, url, ...) returning a response."""

    class Response:
        def __init__(self, status, data):
            self.status, self.data = status, data

        def read(self):
            return self.data

    def __init__(self, status, data):
        self.answer = self.Response(status, data)

    def param_serialize(self, method, resource_path, query_params, auth_settings):
        return (method, "https://api" + resource_path, {}, None, [])

    def call_api(self, method, url, headers, body, post_params, _request_timeout=None):
        assert (method, url) == ("GET", "https://api/readyz")
        return self.answer


class OldStyleClient:
    """kubernetes 34-36: call_api(path, method, ...) returning the body, raising on errors."""

    def __init__(self, status, body):
        self.status, self.body = status, body

    def call_api(self, path, method, **kwargs):
        assert (path, method, kwargs["response_type"]) == ("/readyz", "GET", "str")
        if self.status != 200:
            from ansible_collections.dra.gpu.plugins.module_utils.k8s.client import ApiException
            exc = ApiException(status=self.status, reason="Internal Server Error")
            exc.body = self.body
            raise exc
        return self.body


@pytest.mark.parametrize("make", [lambda s, b: NewStyleClient(s, b.encode()), OldStyleClient])
def test_readyz_is_read_with_either_generation_of_the_kubernetes_client(make):
    failing = "[+]ping ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n"
    assert api_ready._get_raw(make(200, "ok"), "/readyz", [("verbose", "true")]) == (200, "ok")
    status, body = api_ready._get_raw(make(500, failing), "/readyz", [("verbose", "true")])
    assert status == 500 and api_ready.failing_checks(body) == ["informer-sync"]
