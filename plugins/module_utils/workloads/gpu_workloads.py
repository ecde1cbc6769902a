# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which workloads ask for GPUs the device plugin's way (``nvidia.com/gpu``) and which through DRA claims.

Pure logic over listed objects (Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs,
CronJobs, Pods, Nodes, ResourceClaims, ResourceSlices as the API returns them), so the
rules are tested without a cluster. A migration starts from this list: one workload at a
time, nodes that still run device-plugin pods first.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import quantity
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import nvidia

DEVICE_PLUGIN_RESOURCE = nvidia.DEVICE_PLUGIN_RESOURCE
DEFAULT_DRIVER = nvidia.DRA_DRIVER

# Kinds a person manages, in the order they are reported. A ReplicaSet or Job is reported
# only without an owner (otherwise its Deployment or CronJob is), a Pod only without one.
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "ReplicaSet", "Pod")


def pod_spec(kind, obj):
    """The pod spec a workload's pods are made from."""
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    return ((spec.get("template") or {}).get("spec")) or {}


def _container_gpus(container):
    resources = container.get("resources") or {}
    # An extended resource must have requests equal to limits; either may be written alone.
    value = (resources.get("limits") or {}).get(DEVICE_PLUGIN_RESOURCE)
    if value is None:
        value = (resources.get("requests") or {}).get(DEVICE_PLUGIN_RESOURCE)
    return int(quantity.parse_quantity(str(value))) if value is not None else 0


def gpus_per_pod(spec):
    """``nvidia.com/gpu`` one pod holds: the larger of its containers' sum and its largest init
    container (init containers run one after another), sidecars (restartPolicy Always) added
    to the containers, as the scheduler counts a pod's request."""
    init = spec.get("initContainers") or []
    sidecars = sum(_container_gpus(c) for c in init if c.get("restartPolicy") == "Always")
    plain_init = [_container_gpus(c) for c in init if c.get("restartPolicy") != "Always"]
    running = sum(_container_gpus(c) for c in spec.get("containers") or []) + sidecars
    return max([running] + plain_init)


def claim_refs(spec):
    """The pod spec's claims: ``{name, claim}`` (a shared ResourceClaim) or ``{name, template}``."""
    refs = []
    for entry in spec.get("resourceClaims") or []:
        ref = {"name": entry.get("name")}
        if entry.get("resourceClaimName"):
            ref["claim"] = entry["resourceClaimName"]
        if entry.get("resourceClaimTemplateName"):
            ref["template"] = entry["resourceClaimTemplateName"]
        refs.append(ref)
    return refs


def asks_for(spec):
    """How the pod spec asks for GPUs: ``device-plugin``, ``dra``, ``both`` or None."""
    old, new = gpus_per_pod(spec) > 0, bool(claim_refs(spec))
    if old and new:
        return "both"
    return "device-plugin" if old else ("dra" if new else None)


def replicas(kind, obj):
    spec = obj.get("spec") or {}
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        return spec.get("replicas", 1)
    if kind == "Job":
        return spec.get("parallelism", 1)
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("parallelism", 1)
    if kind == "DaemonSet":
        return (obj.get("status") or {}).get("desiredNumberScheduled")
    return 1


def offers_device_plugin_gpus(node):
    """Whether the kubelet reports the device plugin's GPUs as allocatable: it drops them to zero
    once the plugin has gone (the capacity may linger a few minutes), so allocatable is what the
    scheduler goes by."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return int(quantity.parse_quantity(str(allocatable.get(DEVICE_PLUGIN_RESOURCE, "0")))) > 0


def node_served_by(node, slice_nodes, driver=DEFAULT_DRIVER):
    """``device-plugin`` when the node offers ``nvidia.com/gpu`` (the plugin registers it with the
    kubelet), ``dra`` when the driver publishes its devices, ``both`` (the over-admission a
    migration must never leave: two managers handing out the same GPUs), or ``none``."""
    name = node["metadata"]["name"]
    plugin = offers_device_plugin_gpus(node)
    dra = name in slice_nodes
    if plugin and dra:
        return "both"
    return "device-plugin" if plugin else ("dra" if dra else "none")


def nodes_with_devices(slices, driver=DEFAULT_DRIVER):
    """Nodes whose ResourceSlices of ``driver`` publish at least one device."""
    found = set()
    for item in slices:
        spec = item.get("spec") or {}
        if spec.get("driver") == driver and spec.get("nodeName") and spec.get("devices"):
            found.add(spec["nodeName"])
    return found


def controller_of(obj):
    """(kind, name) of the object's controlling owner, or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("kind"), ref.get("name")
    return None


