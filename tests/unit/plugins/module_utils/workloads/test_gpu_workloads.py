from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_workloads as gw


def container(gpus=None, name="main", where="limits", **extra):
    resources = {where: {"nvidia.com/gpu": gpus}} if gpus is not None else {}
    return dict({"name": name, "image": "x", "resources": resources}, **extra)


def template(containers, init=None, claims=None):
    spec = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if claims:
        spec["resourceClaims"] = claims
    return {"spec": spec}


def meta(name, namespace="ml", owner=None):
    data = {"name": name, "namespace": namespace}
    if owner:
        data["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    return data


def deployment(name, spec, replicas=2, namespace="ml"):
    return {"metadata": meta(name, namespace), "spec": {"replicas": replicas, "template": spec}}


def pod(name, spec, owner=None, node=None, phase="Running", claim_statuses=None, namespace="ml"):
    status = {"phase": phase}
    if claim_statuses:
        status["resourceClaimStatuses"] = claim_statuses
    return {"metadata": meta(name, namespace, owner), "spec": dict(spec, **({"nodeName": node} if node else {})),
            "status": status}


def node(name, gpus=None):
    allocatable = {"cpu": "8"}
    if gpus is not None:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name}, "status": {"allocatable": allocatable}}


def slice_of(node_name, devices=1, driver="gpu.nvidia.com"):
    return {"spec": {"driver": driver, "nodeName": node_name, "devices": [{"name": "gpu-%d" % i}
                                                                          for i in range(devices)]}}


def test_gpus_per_pod_counts_as_the_scheduler_does():
    assert gw.gpus_per_pod(template([container(1), container(2, "b")])["spec"]) == 3
    # requests alone count too (limits default to them for extended resources)
    assert gw.gpus_per_pod(template([container("1", where="requests")])["spec"]) == 1
    # an init container runs alone: the larger of it and the containers' sum
    assert gw.gpus_per_pod(template([container(1)], init=[container(4, "init")])["spec"]) == 4
    # a sidecar (restartPolicy Always) runs beside the containers: added
    assert gw.gpus_per_pod(template([container(1)], init=[container(1, "side", restartPolicy="Always")])["spec"]) == 2
    assert gw.gpus_per_pod(template([container()])["spec"]) == 0


def test_asks_tells_the_old_way_from_claims():
    old = template([container(1)])["spec"]
    new = template([container()], claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])["spec"]
    both = template([container(1)], claims=[{"name": "gpu", "resourceClaimName": "shared"}])["spec"]
    assert gw.asks_for(old) == "device-plugin"
    assert gw.asks_for(new) == "dra"
    assert gw.asks_for(both) == "both"
    assert gw.asks_for(template([container()])["spec"]) is None
    assert gw.claim_refs(both) == [{"name": "gpu", "claim": "shared"}]


def test_cron_job_pod_spec_and_replicas():
    job_spec = {"parallelism": 3, "template": template([container(1)])}
    cron = {"metadata": meta("nightly"), "spec": {"jobTemplate": {"spec": job_spec}}}
    assert gw.gpus_per_pod(gw.pod_spec("CronJob", cron)) == 1
    assert gw.replicas("CronJob", cron) == 3
    assert gw.replicas("Job", {"spec": {}}) == 1
    assert gw.replicas("Deployment", {"spec": {}}) == 1


def test_node_served_by_sees_both_managers():
    with_slices = gw.nodes_with_devices([slice_of("b"), slice_of("c"), slice_of("e", devices=0),
                                         slice_of("d", driver="gpu.example.com")])
    assert with_slices == {"b", "c"}
    assert gw.node_served_by(node("a", 4), with_slices) == "device-plugin"
    assert gw.node_served_by(node("b"), with_slices) == "dra"
    assert gw.node_served_by(node("c", 2), with_slices) == "both"
    assert gw.node_served_by(node("d", 0), with_slices) == "none"


def test_report_groups_pods_under_the_workload_a_person_manages():
    old = template([container(1)])
    dep = deployment("llm", old)
    replica_set = {"metadata": meta("llm-abc", owner=("Deployment", "llm")), "spec": {"replicas": 2, "template": old}}
    pods = [pod("llm-abc-1", old["spec"], owner=("ReplicaSet", "llm-abc"), node="a"),
            pod("llm-abc-2", old["spec"], owner=("ReplicaSet", "llm-abc"), phase="Pending")]
    claimed = template([container()], claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    bare = pod("notebook", claimed["spec"], node="b",
               claim_statuses=[{"name": "gpu", "resourceClaimName": "notebook-gpu-x1"}])
    cpu_only = deployment("web", template([container()]))
    claims = [{"metadata": {"name": "notebook-gpu-x1", "namespace": "ml"},
               "status": {"allocation": {"devices": {"results": [
                   {"driver": "gpu.nvidia.com", "pool": "b", "device": "gpu-0"}]}}}}]
    found = gw.report({"Deployment": [dep, cpu_only], "ReplicaSet": [replica_set], "Pod": pods + [bare]},
                      [node("a", 1), node("b"), node("c", 1)], [slice_of("b"), slice_of("c")], claims)
    kinds = [(w["kind"], w["name"], w["asks"]) for w in found["workloads"]]
    # the ReplicaSet and its pods are reported under the Deployment; the CPU-only one not at all
    assert kinds == [("Deployment", "llm", "device-plugin"), ("Pod", "notebook", "dra")]
    llm, notebook = found["workloads"]
    assert llm["replicas"] == 2 and llm["gpus_per_pod"] == 1
    assert [(p["name"], p["node"], p["node_served_by"]) for p in llm["pods"]] == [
        ("llm-abc-1", "a", "device-plugin"), ("llm-abc-2", None, None)]
    assert notebook["pods"][0]["claims"] == [{"name": "gpu", "claim": "notebook-gpu-x1", "exists": True,
                                              "allocated": True, "devices": ["gpu.nvidia.com/b/gpu-0"]}]
    assert found["nodes"] == {"a": "device-plugin", "b": "dra", "c": "both"}
    assert found["summary"] == {"device_plugin_workloads": 1, "dra_workloads": 1, "mixed_workloads": 0,
                                "device_plugin_gpus_held": 1, "nodes_served_by_both": ["c"]}


def test_report_keeps_an_owned_pod_whose_owner_is_gone_out_and_filters_namespaces():
    old = template([container(1)])
    orphan_of_job = pod("train-1", old["spec"], owner=("Job", "train"))
    job = {"metadata": meta("train", owner=("CronJob", "nightly")), "spec": {"template": old}}
    cron = {"metadata": meta("nightly"), "spec": {"jobTemplate": {"spec": {"template": old}}}}
    other = deployment("elsewhere", old, namespace="other")
    found = gw.report({"CronJob": [cron], "Job": [job], "Pod": [orphan_of_job], "Deployment": [other]},
                      [], [], [], namespaces=["ml"])
    assert [(w["kind"], w["name"], [p["name"] for p in w["pods"]]) for w in found["workloads"]] == [
        ("CronJob", "nightly", ["train-1"])]
    # a claim the pod names but that does not exist yet
    missing = pod("p", template([container()], claims=[{"name": "g", "resourceClaimName": "gone"}])["spec"])
    state = gw.report({"Pod": [missing]}, [], [], [])["workloads"][0]["pods"][0]["claims"]
    assert state == [{"name": "g", "claim": "gone", "exists": False, "allocated": False, "devices": []}]
