from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import upgrade_not_asked, version_needed

needed_by = version_needed.FilterModule().filters()["version_needed"]
stop_message = upgrade_not_asked.FilterModule().filters()["upgrade_not_asked"]


def test_version_needed_reads_the_run_s_settings():
    assert needed_by({"gpu_operator_dra_consumable_shares": "memory"})["version"] == "1.36"
    assert needed_by({})["version"] == "1.35"


def test_upgrade_not_asked_is_empty_without_hops_and_names_the_target_with_them():
    needed = needed_by({})
    assert stop_message({"current": "1.35.4", "hops": []}, needed) == ""
    message = stop_message({"current": "1.34.4", "hops": [{"version": "1.35.4"}], "node_order": []}, needed, ["i.yml"])
    assert "1.34.4 -> 1.35.4" in message
    assert "ansible-playbook -i i.yml playbooks/site.yml -e cluster_upgrade_target=1.35" in message