def _key(namespace, kind, name):
    return "%s/%s/%s" % (namespace, kind, name)


def top_owner(pod, objects):
    """The workload a person manages for ``pod``: follows controller owners (Pod -> ReplicaSet ->
    Deployment, Pod -> Job -> CronJob) as far as the listed objects go."""
    namespace = pod["metadata"]["namespace"]
    kind, name = "Pod", pod["metadata"]["name"]
    current = pod
    for _hop in range(3):
        owner = controller_of(current)
        if owner is None:
            break
        parent = objects.get(_key(namespace, owner[0], owner[1]))
        kind, name = owner
        if parent is None:
            break
        current = parent
    return kind, name


def _claim_state(claim):
    if claim is None:
        return {"exists": False, "allocated": False, "devices": []}
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return {"exists": True, "allocated": bool(results),
            "devices": ["%s/%s/%s" % (r.get("driver"), r.get("pool"), r.get("device")) for r in results]}


def _pod_claims(pod, claims):
    """Each of the pod's claims with its state: the generated claim's name comes from the pod's
    status (resourceClaimStatuses), a shared claim's from the spec."""
    namespace = pod["metadata"]["namespace"]
    generated = dict((s.get("name"), s.get("resourceClaimName"))
                     for s in (pod.get("status") or {}).get("resourceClaimStatuses") or [])
    states = []
    for ref in claim_refs(pod.get("spec") or {}):
        claim_name = ref.get("claim") or generated.get(ref["name"])
        state = _claim_state(claims.get("%s/%s" % (namespace, claim_name)) if claim_name else None)
        states.append(dict(state, name=ref["name"], claim=claim_name))
    return states


def report(listed, nodes, slices, claims, driver=DEFAULT_DRIVER, namespaces=None):
    """Every workload that asks for GPUs, old way or new, with its pods and the nodes they run on.

    ``listed`` maps a kind of WORKLOAD_KINDS to its objects; ``claims`` are ResourceClaims.
    Returns ``{workloads, nodes, summary}``.
    """
    slice_nodes = nodes_with_devices(slices, driver)
    served = dict((n["metadata"]["name"], node_served_by(n, slice_nodes, driver)) for n in nodes)
    objects = {}
    for kind in WORKLOAD_KINDS:
        for obj in listed.get(kind) or []:
            objects[_key(obj["metadata"]["namespace"], kind, obj["metadata"]["name"])] = obj
    claim_index = dict(("%s/%s" % (c["metadata"]["namespace"], c["metadata"]["name"]), c) for c in claims)
    pods_of = {}
    for pod in listed.get("Pod") or []:
        kind, name = top_owner(pod, objects)
        pods_of.setdefault(_key(pod["metadata"]["namespace"], kind, name), []).append(pod)

    workloads = []
    for kind in WORKLOAD_KINDS:
        for obj in sorted(listed.get(kind) or [], key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"])):
            meta = obj["metadata"]
            if namespaces and meta["namespace"] not in namespaces:
                continue
            if kind in ("ReplicaSet", "Job", "Pod") and controller_of(obj) is not None:
                continue
            spec = pod_spec(kind, obj)
            way = asks_for(spec)
            if way is None:
                continue
            pods = []
            for pod in sorted(pods_of.get(_key(meta["namespace"], kind, meta["name"]), []),
                              key=lambda p: p["metadata"]["name"]):
                node = (pod.get("spec") or {}).get("nodeName")
                pods.append({"name": pod["metadata"]["name"], "phase": (pod.get("status") or {}).get("phase"),
                             "node": node, "node_served_by": served.get(node) if node else None,
                             "claims": _pod_claims(pod, claim_index)})
            workloads.append({"namespace": meta["namespace"], "kind": kind, "name": meta["name"], "asks": way,
                              "replicas": replicas(kind, obj), "gpus_per_pod": gpus_per_pod(spec),
                              "claims": claim_refs(spec), "pods": pods})
    return {"workloads": workloads, "nodes": served, "summary": summary(workloads, served)}


def summary(workloads, served):
    count = dict((way, 0) for way in ("device-plugin", "dra", "both"))
    for item in workloads:
        count[item["asks"]] += 1
    held = sum(item["gpus_per_pod"] for item in workloads for pod in item["pods"]
               if pod["phase"] in ("Running", "Pending") and pod["node"])
    return {"device_plugin_workloads": count["device-plugin"], "dra_workloads": count["dra"],
            "mixed_workloads": count["both"], "device_plugin_gpus_held": held,
            "nodes_served_by_both": sorted(n for n, way in served.items() if way == "both")}
