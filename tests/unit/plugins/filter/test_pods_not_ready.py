from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.filter import pods_not_ready as plugin

# As Jinja sees it: through the plugin's table of filters.
pods_not_ready = plugin.FilterModule().filters()["pods_not_ready"]

READY = {"metadata": {"name": "ok", "namespace": "ns"}, "spec": {"nodeName": "w1"},
         "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
PULLING = {"metadata": {"name": "pull", "namespace": "ns"}, "spec": {"nodeName": "w1"},
           "status": {"phase": "Pending", "containerStatuses": [
               {"name": "plugin", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}}]}}
LINE = "ns/pull on w1 is Pending (plugin: ImagePullBackOff no such image)"


def test_the_filter_is_registered_under_its_documented_name():
    assert list(plugin.FilterModule().filters()) == ["pods_not_ready"]


@pytest.mark.parametrize("data", [
    [READY, PULLING],
    {"resources": [READY, PULLING]},
    {"results": [{"resources": [READY]}, {"resources": [PULLING]}]},
    {"results": [{"results": [{"resources": [PULLING]}]}, {"resources": [READY]}]},
], ids=["list of pods", "k8s_info result", "loop of results", "nested loops"])
def test_every_shape_the_input_comes_in_gives_the_same_lines(data):
    assert pods_not_ready(data) == [LINE]


@pytest.mark.parametrize("data", [None, [], {}, {"resources": None}, {"results": []}, {"results": [{"skipped": True}]}])
def test_nothing_registered_has_no_pod_that_is_not_ready(data):
    assert pods_not_ready(data) == []
