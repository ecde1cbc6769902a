from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import blocking_budgets as plugin

# As Jinja sees it: through the plugin's table of filters.
blocking_budgets = plugin.FilterModule().filters()["blocking_budgets"]

WEB = {"metadata": {"name": "web", "namespace": "shop"}, "spec": {"selector": {"matchLabels": {"app": "web"}}},
       "status": {"disruptionsAllowed": 0}}
DB = {"metadata": {"name": "db", "namespace": "shop"}, "spec": {"selector": {"matchLabels": {"app": "db"}}},
      "status": {"disruptionsAllowed": 0}}
WEB_POD = {"metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}}, "status": {"phase": "Running"}}


def test_reads_registered_k8s_info_results_loops_and_lists():
    registered = {"changed": False, "resources": [WEB, DB]}
    assert blocking_budgets(registered) == ["shop/db", "shop/web"]
    assert blocking_budgets({"results": [{"resources": [WEB]}, {"resources": [DB]}]}) == ["shop/db", "shop/web"]
    assert blocking_budgets([DB]) == ["shop/db"]
    assert blocking_budgets({"resources": []}) == []


def test_the_node_s_pods_narrow_it_to_the_budgets_that_select_them():
    assert blocking_budgets({"resources": [WEB, DB]}, {"resources": [WEB_POD]}) == ["shop/web"]
    assert blocking_budgets([WEB, DB], [WEB_POD]) == ["shop/web"]
    # A read of the pods that found none: nothing on the node is guarded.
    assert blocking_budgets([WEB, DB], {"resources": []}) == []
