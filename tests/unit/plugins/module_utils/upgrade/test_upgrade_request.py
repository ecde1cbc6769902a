from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import upgrade_request, versions

HOPS = [{"version": "1.35", "minor": "1.35"}, {"version": "1.36", "minor": "1.36"}]
PLAN_1_34 = {"current": "1.34.4", "target": "1.36", "hops": HOPS,
             "node_order": [{"name": "cp-1", "role": "control-plane", "kubelet": "v1.34.4"},
                            {"name": "gpu-1", "role": "worker", "kubelet": "v1.34.4"}],
             "blockers": [], "cautions": [{"code": "unknown_patch", "message": "the newest patch of 1.35 is not known",
                                           "fix": "pass available_versions"}]}


def test_dra_alone_needs_the_dra_minimum():
    assert upgrade_request.version_needed({}) == {"version": versions.DRA_MINIMUM,
                                                  "reasons": ["DRA needs Kubernetes 1.35 or later"]}
    assert upgrade_request.version_needed({"gpu_operator_dra_consumable_shares": ""})["version"] == "1.35"
    assert upgrade_request.version_needed(None, dra_min="1.36")["version"] == "1.36"


def test_every_share_mode_needs_consumable_capacity_from_1_36():
    for mode in ("memory", "unlimited", 4):
        needed = upgrade_request.version_needed({"gpu_operator_dra_consumable_shares": mode})
        assert needed["version"] == "1.36"
        [reason] = needed["reasons"]
        assert reason.startswith("gpu_operator_dra_consumable_shares: %s (consumable capacity" % mode)
        assert "needs Kubernetes 1.36+ or the feature gate DRAConsumableCapacity" in reason


def test_a_cluster_at_the_needed_version_does_not_stop():
    assert upgrade_request.stop_message(dict(PLAN_1_34, hops=[]), {"version": "1.36", "reasons": []}, [], "site.yml") \
        is None


def test_an_older_cluster_stops_with_the_plan_and_the_command():
    needed = upgrade_request.version_needed({"gpu_operator_dra_consumable_shares": "memory"})
    message = upgrade_request.stop_message(PLAN_1_34, needed, ["inv.yml", "more.yml"], "/c/playbooks/site.yml")
    assert message.startswith("The cluster runs Kubernetes 1.34.4, older than this run needs: "
                              "gpu_operator_dra_consumable_shares: memory")
    assert "nothing was changed" in message
    assert "1.34.4 -> 1.35 -> 1.36, one minor per pass" in message
    assert "cp-1 (control-plane, kubelet v1.34.4), gpu-1 (worker, kubelet v1.34.4)" in message
    assert "Warning: the newest patch of 1.35 is not known (to fix: pass available_versions)." in message
    assert message.endswith("ansible-playbook -i inv.yml -i more.yml /c/playbooks/site.yml "
                            "-e cluster_upgrade_target=1.36 (add --check first to see each pass's plan without "
                            "changing anything).")
