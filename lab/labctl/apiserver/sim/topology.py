"""Read a lab topology YAML into a list of simulated nodes."""

import yaml

from labctl.apiserver.sim.gpus import TopologyError, node_devices

MAX_NODES = 1000


def _node(entry, where):
    if not isinstance(entry, dict) or not entry.get("name"):
        raise TopologyError("%s: each node needs a name" % where)
    gpus = entry.get("gpus") or []
    if not isinstance(gpus, list):
        raise TopologyError("%s: gpus must be a list of {model, count, mig}" % where)
    labels = entry.get("labels") or {}
    return {"name": str(entry["name"]), "gpus": gpus, "labels": {str(k): str(v) for k, v in labels.items()},
            "taints": entry.get("taints") or [], "kubelet_version": entry.get("kubelet_version")}


def load(path):
    with open(path) as handle:
        data = yaml.safe_load(handle) or {}
    nodes = [_node(entry, "%s nodes[%d]" % (path, i)) for i, entry in enumerate(data.get("nodes") or [])]
    for i, group in enumerate(data.get("node_groups") or []):
        prefix, count = group.get("name_prefix"), int(group.get("count", 0))
        if not prefix or count < 1:
            raise TopologyError("%s node_groups[%d]: needs name_prefix and a positive count" % (path, i))
        width = len(str(count - 1))
        for n in range(count):
            entry = dict(group, name="%s%0*d" % (prefix, width, n))
            nodes.append(_node(entry, "%s node_groups[%d]" % (path, i)))
    if not nodes:
        raise TopologyError("%s defines no nodes" % path)
    if len(nodes) > MAX_NODES:
        raise TopologyError("%s defines %d nodes; the lab supports at most %d" % (path, len(nodes), MAX_NODES))
    names = [n["name"] for n in nodes]
    if len(set(names)) != len(names):
        raise TopologyError("%s: node names must be unique" % path)
    for node in nodes:
        node["devices"] = node_devices(node["name"], node["gpus"])
    return nodes
