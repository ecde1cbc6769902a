from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.sharing import packing

WORKLOAD = {"name": "inference", "replicas": 3, "memory": "8Gi", "device_class": "nvidia-gpu-shared"}


def pending(name, message="0/2 nodes are available: 2 cannot allocate all claims."):
    return {"metadata": {"name": name}, "spec": {},
            "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                       "message": message}]}}


def bound(name, node):
    return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {}}


def claim(run_id, workload, pool, device, consumed=None):
    result = {"request": "gpu", "driver": "gpu.nvidia.com", "pool": pool, "device": device, "shareID": "abc"}
    if consumed:
        result["consumedCapacity"] = consumed
    return {"metadata": {"labels": {packing.RUN_LABEL: run_id, packing.WORKLOAD_LABEL: workload}},
            "status": {"allocation": {"devices": {"results": [result]}}}}


def plan(placements, by_node, rows, depends=None):
    return {"strategies": {"memory_shares": {"total": sum(p["replicas"] for p in placements), "by_node": by_node,
                                             "placements": placements, "depends_on_node_choice": depends or []}},
            "workloads": rows}


def test_a_share_template_asks_for_memory_and_a_whole_one_does_not():
    shares = packing.template(WORKLOAD, "memory_shares", "r1", "resource.k8s.io/v1")
    request = shares["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert request == {"deviceClassName": "nvidia-gpu-shared", "capacity": {"requests": {"memory": "8Gi"}}}
    whole = packing.template(WORKLOAD, "whole_gpu", "r1", "resource.k8s.io/v1")
    assert whole["spec"]["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "nvidia-gpu-shared"}
    assert whole["metadata"]["labels"][packing.RUN_LABEL] == "r1"


def test_each_pod_holds_a_claim_of_its_own_from_the_template():
    body = packing.pod(WORKLOAD, 2, "r1", "registry.k8s.io/pause:3.10")
    assert body["metadata"]["name"] == "inference-2"
    assert body["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "inference"}]
    assert body["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}


def test_a_workload_is_decided_only_when_every_replica_is_bound_or_unschedulable():
    waiting = {"metadata": {"name": "inference-2"}, "spec": {}, "status": {}}
    assert packing.decided([bound("inference-0", "node-a"), pending("inference-1")], 3) is None
    assert packing.decided([bound("inference-0", "node-a"), pending("inference-1"), waiting], 3) is None
    verdicts = packing.decided([bound("inference-0", "node-a"), pending("inference-1"), bound("inference-2", "node-b")], 3)
    outcome = packing.workload_outcome(WORKLOAD, verdicts)
    assert outcome == {"name": "inference", "requested": 3, "scheduled": 2, "unschedulable": 1,
                       "by_node": {"node-a": 1, "node-b": 1},
                       "messages": ["0/2 nodes are available: 2 cannot allocate all claims."]}


def test_only_this_runs_claims_count():
    found = packing.allocations([claim("r1", "inference", "node-a", "gpu-0", {"memory": "8Gi"}),
                                 claim("other", "inference", "node-a", "gpu-1", {"memory": "8Gi"})], "r1")
    assert found == [{"workload": "inference", "pool": "node-a", "device": "gpu-0", "consumed": {"memory": "8Gi"},
                      "share_id": "abc"}]


def test_plan_and_scheduler_agree_when_counts_devices_nodes_and_consumption_are_equal():
    the_plan = plan([{"workload": "inference", "pool": "node-a", "device": "gpu-0", "replicas": 2,
                      "consumes": {"memory": "8Gi"}}], {"node-a": 2, "node-b": 0},
                    [{"name": "inference", "memory_shares": 2}])
    outcome = [{"name": "inference", "requested": 3, "scheduled": 2, "by_node": {"node-a": 2}}]
    # the scheduler chose gpu-1 where the plan said gpu-0: equal devices are its choice
    allocated = [{"workload": "inference", "pool": "node-a", "device": "gpu-1", "consumed": {"memory": "8Gi"}}] * 2
    assert packing.differences(the_plan, "memory_shares", outcome, allocated) == []


def test_every_way_the_scheduler_can_differ_is_named():
    the_plan = plan([{"workload": "inference", "pool": "node-a", "device": "gpu-0", "replicas": 2,
                      "consumes": {"memory": "8Gi"}}], {"node-a": 2}, [{"name": "inference", "memory_shares": 2}])
    outcome = [{"name": "inference", "requested": 3, "scheduled": 3, "by_node": {"node-a": 1, "node-b": 2}}]
    allocated = [{"workload": "inference", "pool": "node-a", "device": "gpu-0", "consumed": {"memory": "23028Mi"}},
                 {"workload": "inference", "pool": "node-b", "device": "gpu-0", "consumed": {"memory": "8Gi"}},
                 {"workload": "inference", "pool": "node-b", "device": "gpu-0", "consumed": {"memory": "8Gi"}}]
    found = packing.differences(the_plan, "memory_shares", outcome, allocated)
    assert found == [
        "inference: the plan placed 2 of 3, the scheduler 3",
        "claims per device: the plan node-a/gpu-0 2, the scheduler node-a/gpu-0 1, node-b/gpu-0 2",
        "per node: the plan node-a 2, the scheduler node-a 1, node-b 2",
        "inference on node-a/gpu-0 consumes memory 23028Mi, the plan said memory 8Gi"]
    line = packing.summary("memory_shares", the_plan, outcome, found)
    assert line.startswith("3 pods with memory shares: the plan said 2 fit, the scheduler placed 3 and left 0 "
                           "Unschedulable, NOT as planned: inference: the plan placed 2 of 3")


def test_per_node_is_not_compared_where_the_plan_says_the_node_is_the_schedulers_choice():
    the_plan = plan([{"workload": "inference", "pool": "node-a", "device": "gpu-0", "replicas": 1,
                      "consumes": {"memory": "8Gi"}}], {"node-a": 1}, [{"name": "inference", "memory_shares": 1}],
                    depends=["inference"])
    outcome = [{"name": "inference", "requested": 1, "scheduled": 1, "by_node": {"node-b": 1}}]
    allocated = [{"workload": "inference", "pool": "node-b", "device": "gpu-3", "consumed": {"memory": "8Gi"}}]
    assert packing.differences(the_plan, "memory_shares", outcome, allocated) == []


def test_bad_names_and_timeouts_are_refused_before_anything_is_read():
    params = {"namespace": "Packing_Check", "strategy": "memory_shares", "timeout": 0,
              "workloads": [{"name": "Inference.v2", "memory": "8Gi"}]}
    problems = packing.input_problems(params)
    assert len(problems) == 3, problems
    assert problems[0].startswith("namespace is 'Packing_Check'")
    assert problems[1].startswith("workloads[0].name is 'Inference.v2'")
    assert problems[2] == "timeout is 0; it must be at least 1 (seconds)"
