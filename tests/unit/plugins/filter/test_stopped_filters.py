from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import classes_stopped, operator_stopped


def test_the_filters_are_registered_and_pass_their_arguments_through():
    operator = operator_stopped.FilterModule().filters()["operator_stopped"]
    classes = classes_stopped.FilterModule().filters()["classes_stopped"]
    assert operator({"msg": "x"}, "t", {"node_patches": [], "releases": [{"name": "r"}]}).startswith(
        'gpu_operator stopped at "t": x. Node labels changed: none; not changed: none. Releases installed: none; '
        "not installed: r.")
    assert "Not applied: a." in classes({"msg": "x"}, "t", [{"name": "a"}])
