from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import unlisted


def test_the_filter_is_named_unlisted_and_reads_a_registered_result():
    function = unlisted.FilterModule().filters()["unlisted"]
    assert function({"resources": [{"metadata": {"name": "old"}}, {"metadata": {"name": "kept"}}]}, ["kept"]) == ["old"]
