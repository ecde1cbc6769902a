from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import drain_budgets


def budget(name, allowed, selector=None, namespace="shop", generation=1, observed=1, status=True):
    obj = {"metadata": {"name": name, "namespace": namespace, "generation": generation}, "spec": {}}
    if selector is not None:
        obj["spec"]["selector"] = selector
    if status:
        obj["status"] = {"disruptionsAllowed": allowed, "observedGeneration": observed}
    return obj


def pod(name, labels, namespace="shop", phase="Running", owner=None, deleting=False, mirror=False):
    metadata = {"name": name, "namespace": namespace, "labels": labels}
    if owner:
        metadata["ownerReferences"] = [{"kind": owner, "name": "x"}]
    if deleting:
        metadata["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if mirror:
        metadata["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    return {"metadata": metadata, "spec": {"nodeName": "w1"}, "status": {"phase": phase}}


WEB = {"matchLabels": {"app": "web"}}


def test_without_pods_every_budget_that_allows_no_disruption_is_named_once_and_sorted():
    budgets = [budget("web", 0, WEB), budget("db", 1, WEB), budget("api", 0, WEB, namespace="a"),
               budget("web", 0, WEB)]
    assert drain_budgets.blocking(budgets) == ["a/api", "shop/web"]
    assert drain_budgets.blocking([]) == []


def test_a_budget_not_yet_counted_or_observed_refuses_evictions_too():
    assert drain_budgets.allows_no_disruption(budget("new", None, WEB, status=False))
    assert drain_budgets.allows_no_disruption(budget("changed", 3, WEB, generation=2, observed=1))
    assert drain_budgets.allows_no_disruption(budget("negative", -1, WEB))
    assert not drain_budgets.allows_no_disruption(budget("ok", 1, WEB))


def test_with_the_node_s_pods_only_budgets_selecting_one_of_them_block():
    budgets = [budget("web", 0, WEB), budget("db", 0, {"matchLabels": {"app": "db"}}),
               budget("other-ns", 0, WEB, namespace="elsewhere")]
    assert drain_budgets.blocking(budgets, [pod("web-1", {"app": "web"})]) == ["shop/web"]
    assert drain_budgets.blocking(budgets, []) == []


def test_match_expressions_and_empty_or_missing_selectors_as_policy_v1_reads_them():
    expressions = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]},
                                        {"key": "canary", "operator": "DoesNotExist"}]}
    budgets = [budget("gpu", 0, expressions), budget("all", 0, {}), budget("none", 0, None)]
    assert drain_budgets.blocking(budgets, [pod("p", {"tier": "gpu"})]) == ["shop/all", "shop/gpu"]
    assert drain_budgets.blocking(budgets, [pod("p", {"tier": "gpu", "canary": "1"})]) == ["shop/all"]
    assert drain_budgets.blocking(budgets, [pod("p", None)]) == ["shop/all"]


def test_pods_an_eviction_does_not_ask_a_budget_about_do_not_count():
    budgets = [budget("web", 0, WEB)]
    for quiet in (pod("p", {"app": "web"}, phase="Pending"), pod("p", {"app": "web"}, phase="Succeeded"),
                  pod("p", {"app": "web"}, phase="Failed"), pod("p", {"app": "web"}, deleting=True),
                  pod("p", {"app": "web"}, owner="DaemonSet"), pod("p", {"app": "web"}, mirror=True)):
        assert drain_budgets.blocking(budgets, [quiet]) == []
    assert drain_budgets.blocking(budgets, [pod("p", {"app": "web"}, owner="ReplicaSet")]) == ["shop/web"]
