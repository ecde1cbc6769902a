from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import drain_budgets
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_handover as handover
from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads


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


def node(name, unschedulable=False, annotations=None, allocatable=None):
    return {"metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"unschedulable": True} if unschedulable else {},
            "status": {"allocatable": allocatable or {}}}


def test_only_a_cordon_made_here_is_lifted_again():
    free = node("gpu-a")
    patch = handover.cordon_patch(free)
    assert patch == {"metadata": {"annotations": {"dra.gpu/cordoned-by": "dra.gpu.gpu_operator"}},
                     "spec": {"unschedulable": True}}
    ours = node("gpu-a", unschedulable=True, annotations=patch["metadata"]["annotations"])
    theirs = node("gpu-b", unschedulable=True)
    assert handover.cordon_patch(theirs) is None and handover.cordon_patch(ours) is None
    assert handover.release_patch(theirs) is None and handover.release_patch(free) is None
    assert handover.release_patch(ours) == {"metadata": {"annotations": {"dra.gpu/cordoned-by": None}},
                                            "spec": {"unschedulable": None}}


def test_a_node_offers_device_plugin_gpus_while_any_is_allocatable():
    assert gpu_workloads.offers_device_plugin_gpus(node("a", allocatable={"nvidia.com/gpu": "2"}))
    assert not gpu_workloads.offers_device_plugin_gpus(node("a", allocatable={"nvidia.com/gpu": "0"}))
    assert not gpu_workloads.offers_device_plugin_gpus(node("a", allocatable={"cpu": "8"}))


def budget(name, selector, allowed, namespace="ml"):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector},
            "status": {"disruptionsAllowed": allowed}}


def test_budgets_that_select_the_pod_and_allow_nothing_block_it():
    target = {"metadata": {"namespace": "ml", "labels": {"app": "llm", "tier": "gpu"}}}
    budgets = [
        budget("llm", {"matchLabels": {"app": "llm"}}, 0),
        budget("relaxed", {"matchLabels": {"app": "llm"}}, 1),
        budget("other-app", {"matchLabels": {"app": "web"}}, 0),
        budget("other-ns", {"matchLabels": {"app": "llm"}}, 0, namespace="prod"),
        budget("by-expression", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]}, 0),
        budget("not-in", {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gpu"]}]}, 0),
        budget("exists", {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, 0),
        budget("does-not-exist", {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, 0),
        budget("everything", {}, 0),
    ]
    # The drain of the device plugin's holders asks the same rule as cluster_upgrade's drain.
    assert drain_budgets.blocking(budgets, [target]) == ["ml/by-expression", "ml/everything", "ml/exists", "ml/llm"]


def test_the_eviction_refusal_says_what_is_left_what_blocked_and_what_was_undone():
    left = [{"namespace": "ml", "name": "llm-0", "node": "gpu-a"}]
    evicted = [{"namespace": "ml", "name": "embed-0", "node": "gpu-a"}]
    message = handover.eviction_refusal(left, ["ml/llm"], evicted, ["gpu-a"], 30)
    assert "1 pod(s) holding nvidia.com/gpu were not gone within 30s: ml/llm-0 on gpu-a" in message
    assert "PodDisruptionBudget(s) allowing no disruption: ml/llm." in message
    assert "Evicted before that: ml/embed-0" in message
    assert "uncordoned (gpu-a); no node label changed" in message


# ----- taking a node back to the device plugin ---------------------------------------------------

def dra_slice(node, pool=None):
    return {"spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": pool or node}}}


def allocated(name, pool, device="gpu-0", pods=("trainer",)):
    return {"metadata": {"namespace": "ml", "name": name},
            "status": {"allocation": {"devices": {"results": [
                {"driver": "gpu.nvidia.com", "pool": pool, "device": device}]}},
                "reservedFor": [{"resource": "pods", "name": p} for p in pods]}}


def test_claims_on_the_nodes_going_back_are_found_through_their_slices_pools():
    claims = [allocated("on-a", "pool-of-a"), allocated("on-b", "node-b"), allocated("named-a", "node-a", "gpu-1")]
    slices = [dra_slice("node-a", "pool-of-a"), dra_slice("node-b")]
    held = handover.claims_on_nodes(claims, slices, ["node-a"], "gpu.nvidia.com")
    assert [(c["name"], c["devices"]) for c in held] == [("named-a", ["node-a/gpu-1"]), ("on-a", ["pool-of-a/gpu-0"])]
    assert handover.claims_on_nodes(claims, slices, ["node-c"], "gpu.nvidia.com") == []


def test_the_return_refusal_names_each_claim_its_pods_and_what_to_do():
    held = handover.claims_on_nodes([allocated("train", "node-a")], [], ["node-a"], "gpu.nvidia.com")
    message = handover.return_refusal(held, ["node-a"])
    assert message.startswith("refused before changing anything: 1 ResourceClaim(s) hold DRA devices on node-a")
    assert "ml/train (node-a/gpu-0; pods: trainer)" in message and "Delete those claims' pods" in message
    assert handover.return_refusal([], ["node-a"]) is None
