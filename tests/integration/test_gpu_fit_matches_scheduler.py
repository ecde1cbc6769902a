"""gpu_fit's memory_shares plan against the real kube-scheduler (issue 27 item 5).

A lab of its own at the current release (1.37.2: DRAConsumableCapacity beta and on) whose
simulated NVIDIA driver publishes ConsumableShares as 0.5.0 does in ``memory`` mode, on the
seed's nodes: node-a with 2 A10 (23028Mi), node-b with 4 L4 (23034Mi, listed gpu-3 first).

Per mix, gpu_fit plans first; then each workload's pods (one claim each, from a template asking
``capacity.requests.memory``) are created after the previous workload's pods are all scheduled
or Unschedulable, the order the plan assumes. What is compared is what the scheduler cannot
choose: how many pods of each workload run and how many are Unschedulable, how many claims each
device holds (as a multiset: which node the scheduler scores higher is its choice), per node where
the mix leaves no choice, and the consumedCapacity of every allocation. The mixes are chosen so
that any node choice gives the same counts (the plan says so: depends_on_node_choice is empty);
a plan that rounded differently, ignored what claims consumed or a class's selectors would differ.
"""

import contextlib
import json
import os
import time
import uuid

import pytest
from kubernetes import client, config, watch

import old_lab
from conftest import PAUSE, run_module
from waiting import wait_until_gone

CLASSES = {
    "fit-gpu": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "fit-l4": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'",
}
DECIDED_TIMEOUT = 120


def settings(mode="memory"):
    # Two labs may be up at once (the module's memory lab while mode N's runs): ports of their own.
    offset = 560 if mode == "memory" else 640
    return {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + offset, "driver_mode": "always",
            "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-%s-fit-%s" % (old_lab.NEW_VERSION, mode))}


@pytest.fixture(scope="module")
def shares_cluster():
    """The 1.37.2 lab in ConsumableShares ``memory`` mode with the two DeviceClasses; (kubeconfig, api)."""
    with cluster("memory") as found:
        yield found


@contextlib.contextmanager
def cluster(mode):
    """A 1.37.2 lab whose simulated driver publishes ConsumableShares ``mode``, with the classes."""
    kubeconfig = old_lab.start(old_lab.NEW_VERSION, consumable_shares=mode, **settings(mode))
    try:
        api = config.new_client_from_config(kubeconfig)
        custom = client.CustomObjectsApi(api)
        for name, expression in CLASSES.items():
            custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
                "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                "spec": {"selectors": [{"cel": {"expression": expression}}]}})
        slices = custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceslices")["items"]
        devices = [d for s in slices for d in s["spec"]["devices"]]
        assert len(devices) == 6 and all(d.get("allowMultipleAllocations") for d in devices), devices
        yield kubeconfig, api
    finally:
        old_lab.stop(old_lab.NEW_VERSION, **settings(mode))


@pytest.fixture
def mix(shares_cluster):
    """A namespace for one mix, removed with its claims before the next mix starts."""
    kubeconfig, api = shares_cluster
    core = client.CoreV1Api(api)
    name = "fit-" + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": name}})
    yield kubeconfig, api, name
    core.delete_namespace(name)
    wait_until_gone(core.list_namespace, lambda n: n["metadata"]["name"] == name, "namespace " + name, timeout=120)


def plan(kubeconfig, workloads):
    result = run_module("dra.gpu.gpu_fit", {"workloads": workloads}, env={"KUBECONFIG": kubeconfig})
    assert not result.get("failed"), result.get("msg")
    return result


def template(custom, ns, workload):
    """One claim per pod; ``memory: default`` asks for no memory at all."""
    request = {"deviceClassName": workload.get("device_class", "fit-gpu")}
    if workload["memory"] != "default":
        request["capacity"] = {"requests": {"memory": workload["memory"]}}
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": workload["name"]},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}})


def pod(workload, index):
    return {"metadata": {"name": "%s-%d" % (workload["name"], index), "labels": {"workload": workload["name"]}},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": workload["name"]}],
                     "containers": [{"name": "main", "image": PAUSE, "resources": {"claims": [{"name": "gpu"}]}}]}}


