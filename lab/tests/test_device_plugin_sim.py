"""The simulated NVIDIA device plugin: nvidia.com/gpu offered while its pod runs, and never two GPU managers."""

from labctl.apiserver.sim import agent

from test_mig_and_rejections import _simulator


class RecordingCore:
    def __init__(self):
        self.status_patches = []

    def patch_node_status(self, name, body):
        self.status_patches.append((name, body["status"]))


def _pod(node, labels, phase="Running", name=None):
    name = name or "pod-" + node
    return {"metadata": {"namespace": "gpu-operator", "name": name, "uid": "uid-" + name, "labels": labels,
                         "ownerReferences": [{"kind": "DaemonSet", "name": "ds"}]},
            "spec": {"nodeName": node}, "status": {"phase": phase}}


DEVICE_PLUGIN = {"app": "nvidia-device-plugin-daemonset"}
KUBELET_PLUGIN = {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}


def _offered(core, node):
    patches = [status for name, status in core.status_patches if name == node]
    return patches[-1]["allocatable"]["nvidia.com/gpu"] if patches else "never patched"


def test_the_device_plugin_offers_full_gpus_while_it_runs(tmp_path):
    sim = _simulator(tmp_path, "plugin")
    sim.register_nodes()
    sim.core = RecordingCore()
    # gpu-h100 has two full GPUs; gpu-a100-mig's only GPU is split into MIG devices, which the
    # plugin (without a MIG strategy) does not offer as nvidia.com/gpu
    sim.resync_plugins([_pod("gpu-h100", DEVICE_PLUGIN), _pod("gpu-a100-mig", DEVICE_PLUGIN)])
    assert _offered(sim.core, "gpu-h100") == "2"
    assert _offered(sim.core, "gpu-a100-mig") == "never patched"
    # the pod goes: the resource is removed (null in the patch), once
    sim.handle_pod("DELETED", _pod("gpu-h100", DEVICE_PLUGIN))
    assert _offered(sim.core, "gpu-h100") is None
    count = len(sim.core.status_patches)
    sim.resync_plugins([_pod("gpu-a100-mig", DEVICE_PLUGIN)])
    assert len(sim.core.status_patches) == count, "an unchanged node was patched again"


def test_a_node_with_the_device_plugin_publishes_no_dra_slices_unless_allowed(tmp_path):
    sim = _simulator(tmp_path, "plugin")
    sim.register_nodes()
    sim.core = RecordingCore()
    both = [_pod("gpu-h100", KUBELET_PLUGIN, name="dra"), _pod("gpu-h100", DEVICE_PLUGIN, name="old")]
    sim.resync_plugins(both)
    assert [s["spec"]["nodeName"] for s in sim.custom.stored] == []
    # a test that shows the over-admission lets the node run both
    ready = {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.35.4"}}
    annotations = {agent.BOTH_MANAGERS_ANNOTATION: "true"}
    sim._node_event("MODIFIED", {"metadata": {"name": "gpu-h100", "labels": {}, "annotations": annotations},
                                 "status": ready})
    assert [s["spec"]["nodeName"] for s in sim.custom.stored] == ["gpu-h100"]
    # the device plugin goes: DRA alone serves the node (still published, nvidia.com/gpu gone)
    sim.handle_pod("DELETED", both[1])
    assert [s["spec"]["nodeName"] for s in sim.custom.stored] == ["gpu-h100"]
    assert _offered(sim.core, "gpu-h100") is None


def test_always_mode_withholds_and_republishes_without_listing_slices(tmp_path):
    sim = _simulator(tmp_path, "always")
    sim.register_nodes()
    assert sim.check_slices() == []
    sim.core = RecordingCore()
    sim.resync_plugins([_pod("gpu-h100", DEVICE_PLUGIN)])
    assert sorted(s["spec"]["nodeName"] for s in sim.custom.stored) == ["gpu-a100-mig"]
    sim.resync_plugins([])
    assert sorted(s["spec"]["nodeName"] for s in sim.custom.stored) == ["gpu-a100-mig", "gpu-h100"]
