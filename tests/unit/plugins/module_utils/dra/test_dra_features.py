from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.dra import dra_features


def test_the_table_and_what_roles_say():
    rules = {"gate": "DRADeviceTaintRules", "stage": "beta", "on": False}
    assert dra_features.expected(36)["device_taint_rules"] == rules
    assert dra_features.expected(38)["consumable_capacity"]["on"] is None  # not known: not tested
    assert dra_features.needs("consumable_capacity").startswith(
        "needs Kubernetes 1.36+ or the feature gate DRAConsumableCapacity on kube-apiserver")
    assert "alpha and off by default in 1.35, beta and on in 1.36" in dra_features.needs("consumable_capacity")
    assert dra_features.needs("device_taint_rules").startswith("needs Kubernetes 1.37+ (DRADeviceTaintRules")
    assert "or the feature gate" not in dra_features.needs("device_taint_rules")
    assert dra_features.first_on("extended_resource") == 36 and dra_features.first_on("admin_access") == 35
    said = dra_features.refusal("extended_resource", "1.35.4", "the class lost extendedResourceName")
    assert said.startswith("extended resource (DeviceClass extendedResourceName) is off on this cluster (1.35.4)")
    assert "needs Kubernetes 1.36+ or the feature gate DRAExtendedResource" in said and said.endswith("Nothing was changed")
