from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import pod_status


def pod(name, phase, node="n", containers=(), conditions=(), namespace="gpu-operator"):
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "containerStatuses": list(containers), "conditions": list(conditions)}}


WAITING = {"name": "plugin", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}}
READY = {"type": "Ready", "status": "True"}


def test_plugin_pod_problems_are_told_in_words():
    assert pod_status.state(pod("p", "Pending", containers=[WAITING]))["problem"] == \
        "plugin: ImagePullBackOff no such image"
    assert pod_status.state(pod("p", "Running", node=None))["problem"] is None


def test_only_pods_that_are_not_ready_are_listed_with_why():
    pods = [
        pod("ok", "Running", conditions=[READY]),
        pod("done", "Succeeded"),
        pod("pull", "Pending", containers=[WAITING]),
        pod("unscheduled", "Pending", node=None, conditions=[
            {"type": "PodScheduled", "status": "False", "message": "0/2 nodes are available"}]),
        pod("probing", "Running", conditions=[{"type": "Ready", "status": "False",
                                               "message": "containers with unready status: [plugin]"}]),
        pod("crashed", "Running", containers=[
            {"name": "plugin", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]),
    ]
    assert pod_status.not_ready(pods) == [
        "gpu-operator/pull on n is Pending (plugin: ImagePullBackOff no such image)",
        "gpu-operator/unscheduled on no node is Pending (phase Pending: 0/2 nodes are available)",
        "gpu-operator/probing on n is Running (not Ready: containers with unready status: [plugin])",
        "gpu-operator/crashed on n is Running (plugin exited with 1 (Error))",
    ]
