from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_errors


@pytest.mark.parametrize("status, kind", [
    (None, "transient"), (0, "transient"), (429, "transient"), (500, "transient"), (503, "transient"),
    (504, "transient"), (401, "auth"), (403, "auth"), (400, "permanent"), (404, "permanent"),
    (409, "permanent"), (422, "permanent"),
])
def test_classify_status(status, kind):
    assert api_errors.classify_status(status) == kind


# Messages as kubernetes.core's k8s_drain and k8s_info write them.
@pytest.mark.parametrize("result, kind", [
    ({"failed": True, "msg": "Failed to retrieve node 'cp1' due to: Forbidden", "status": 403}, "auth"),
    ({"failed": True, "msg": "Failed to retrieve node 'cp1' due to: Forbidden"}, "auth"),
    ({"failed": True, "msg": "Failed to patch node due to: (401)\nReason: Unauthorized"}, "auth"),
    ({"failed": True, "msg": "Failed to retrieve node 'cp1' due to: HTTPSConnectionPool(host='10.0.0.1', "
                             "port=6443): Max retries exceeded with url: /api/v1/nodes/cp1 (Caused by "
                             "NewConnectionError(': Failed to establish a new connection: [Errno 111] "
                             "Connection refused'))"}, "transient"),
    ({"failed": True, "msg": "Failed to delete pod default/web-1 due to: Cannot evict pod as it would violate "
                             "the pod's disruption budget."}, "transient"),
    ({"failed": True, "msg": "Failed to patch node due to: (503)\nReason: Service Unavailable"}, "transient"),
    ({"failed": True, "msg": "Node cp9 not found."}, "permanent"),
    ({"failed": True, "msg": "Pod deletion errors: cannot delete Pods not managed by a controller"}, "permanent"),
    ({"failed": True, "msg": "Failed to patch node due to: (422)\nReason: Unprocessable Entity"}, "permanent"),
    ({"changed": True}, None),
    ({"failed": False, "msg": "Forbidden"}, None),
    ("not a result", None),
])
def test_classify_result(result, kind):
    assert api_errors.classify_result(result) == kind


def test_an_explicit_status_beats_the_words_of_the_message():
    assert api_errors.classify_result({"failed": True, "status": 404, "msg": "Forbidden words"}) == "permanent"


@pytest.mark.parametrize("kind, window, retry", [
    ("transient", False, True), ("transient", True, True), ("auth", True, True), ("auth", False, False),
    ("permanent", True, False), (None, True, False),
])
def test_worth_retrying(kind, window, retry):
    assert api_errors.worth_retrying(kind, window) is retry
