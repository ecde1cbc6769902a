from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import preflight


def test_preflight_role():
    text = " | ".join(preflight.problems({"preflight_min_version": "1.3x",
                                          "preflight_gpu_hosts": ["gpu-1", "gpu-9"]}, ["gpu-1"]))
    assert "preflight_min_version is '1.3x'" in text and "preflight_gpu_hosts names gpu-9" in text