def verdict(item):
    """'scheduled', 'unschedulable' (with the scheduler's message) or None (not yet decided)."""
    if (item.get("spec") or {}).get("nodeName"):
        return "scheduled"
    for condition in (item.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return "unschedulable"
    return None


def decided(core, ns, workload):
    """Wait (a watch, with a timeout) until every pod of ``workload`` is scheduled or Unschedulable;
    return {pod name: (verdict, node, message)}."""
    selector = "workload=" + workload["name"]
    deadline = time.monotonic() + DECIDED_TIMEOUT
    seen = {}

    def record(item):
        condition = [c for c in (item.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
        seen[item["metadata"]["name"]] = (verdict(item), (item.get("spec") or {}).get("nodeName"),
                                          condition[0].get("message") if condition else None)

    while True:
        listing = json.loads(core.list_namespaced_pod(ns, label_selector=selector, _preload_content=False).data)
        for item in listing["items"]:
            record(item)
        if len(seen) == workload["replicas"] and all(v[0] for v in seen.values()):
            return seen
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError("pods of %s not all decided after %ss: %s" % (workload["name"], DECIDED_TIMEOUT, seen))
        stream = watch.Watch()
        for event in stream.stream(core.list_namespaced_pod, ns, label_selector=selector,
                                   resource_version=listing["metadata"]["resourceVersion"],
                                   timeout_seconds=max(1, int(remaining))):
            record(event["raw_object"])
            if len(seen) == workload["replicas"] and all(v[0] for v in seen.values()):
                stream.stop()
                return seen


def run_mix(api, ns, workloads):
    """Create each workload's pods once the previous ones are decided; per workload the verdicts."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    outcome = {}
    for workload in workloads:
        template(custom, ns, workload)
        for index in range(workload["replicas"]):
            core.create_namespaced_pod(ns, pod(workload, index))
        outcome[workload["name"]] = decided(core, ns, workload)
    return outcome


def allocations(api, ns):
    """Per claim (its pod's workload): the allocation results."""
    custom = client.CustomObjectsApi(api)
    found = []
    for claim in custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims")["items"]:
        for result in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []:
            owner = [r["name"] for r in claim["metadata"].get("ownerReferences") or [] if r["kind"] == "Pod"]
            found.append(dict(result, workload=owner[0].rsplit("-", 1)[0] if owner else None))
    return found


def compare(result, outcome, allocated, workloads, per_node=True):
    """Everything the scheduler could not have chosen differently, plan against cluster."""
    shares = result["strategies"]["memory_shares"]
    assert shares["depends_on_node_choice"] == [], shares
    planned = dict((row["name"], row["memory_shares"]) for row in result["workloads"])
    left = dict((u["workload"], u["replicas"]) for u in result["unplaced"]["memory_shares"])
    for workload in workloads:
        verdicts = outcome[workload["name"]]
        scheduled = [v for v in verdicts.values() if v[0] == "scheduled"]
        refused = [v for v in verdicts.values() if v[0] == "unschedulable"]
        assert len(scheduled) == planned[workload["name"]], (workload, planned, verdicts)
        assert len(refused) == left.get(workload["name"], 0), (workload, left, verdicts)
        assert all("cannot allocate all claims" in (v[2] or "") for v in refused), refused
    # claims per device, as a multiset (which node took them is the scheduler's choice)
    cluster_devices, plan_devices, consumed = {}, {}, {}
    for entry in allocated:
        key = (entry["pool"], entry["device"])
        cluster_devices[key] = cluster_devices.get(key, 0) + 1
        assert entry.get("shareID"), entry
        consumed.setdefault(entry["workload"], set()).add(json.dumps(entry["consumedCapacity"], sort_keys=True))
    planned_consumes = {}
    for placement in shares["placements"]:
        planned_consumes.setdefault(placement["workload"], set()).add(json.dumps(placement["consumes"], sort_keys=True))
    assert consumed == planned_consumes
    for placement in shares["placements"]:
        key = (placement["pool"], placement["device"])
        plan_devices[key] = plan_devices.get(key, 0) + placement["replicas"]
    assert sorted(cluster_devices.values()) == sorted(plan_devices.values()), (cluster_devices, plan_devices)
    if per_node:
        nodes = {}
        for entry in allocated:
            nodes[entry["pool"]] = nodes.get(entry["pool"], 0) + 1
        assert nodes == dict((n, c) for n, c in shares["by_node"].items() if c), (nodes, shares["by_node"])


def test_4gi_x40_five_per_card_the_rest_unschedulable(mix):
    kubeconfig, api, ns = mix
    workloads = [{"name": "inference", "memory": "4Gi", "replicas": 40}]
    result = plan(kubeconfig, [dict(w, device_class="fit-gpu") for w in workloads])
    assert result["strategies"]["memory_shares"]["total"] == 30, result["strategies"]["memory_shares"]
    outcome = run_mix(api, ns, workloads)
    compare(result, outcome, allocations(api, ns), workloads)


def test_10gi_8gi_4gi_mixed_then_what_the_claims_left(mix):
    kubeconfig, api, ns = mix
    workloads = [{"name": "big", "memory": "10Gi", "replicas": 11}, {"name": "mid", "memory": "8Gi", "replicas": 3},
                 {"name": "small", "memory": "4Gi", "replicas": 3}]
    result = plan(kubeconfig, workloads)
    assert [row["memory_shares"] for row in result["workloads"]] == [11, 1, 1], result["workloads"]
    outcome = run_mix(api, ns, workloads)
    # Which card keeps room after eleven 10Gi claims is the scheduler's choice: no per-node comparison.
    compare(result, outcome, allocations(api, ns), workloads, per_node=False)

    # Planned now from what the claims' allocations consumed: 2.49Gi left on five cards, 0.49Gi on one.
    later = [{"name": "tiny", "memory": "2Gi", "replicas": 8}]
    again = plan(kubeconfig, later)
    assert again["strategies"]["memory_shares"]["total"] == 5, again["strategies"]["memory_shares"]
    outcome = run_mix(api, ns, later)
    compare(again, outcome, [a for a in allocations(api, ns) if a["workload"] == "tiny"], later, per_node=False)


def test_a_class_that_selects_only_l4(mix):
    """One node, so no node choice: the allocator's slice order decides, device by device."""
    kubeconfig, api, ns = mix
    workloads = [{"name": "l4-first", "memory": "8Gi", "replicas": 3, "device_class": "fit-l4"},
                 {"name": "l4-then", "memory": "8Gi", "replicas": 7, "device_class": "fit-l4"}]
    result = plan(kubeconfig, workloads)
    assert result["strategies"]["memory_shares"]["by_node"] == {"node-a": 0, "node-b": 8}, result["strategies"]
    outcome = run_mix(api, ns, workloads)
    allocated = allocations(api, ns)
    compare(result, outcome, allocated, workloads)
    cluster, planned = {}, {}
    for entry in allocated:
        key = (entry["workload"], entry["device"])
        cluster[key] = cluster.get(key, 0) + 1
    for placement in result["strategies"]["memory_shares"]["placements"]:
        planned[(placement["workload"], placement["device"])] = placement["replicas"]
    assert cluster == planned


def test_a_claim_without_a_memory_request_takes_a_whole_card(mix):
    """NVIDIA's memory mode: the policy's default is the whole card. One 8Gi share first (the L4
    class: one node, no choice), then seven claims asking for no memory: the five untouched cards
    take one each, the shared card none, two are Unschedulable."""
    kubeconfig, api, ns = mix
    workloads = [{"name": "share", "memory": "8Gi", "replicas": 1, "device_class": "fit-l4"},
                 {"name": "whole", "memory": "default", "replicas": 7}]
    result = plan(kubeconfig, [dict(w, device_class=w.get("device_class", "fit-gpu")) for w in workloads])
    assert [row["memory_shares"] for row in result["workloads"]] == [1, 5], result["workloads"]
    outcome = run_mix(api, ns, workloads)
    compare(result, outcome, allocations(api, ns), workloads, per_node=False)


def test_mode_n_three_claims_per_card_whatever_their_memory():
    """NVIDIA's mode N (3): memory as in unlimited, plus a shares capacity of 3 that each claim
    takes one of, so three 1Gi claims fill a card; in a lab of its own (the mode is the driver's)."""
    with cluster("3") as (kubeconfig, api):
        core = client.CoreV1Api(api)
        ns = "fit-" + uuid.uuid4().hex[:6]
        core.create_namespace({"metadata": {"name": ns}})
        workloads = [{"name": "tiny", "memory": "1Gi", "replicas": 20}]
        result = plan(kubeconfig, workloads)
        assert result["strategies"]["memory_shares"]["total"] == 18, result["strategies"]["memory_shares"]
        assert result["strategies"]["memory_shares"]["placements"][0]["consumes"] == {"memory": "1Gi", "shares": "1"}
        outcome = run_mix(api, ns, workloads)
        compare(result, outcome, allocations(api, ns), workloads)
