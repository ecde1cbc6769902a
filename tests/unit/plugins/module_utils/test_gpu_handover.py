from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils import gpu_handover as handover


def pod(name, node, gpus=1, phase="Running", namespace="ml"):
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}]},
            "status": {"phase": phase}}


def claim(name, results, reserved=(), namespace="ml"):
    status = {"allocation": {"devices": {"results": results}}} if results else {}
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": n, "uid": "u-" + n} for n in reserved]
    return {"metadata": {"name": name, "namespace": namespace}, "status": status}


def test_only_unfinished_gpu_pods_on_the_moving_nodes_hold_gpus():
    pods = [pod("llm-1", "gpu-a"), pod("llm-2", "gpu-a", gpus=2), pod("web", "gpu-a", gpus=0),
            pod("done", "gpu-a", phase="Succeeded"), pod("failed", "gpu-a", phase="Failed"),
            pod("elsewhere", "gpu-b"), pod("pending", None)]
    holders = handover.device_plugin_holders(pods, ["gpu-a"])
    assert [(h["name"], h["gpus"]) for h in holders] == [("llm-1", 1), ("llm-2", 2)]
    message = handover.move_refusal(holders)
    assert "2 pod(s) hold nvidia.com/gpu" in message
    assert "ml/llm-1 on gpu-a (1 GPU), ml/llm-2 on gpu-a (2 GPUs)" in message
    assert "gpu_workload_info" in message and "gpu_operator_dra_nodes" in message
    assert handover.move_refusal([]) is None


def test_a_long_list_names_ten_and_counts_the_rest():
    holders = handover.device_plugin_holders([pod("p%02d" % i, "gpu-a") for i in range(13)], ["gpu-a"])
    message = handover.move_refusal(holders)
    assert "ml/p09 on gpu-a" in message and "ml/p10" not in message and "and 3 more" in message


def test_claims_of_the_driver_with_their_pods_block_removal():
    claims = [claim("train", [{"driver": "gpu.nvidia.com", "pool": "gpu-a", "device": "gpu-0"}], ["train-0"]),
              claim("example", [{"driver": "gpu.example.com", "pool": "x", "device": "gpu-0"}], ["e"]),
              claim("unallocated", [])]
    held = handover.allocated_claims(claims, "gpu.nvidia.com")
    assert held == [{"namespace": "ml", "name": "train", "devices": ["gpu-a/gpu-0"], "pods": ["train-0"]}]
    message = handover.removal_refusal(held, "gpu.nvidia.com")
    assert "ml/train (gpu-a/gpu-0; pods: train-0)" in message and "Terminating" in message
    assert "gpu_operator_force_removal: true" in message
    assert handover.removal_refusal([], "gpu.nvidia.com") is None
