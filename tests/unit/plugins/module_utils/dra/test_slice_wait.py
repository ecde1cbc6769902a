from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra.slice_wait import Goal


def devices(*nodes):
    return [{"node": n} for n in nodes]


def test_goal_total():
    assert Goal(min_devices=3).shortfall(devices("a", "b")) == ["2 of 3 devices published"]
    assert Goal(min_devices=2).shortfall(devices("a", "b")) == []


def test_goal_per_node_names_the_nodes_short_of_devices():
    goal = Goal(min_devices_per_node=2, nodes=["a", "b", "c"])
    assert goal.shortfall(devices("a", "a", "b")) == ["nodes short of devices: b (1 of 2), c (0 of 2)"]
    assert Goal(min_devices_per_node=1, nodes=["a"]).shortfall(devices("a")) == []
