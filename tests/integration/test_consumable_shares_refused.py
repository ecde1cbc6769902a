"""Issue 27 item 2, the refusal: on Kubernetes 1.35 with DRAConsumableCapacity off (its
default), memory shares of a GPU cannot work - the API server drops a claim's
capacity.requests and the driver's allowMultipleAllocations - and asking for them is refused
before anything changes, naming the fix. Nothing is applied: DeviceClasses, claim templates,
node labels, Helm releases, DaemonSets and namespaces are listed before and after.

On the test lab when it runs 1.35 (as `make test` starts it), else on a 1.35.4 lab beside it.
"""

import uuid

import pytest
from kubernetes.client.exceptions import ApiException

from ansible_collections.dra.gpu.plugins.module_utils.sharing import sharing_config
from shares_lab import build_charts, cluster_state, clients, lab_at, operator_vars, run_role

VERSION = "1.35.4"
FIX = ["Upgrade to Kubernetes 1.36 or later", "needs Kubernetes 1.36+ or the feature gate DRAConsumableCapacity",
       "turn the feature gate DRAConsumableCapacity on for kube-apiserver, kube-scheduler, kube-controller-manager "
       "and every kubelet"]


@pytest.fixture(scope="module")
def lab(api):
    with lab_at(api, VERSION, 600, lambda m: m == 35) as kubeconfig:
        yield kubeconfig


@pytest.fixture(scope="module")
def charts(tmp_path_factory):
    return build_charts(tmp_path_factory.mktemp("stand-in-charts"))


@pytest.fixture(scope="module")
def team_namespace(lab):
    _api, core, _apps, _custom = clients(lab)
    name = "it-shares-" + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def test_the_api_server_really_drops_what_memory_shares_need(lab, team_namespace):
    """The premise of the refusal, seen on this server: a template's memory request is gone."""
    _api, _core, _apps, custom = clients(lab)
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu-8gi"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com", "capacity": {"requests": {"memory": "8Gi"}}}}]}}}}
    kept = custom.create_namespaced_custom_object("resource.k8s.io", "v1", team_namespace, "resourceclaimtemplates",
                                                  template, dry_run="All")
    assert "capacity" not in kept["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    # And the memory class's selector does not even compile here (the field exists from 1.36 on).
    selector = sharing_config.class_selectors({"strategy": "memory"})[0]
    with pytest.raises(ApiException) as refused:
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "it-gpu-memory"},
            "spec": {"selectors": [{"cel": {"expression": selector}}]}}, dry_run="All")
    assert refused.value.status == 422 and "undefined field 'allowMultipleAllocations'" in refused.value.body


def test_gpu_operator_refuses_the_mode_before_any_label_or_release(lab, charts):
    before = cluster_state(lab)
    rc, results, failed = run_role(lab, "dra.gpu.gpu_operator", operator_vars(charts))
    assert rc != 0 and len(failed) == 1, failed
    plan = results["Plan the releases and node labels, refusing what would not work"]
    assert plan.get("failed"), plan
    message = plan["msg"]
    assert message.startswith("refused before installing anything: gpu_operator_dra_consumable_shares: this API "
                              "server (v1.35.4) drops a claim's capacity requests"), message
    assert all(words in message for words in FIX), message
    assert "Install the charts" not in results and "Label the GPU nodes for the DRA kubelet plugin" not in results
    assert cluster_state(lab) == before


def test_gpu_operator_check_mode_refuses_the_same(lab, charts):
    before = cluster_state(lab)
    rc, _results, failed = run_role(lab, "dra.gpu.gpu_operator", operator_vars(charts), check=True)
    assert rc != 0 and len(failed) == 1 and "drops a claim's capacity requests" in failed[0]
    assert cluster_state(lab) == before


def test_gpu_sharing_refuses_a_memory_class_and_its_templates_before_applying_anything(lab, team_namespace):
    before = cluster_state(lab)
    rc, results, failed = run_role(lab, "dra.gpu.gpu_sharing", {
        "gpu_sharing_classes": [{"name": "it-gpu-memory", "strategy": "memory"}],
        "gpu_sharing_claim_templates": [{"name": "gpu-8gi", "namespace": team_namespace, "class": "it-gpu-memory",
                                         "memory": "8Gi"}]})
    assert rc != 0 and len(failed) == 1, failed
    message = results["Render the classes and check them against NVIDIA's driver"]["msg"]
    assert message.startswith("gpu_sharing_classes: nothing was applied: this API server (v1.35.4) drops a claim's "
                              "capacity requests"), message
    assert all(words in message for words in FIX), message
    # The driver's side too: no kubelet plugin here shares by memory, and the role says which variable does.
    assert "gpu_operator_dra_consumable_shares" in message
    assert "cannot tell" not in message
    assert cluster_state(lab) == before
