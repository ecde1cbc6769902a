from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import node_names


def test_the_filter_is_named_node_names_and_maps_hosts_to_node_names():
    function = node_names.FilterModule().filters()["node_names"]
    assert function(["h1", "h2"], {"h1": {"x": "node-1"}}, "x") == {"h1": "node-1", "h2": "h2"}
