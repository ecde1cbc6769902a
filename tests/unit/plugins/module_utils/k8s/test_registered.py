from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import registered

A, B, C = ({"metadata": {"name": n}} for n in "abc")


def test_objects_of_a_result_a_loop_of_results_and_a_plain_list():
    assert registered.objects({"resources": [A, B]}) == [A, B]
    assert registered.objects({"results": [{"resources": [A]}, {"resources": []}, {"skipped": True}, {"resources": [C]}]}) \
        == [A, C]
    assert registered.objects([B]) == [B]
    assert registered.objects(None) == [] and registered.objects({"resources": None}) == []


def test_unlisted_names_what_the_list_no_longer_names_sorted_once():
    found = {"results": [{"resources": [C, A]}, {"resources": [B, C]}]}
    assert registered.unlisted(found, ["b"]) == ["a", "c"]
    assert registered.unlisted(found, []) == ["a", "b", "c"]
    assert registered.unlisted({"skipped": True}, ["a"]) == []
