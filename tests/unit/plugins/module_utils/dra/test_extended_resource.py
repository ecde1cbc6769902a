from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import extended_resource as er


def device_class(name, extended=None):
    spec = {"extendedResourceName": extended} if extended else {}
    return {"metadata": {"name": name}, "spec": spec}


def test_a_class_that_names_nvidia_gpu_makes_the_path_available():
    classes = [device_class("mig.nvidia.com"), device_class("gpu.nvidia.com", "nvidia.com/gpu"),
               device_class("other", "example.com/fpga")]
    found = er.verdict("v1.36.3", classes, True)
    assert found["available"] and found["device_class"] == "gpu.nvidia.com"


def test_a_server_that_drops_the_field_says_which_feature_and_what_to_do():
    found = er.verdict("v1.35.4", [device_class("gpu.nvidia.com")], False)
    assert not found["available"] and found["device_class"] is None
    assert "this API server (v1.35.4) does not keep a DeviceClass's spec.extendedResourceName" in found["reason"]
    assert "DRAExtendedResource" in found["reason"] and "method claim" in found["reason"]


def test_a_server_that_keeps_it_but_no_class_names_it():
    found = er.verdict("v1.36.3", [device_class("gpu.nvidia.com")], True)
    assert not found["available"]
    assert "keeps extendedResourceName, but no DeviceClass names nvidia.com/gpu" in found["reason"]


def test_pods_are_reported_with_the_claim_the_scheduler_made():
    pods = [{"metadata": {"name": "llm-b"}, "spec": {}, "status": {"phase": "Pending"}},
            {"metadata": {"name": "llm-a"}, "spec": {"nodeName": "gpu-1"},
             "status": {"phase": "Running", "extendedResourceClaimStatus": {"resourceClaimName": "llm-a-er-x"}}}]
    paths = er.pod_paths(pods)
    assert paths == [{"name": "llm-a", "node": "gpu-1", "phase": "Running", "claim": "llm-a-er-x"},
                     {"name": "llm-b", "node": None, "phase": "Pending", "claim": None}]
    lines = er.report("Deployment ml/llm", 1, "gpu.nvidia.com", paths)
    assert lines[1] == "pod llm-a (Running) on gpu-1: claim llm-a-er-x made by the scheduler"
    assert "not served by DRA yet" in lines[2]
