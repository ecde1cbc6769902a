"""What the waits of a node's way back to the device plugin look at (gpu_manager_wait)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.workloads import gpu_manager_wait as waits


def pod(name, node, phase="Running"):
    return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {"phase": phase}}


def test_only_unfinished_plugin_pods_on_the_nodes_are_waited_for():
    pods = [pod("plugin-a", "node-a"), pod("plugin-b", "node-b"), pod("old", "node-a", "Succeeded")]
    assert waits.plugin_pods_on(pods, ["node-a"]) == ["node-a/plugin-a"]
    assert waits.plugin_pods_on(pods, ["node-c"]) == []


def test_only_the_drivers_slices_on_the_nodes_are_waited_for():
    slices = [{"metadata": {"name": n}, "spec": {"driver": d, "nodeName": node}}
              for n, d, node in (("s1", "gpu.nvidia.com", "node-a"), ("s2", "other.example.com", "node-a"),
                                 ("s3", "gpu.nvidia.com", "node-b"))]
    assert waits.slices_on(slices, ["node-a"], "gpu.nvidia.com") == ["s1"]


def test_a_node_serves_again_once_it_offers_nvidia_gpu_allocatable():
    nodes = [{"metadata": {"name": "node-a"}, "status": {"allocatable": {"nvidia.com/gpu": "2"}}},
             {"metadata": {"name": "node-b"}, "status": {"capacity": {"nvidia.com/gpu": "4"},
                                                         "allocatable": {"nvidia.com/gpu": "0"}}}]
    assert waits.not_serving(nodes, ["node-a", "node-b", "node-c"]) == ["node-b", "node-c"]
