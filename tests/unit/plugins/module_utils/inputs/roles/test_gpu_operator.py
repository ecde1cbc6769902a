from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import gpu_operator


def test_gpu_operator_role_names_its_variables():
    values = {"gpu_operator_state": "present", "gpu_operator_version": "v26.3.1", "gpu_operator_namespace": "GPU_Op",
              "gpu_operator_dra_driver_namespace": "nvidia-dra-driver-gpu", "gpu_operator_release_name": "x" * 60,
              "gpu_operator_dra_driver_release_name": "nvidia-dra-driver-gpu", "gpu_operator_min_kubernetes_version": "1.3x",
              "gpu_operator_gpu_node_selector": "a==b==c", "gpu_operator_dra_nodes": ["n", "n"],
              "gpu_operator_timeout": 0, "gpu_operator_slice_timeout": 300, "gpu_operator_chart_source": "repo"}
    text = " | ".join(gpu_operator.problems(values, []))
    for words in ("gpu_operator_namespace is 'GPU_Op'", "gpu_operator_release_name", "at most 53",
                  "gpu_operator_min_kubernetes_version is '1.3x'", "gpu_operator_gpu_node_selector",
                  "gpu_operator_dra_nodes names n more than once", "gpu_operator_timeout is 0"):
        assert words in text


REMOVAL = {"gpu_operator_state": "absent", "gpu_operator_namespace": "gpu-operator",
           "gpu_operator_dra_driver_namespace": "nvidia-dra-driver-gpu", "gpu_operator_release_name": "gpu-operator",
           "gpu_operator_dra_driver_release_name": "nvidia-dra-driver-gpu", "gpu_operator_timeout": 600,
           "gpu_operator_slice_timeout": 300, "gpu_operator_eviction_timeout": 300}


def test_a_removal_checks_only_the_names_and_waits():
    assert gpu_operator.problems(dict(REMOVAL, gpu_operator_version="not checked"), []) == []
    found = gpu_operator.problems(dict(REMOVAL, gpu_operator_namespace="GPU", gpu_operator_eviction_timeout=0), [])
    assert len(found) == 2
    assert found[0].startswith("gpu_operator_namespace is 'GPU'")
    assert found[1].startswith("gpu_operator_eviction_timeout is 0")


def test_the_image_list_file_must_be_writable_where_it_is_to_go(tmp_path):
    assert gpu_operator.problems(dict(REMOVAL, gpu_operator_image_list_file=str(tmp_path / "i.txt")), []) == []
    missing = str(tmp_path / "no-such-dir" / "i.txt")
    found = gpu_operator.problems(dict(REMOVAL, gpu_operator_image_list_file=missing), [])
    assert found == ["gpu_operator_image_list_file is %r: it must be a file in a directory that exists and can be "
                     "written (%s); create the directory or pick another path" % (missing, os.path.dirname(missing))]
    found = gpu_operator.problems(dict(REMOVAL, gpu_operator_image_list_file=str(tmp_path)), [])
    assert len(found) == 1 and "it must be a file" in found[0]
