"""dra.gpu.pods_not_ready on what kubernetes.core.k8s_info really returns from the lab.

The gpu_operator role's failure message lists the releases' pods that are not ready through
this filter; here a pod whose image cannot be pulled (the simulated kubelet's ErrImagePull),
one the real scheduler cannot place, and one that runs are read back the role's way.
"""

from conftest import PAUSE, on_node, run_playbook, task_results
from waiting import wait_for_object

SIMULATE = "lab.dra.gpu/simulate-probe"


def pod(name, node_selector, annotations=None):
    return {"metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"nodeSelector": node_selector, "containers": [{"name": "main", "image": PAUSE}]}}


def test_the_lines_name_each_pod_that_is_not_ready_with_why(core, namespace):
    core.create_namespaced_pod(namespace, pod("runs", on_node("node-a")))
    core.create_namespaced_pod(namespace, pod("pull", on_node("node-b"), {SIMULATE: "image-pull-error"}))
    core.create_namespaced_pod(namespace, pod("nowhere", {"kubernetes.io/hostname": "no-such-node"}))
    wait_for_object(core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "runs" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in p["status"].get("conditions") or []),
        "pod runs Ready", timeout=90, namespace=namespace)
    wait_for_object(core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "pull" and (
        (p["status"].get("containerStatuses") or [{}])[0].get("state") or {}).get("waiting"),
        "pod pull waiting", timeout=90, namespace=namespace)
    wait_for_object(core.list_namespaced_pod, lambda p: p["metadata"]["name"] == "nowhere" and any(
        c.get("reason") == "Unschedulable" for c in p["status"].get("conditions") or []),
        "pod nowhere unschedulable", timeout=90, namespace=namespace)
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local", "tasks": [
        {"name": "read", "kubernetes.core.k8s_info": {"kind": "Pod", "namespace": "{{ item }}"},
         "loop": [namespace], "register": "pods"},
        {"name": "lines", "ansible.builtin.debug": {"msg": "{{ pods | dra.gpu.pods_not_ready }}"}}]}]
    rc, report, stderr = run_playbook(play)
    assert rc == 0, stderr
    lines = [r["msg"] for name, r in task_results(report) if name == "lines"][0]
    assert sorted(lines) == sorted([
        "%s/pull on node-b is Pending (main: ErrImagePull simulated: failed to pull image %s: not found)"
        % (namespace, PAUSE),
        "%s/nowhere on no node is Pending (phase Pending: %s)" % (namespace, unschedulable_message(core, namespace)),
    ]), lines


def unschedulable_message(core, namespace):
    nowhere = core.read_namespaced_pod("nowhere", namespace)
    return [c.message for c in nowhere.status.conditions if c.reason == "Unschedulable"][0]
