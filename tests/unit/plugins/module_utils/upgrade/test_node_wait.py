from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import node_wait


def test_a_kubelet_version_matches_a_minor_or_the_exact_patch():
    assert node_wait.version_matches("v1.36.3", "1.36")
    assert node_wait.version_matches("v1.36.3", "1.36.3")
    assert not node_wait.version_matches("v1.36.2", "1.36.3")
    assert not node_wait.version_matches("v1.35.4", "1.36")
    assert node_wait.version_matches("v1.35.4", None)


def test_the_shortfall_says_every_reason_or_none():
    assert node_wait.shortfall(None, "1.36") == "not registered"
    assert node_wait.shortfall({"ready": False, "kubelet": "v1.35.4"}, "1.36") == \
        "not Ready, kubelet v1.35.4, waiting for 1.36"
    assert node_wait.shortfall({"ready": True, "kubelet": "v1.36.3"}, "1.36") is None
