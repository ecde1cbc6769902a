"""dra.gpu.resource_slice_info's output options against the lab: `output: summary` gives the
summary of the full output, `fields` projects the devices, and the raw-JSON reads carry the
user's credentials (a token without rights is refused with the server's message)."""

import json
import os

from kubernetes import client as k8s

from conftest import DRIVER, RESOURCE, driver_slice, hold_a_gpu, run_playbook, task_results

MODULE = "dra.gpu.resource_slice_info"


def side_by_side(*variants):
    """Run the module once per argument set, in one play (back to back); return their results."""
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "tasks": [{"name": "v%d" % index, MODULE: args, "ignore_errors": True}
                       for index, args in enumerate(variants)]}]
    _rc, report, _stderr = run_playbook(play)
    return [result for _name, result in task_results(report)]


def test_summary_output_equals_the_summary_of_the_full_output(plugin_everywhere, gpu_class, core, custom, namespace,
                                                              test_driver):
    hold_a_gpu(core, custom, namespace, gpu_class)
    # a second driver with a complete pool, a device on no node, and an incomplete pool (ignored)
    custom.create_cluster_custom_object(*RESOURCE, driver_slice(test_driver, "p-ok", "node-a", devices=("d-0", "d-1")))
    everywhere = driver_slice(test_driver, "p-fabric", None, devices=("f-0",))
    del everywhere["spec"]["nodeName"]
    everywhere["spec"]["allNodes"] = True
    custom.create_cluster_custom_object(*RESOURCE, everywhere)
    custom.create_cluster_custom_object(*RESOURCE, driver_slice(test_driver, "p-half", "node-b", count=2))

    cases = [{}, {"driver": DRIVER}, {"driver": test_driver}, {"nodes": ["node-b"]},
             {"node_selector": "nvidia.com/gpu.product=NVIDIA-L4"}, {"pool": "node-a", "driver": DRIVER},
             {"include_allocations": False}]
    for args in cases:
        full, summary = side_by_side(args, dict(args, output="summary"))
        assert not full.get("failed") and not summary.get("failed"), (args, full.get("msg"), summary.get("msg"))
        assert "devices" not in summary, args
        assert summary["summary"] == full["summary"], args
        assert summary["ignored_pools"] == full["ignored_pools"], args
        for key in ("by_node", "by_driver", "by_model"):
            assert list(summary["summary"][key]) == list(full["summary"][key]), (args, key)

    full, summary = side_by_side({}, {"output": "summary"})
    counts = summary["summary"]
    assert counts["total"]["count"] == len(full["devices"]) >= 9  # 6 GPUs + 3 of the test driver
    assert counts["total"]["allocated"] == sum(1 for d in full["devices"] if d["allocated"]) >= 1
    assert counts["by_node"]["(all_nodes)"]["count"] == 1
    assert counts["by_driver"][test_driver] == {"count": 3, "allocated": 0, "free": 3, "tainted": 0,
                                                "memory_bytes": 3 * 2 ** 30, "memory": "3Gi"}
    assert counts["by_model"]["NVIDIA L4"]["memory"] == "92136Mi"
    assert {"driver": test_driver, "pool": "p-half", "generation": 1,
            "reason": "incomplete: 1 of 2 slices published"} in summary["ignored_pools"]


def test_fields_keep_only_the_chosen_keys(plugin_everywhere, gpu_class, core, custom, namespace):
    hold_a_gpu(core, custom, namespace, gpu_class)
    full, some = side_by_side({"driver": DRIVER}, {"driver": DRIVER, "fields": ["node", "name", "claim", "pods"]})
    assert some["devices"] == [{"node": d["node"], "name": d["name"], "claim": d["claim"], "pods": d["pods"]}
                               for d in full["devices"]]
    assert [d for d in some["devices"] if d["claim"] == namespace + "/held"] == [
        {"node": d["node"], "name": d["name"], "claim": namespace + "/held", "pods": [namespace + "/holder"]}
        for d in full["devices"] if d["claim"] == namespace + "/held"]
    assert some["summary"] == full["summary"]


def test_fields_with_summary_output_are_refused_before_reading():
    result, = side_by_side({"output": "summary", "fields": ["node"]})
    assert result["failed"] and "output is summary, which returns no devices" in result["msg"]
    result, = side_by_side({"fields": ["node", "colour"]})
    assert result["failed"] and "colour" in result["msg"]


def test_raw_reads_use_the_given_credentials(plugin_everywhere, api, namespace):
    """The lean reads go through the same ApiClient: a token given as api_key is what the server sees."""
    with open(os.environ["KUBECONFIG"]) as handle:
        lab = json.load(handle)
    server = lab["clusters"][0]["cluster"]["server"]
    ca = lab["clusters"][0]["cluster"]["certificate-authority"]
    core = k8s.CoreV1Api(api)
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "no-rights"}})
    token = core.create_namespaced_service_account_token("no-rights", namespace, {
        "spec": {"audiences": [], "expirationSeconds": 600}}).status.token
    admin = lab["users"][0]["user"]["token"]
    allowed, refused = side_by_side({"host": server, "api_key": admin, "ca_cert": ca, "output": "summary"},
                                    {"host": server, "api_key": token, "ca_cert": ca, "output": "summary"})
    assert not allowed.get("failed") and allowed["summary"]["total"]["count"] >= 6
    assert refused["failed"]
    assert refused["msg"].startswith("could not read ResourceSlices: ")
    assert "forbidden" in refused["msg"] and "system:serviceaccount:%s:no-rights" % namespace in refused["msg"]
