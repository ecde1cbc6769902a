"""The simulated kubelet's version: from the topology, or from the annotation upgrade tests set."""

from labctl.apiserver.sim import agent


class RecordingCore:
    def __init__(self):
        self.status_patches = []
        self.node_patches = []

    def patch_node_status(self, name, body):
        self.status_patches.append((name, body))

    def patch_node(self, name, body):
        self.node_patches.append((name, body))


def simulator(topology_version=None):
    sim = agent.Simulator.__new__(agent.Simulator)
    sim.nodes = {"node-a": {"name": "node-a", "kubelet_version": topology_version}}
    sim.kubelet_version = "v1.35.4"
    sim.core = RecordingCore()
    return sim


def node(reported, annotation=None, ready="True"):
    annotations = {agent.KUBELET_VERSION_ANNOTATION: annotation} if annotation else {}
    return {"metadata": {"name": "node-a", "annotations": annotations},
            "status": {"nodeInfo": {"kubeletVersion": reported}, "conditions": [{"type": "Ready", "status": ready}]}}


def test_annotation_overrides_the_lab_version_and_restarts_the_kubelet():
    sim = simulator()
    sim.keep_node_ready(node("v1.35.4", annotation="v1.34.4"))
    (name, body), = sim.core.status_patches
    assert name == "node-a" and body["status"]["nodeInfo"]["kubeletVersion"] == "v1.34.4"


def test_nothing_to_do_when_the_reported_version_is_installed():
    sim = simulator()
    sim.keep_node_ready(node("v1.34.4", annotation="v1.34.4"))
    sim.keep_node_ready(node("v1.35.4"))
    assert sim.core.status_patches == []


def test_without_annotation_the_topology_version_wins_over_the_lab_version():
    sim = simulator(topology_version="v1.33.7")
    sim.keep_node_ready(node("v1.34.4"))
    assert sim.core.status_patches[0][1]["status"]["nodeInfo"]["kubeletVersion"] == "v1.33.7"
