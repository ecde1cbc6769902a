"""smoke.py: the smoke test's settings and the objects it makes, against plain dicts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.smoke import smoke


def test_claim_spec_exact_and_prioritized():
    exact = smoke.claim_spec("gpu.nvidia.com", 2, ["true"])
    assert exact["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.nvidia.com", "count": 2, "selectors": [{"cel": {"expression": "true"}}]}
    listed = smoke.claim_spec("gpu.nvidia.com", first_available=[{"name": "big", "count": 1}, {"count": 2}])
    alternatives = listed["devices"]["requests"][0]["firstAvailable"]
    assert [a["name"] for a in alternatives] == ["big", "alt1"] and alternatives[1]["count"] == 2


def test_restricted_pods_satisfy_pod_security():
    pod = smoke.pod_manifest("p", "run1", "img", ["sh"], {"resourceClaimTemplateName": "t"})
    context = pod["spec"]["containers"][0]["securityContext"]
    assert context["runAsNonRoot"] and context["capabilities"] == {"drop": ["ALL"]}
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["containers"][0]["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert pod["metadata"]["labels"][smoke.RUN_LABEL] == "run1"


def test_settings_name_the_options_and_fill_in_their_defaults():
    s = smoke.settings({"count": 2, "pods": 3, "verify": "allocation", "keep": True})
    assert (s.devices_per_claim, s.probe_pods, s.verify_container, s.keep_objects) == (2, 3, False, True)
    assert s.namespace == "dra-gpu-smoke-test" and s.timeout == 300 and s.command == smoke.DEFAULT_COMMAND
    assert s.selectors == [] and s.first_available == [] and s.expect == {} and s.node_selector == {}
    assert (s.namespace_security, s.probe_security) == ("restricted", "restricted")
    unlabelled = smoke.settings({"pod_security": "none"})
    assert (unlabelled.namespace_security, unlabelled.probe_security) == (None, "privileged")
    assert set(smoke.ARGUMENT_SPEC) == set(("namespace device_class count selectors first_available pods image "
                                            "command probe probe_pattern probe_attribute verify driver expect "
                                            "node_selector tolerations pod_security pod_annotations timeout "
                                            "keep share_memory").split())
    assert s.share_memory is None and smoke.settings({"share_memory": "8Gi"}).share_memory == "8Gi"


def test_namespace_and_claim_objects():
    ns = smoke.namespace_manifest("smoke", "baseline")
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert "pod-security.kubernetes.io/enforce" not in smoke.namespace_manifest("smoke", None)["metadata"]["labels"]
    spec = smoke.claim_spec("gpu.nvidia.com")
    shared, ref = smoke.claim_object("smoke-1", "1", spec, True, "resource.k8s.io/v1")
    assert shared["kind"] == "ResourceClaim" and shared["spec"] == spec and ref == {"resourceClaimName": "smoke-1"}
    template, ref = smoke.claim_object("smoke-1", "1", spec, False, "resource.k8s.io/v1")
    assert template["kind"] == "ResourceClaimTemplate" and template["spec"]["spec"] == spec
    assert template["spec"]["metadata"]["labels"][smoke.RUN_LABEL] == "1"
    assert ref == {"resourceClaimTemplateName": "smoke-1"}
