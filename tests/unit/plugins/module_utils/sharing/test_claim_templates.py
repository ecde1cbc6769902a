from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.sharing import claim_templates
from ansible_collections.dra.gpu.plugins.module_utils.sharing.sharing_config import SharingConfigError

MEMORY = {"name": "nvidia-gpu-memory", "strategy": "memory"}
MANAGED = {"app.kubernetes.io/managed-by": "dra.gpu.gpu_sharing"}


def test_claim_templates_ask_for_memory_of_a_memory_class():
    bodies = claim_templates.claim_templates(
        [{"name": "gpu-8gi", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"}], [MEMORY], MANAGED)
    assert bodies == [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                       "metadata": {"name": "gpu-8gi", "namespace": "team-a", "labels": MANAGED},
                       "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                           "deviceClassName": "nvidia-gpu-memory", "capacity": {"requests": {"memory": "8Gi"}}}}]}}}}]


def test_every_bad_template_is_named_at_once():
    with pytest.raises(SharingConfigError) as err:
        claim_templates.claim_templates([
            {"name": "Bad_Name", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"},
            {"name": "t", "namespace": "team-a", "class": "ts", "memory": "8Gi"},
            {"name": "u", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "lots", "extra": 1},
            {"name": "v", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "512Ki"},
            {"name": "v", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "1Gi"},
            "gpu-8gi"],
            [MEMORY, {"name": "ts", "strategy": "time_slicing"}])
    text = str(err.value)
    assert "gpu_sharing_claim_templates[0].name" in text
    assert "gpu_sharing_claim_templates[1].class is 'ts'; a claim template asks for memory from a class of " \
           "strategy memory in gpu_sharing_classes (nvidia-gpu-memory)" in text
    assert "gpu_sharing_claim_templates[2].extra is not a setting" in text
    assert "gpu_sharing_claim_templates[2].memory is 'lots'" in text
    assert "gpu_sharing_claim_templates[3].memory is '512Ki', below 1Mi" in text
    assert "gpu_sharing_claim_templates[4]: team-a/v is listed twice" in text
    assert "gpu_sharing_claim_templates[5] must be a map" in text


def test_a_template_without_any_memory_class_says_how_to_add_one():
    with pytest.raises(SharingConfigError, match="there is none: add one"):
        claim_templates.claim_templates([{"name": "t", "namespace": "a", "class": "x", "memory": "1Gi"}], [])


def live_template(name, memory, labels=None, namespace="team-a", device_class="nvidia-gpu-memory"):
    body = claim_templates.template_body({"name": name, "namespace": namespace, "class": device_class,
                                         "memory": memory}, MANAGED if labels is None else labels)
    # As the API server returns it: defaults filled in.
    body["spec"]["spec"]["devices"]["requests"][0]["exactly"].update(allocationMode="ExactCount", count=1)
    return body


def test_template_changes_replace_what_changed_prune_what_is_gone_and_leave_others_alone():
    wanted = [claim_templates.template_body({"name": n, "namespace": "team-a", "class": "nvidia-gpu-memory",
                                            "memory": m}, MANAGED)
              for n, m in (("same", "8Gi"), ("same-bytes", "8192Mi"), ("changed", "4Gi"), ("new", "8Gi"))]
    live = [live_template("same", "8Gi"), live_template("same-bytes", "8Gi"), live_template("changed", "8Gi"),
            live_template("gone", "8Gi"), live_template("theirs", "8Gi", labels={})]
    changes = claim_templates.template_changes(wanted, live, MANAGED)
    assert changes == {"delete": [{"namespace": "team-a", "name": "changed", "reason": "changed"},
                                  {"namespace": "team-a", "name": "gone", "reason": "no longer listed"}],
                       "problems": []}
    clash = claim_templates.template_changes([claim_templates.template_body(
        {"name": "theirs", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"}, MANAGED)],
        live, MANAGED)
    assert clash["problems"] == ["ResourceClaimTemplate team-a/theirs exists and was not made by this role; give "
                                 "the template another name, or delete that one"]


def test_a_template_larger_than_every_gpu_is_refused():
    devices = [{"attributes": {"type": "gpu"}, "capacity": {"memory": "23034Mi"}},
               {"attributes": {"type": "mig"}, "capacity": {"memory": "40Gi"}}]
    small, big = (claim_templates.template_body({"name": n, "namespace": "a", "class": "c", "memory": m})
                  for n, m in (("small", "23034Mi"), ("big", "24Gi")))
    assert claim_templates.template_memory_problems([small], devices) == []
    problems = claim_templates.template_memory_problems([small, big], devices)
    assert problems == ["gpu_sharing_claim_templates[1] (a/big): memory 24Gi is more than the largest GPU has "
                        "(23034Mi); no claim of it could ever be allocated"]
    assert claim_templates.template_memory_problems([big], []) == []
