"""Upgrading NVIDIA's DRA driver across its chart rename (nvidia-dra-driver-gpu 25.12.0 ->
dra-driver-nvidia-gpu 0.4.1), as NVIDIA's upgrade notes say: the new chart's CRDs applied
first, nameOverride so that the kubelet plugin keeps its DaemonSet, and no way back.

Against the lab with the stand-in charts from a local directory (real Helm, real DaemonSets
and CRDs; simulated nodes and driver). The release is removed again at the end.
"""

import os
import subprocess
import sys

import pytest
from kubernetes import client

from conftest import DRIVER, run_playbook, slices_lister, task_results
from waiting import wait_until_gone

CHART_REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "charts", "chart_repo.py")
NAMESPACE = "nvidia-dra-driver-gpu"
OLD_DAEMONSET = "nvidia-dra-driver-gpu-kubelet-plugin"


@pytest.fixture(scope="module")
def charts(tmp_path_factory):
    directory = tmp_path_factory.mktemp("stand-in-charts")
    subprocess.run([sys.executable, CHART_REPO, "build", str(directory)], check=True, capture_output=True)
    return str(directory)


def gpu_operator(charts, version, state="present", check=False):
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": "dra.gpu.gpu_operator",
                        "vars": {"gpu_operator_version": version, "gpu_operator_state": state,
                                 "gpu_operator_chart_source": "local", "gpu_operator_chart_dir": charts,
                                 "gpu_operator_force_removal": True,
                                 "gpu_operator_timeout": 120, "gpu_operator_slice_timeout": 120}}]}]
    rc, report, stderr = run_playbook(play, extra_args=["--check"] if check else [])
    results = task_results(report)
    failed = [r.get("msg") for _name, r in results if r.get("failed")]
    # Role tasks are reported as "<role> : <task name>".
    return rc, {name.split(" : ")[-1]: result for name, result in results}, failed, stderr


def plugin_daemonsets(apps):
    return {d.metadata.name: d for d in apps.list_namespaced_daemon_set(NAMESPACE).items
            if d.metadata.name.endswith("-kubelet-plugin")}


@pytest.fixture(scope="module")
def old_release(api, custom, charts):
    rc, _results, failed, stderr = gpu_operator(charts, "v25.10.1")
    assert rc == 0, (failed, stderr[-2000:])
    yield
    rc, _results, failed, stderr = gpu_operator(charts, "v26.3.3", state="absent")
    assert rc == 0, (failed, stderr[-2000:])
    wait_until_gone(slices_lister(custom), lambda s: s["spec"]["driver"] == DRIVER, "the driver's slices", timeout=90)


def test_the_renamed_chart_keeps_the_kubelet_plugin_applies_its_crds_first_and_has_no_way_back(api, old_release, charts):
    apps = client.AppsV1Api(api)
    before = plugin_daemonsets(apps)
    assert list(before) == [OLD_DAEMONSET]
    assert before[OLD_DAEMONSET].metadata.labels["app.kubernetes.io/version"] == "25.12.0"

    rc, results, failed, stderr = gpu_operator(charts, "v26.3.3")
    assert rc == 0, (failed, stderr[-2000:])
    plan = results["Plan the releases and node labels, refusing what would not work"]
    assert plan["dra_driver_upgrade"] == {"name_override": "nvidia-dra-driver-gpu", "apply_crds": True,
                                          "from": "25.12.0"}
    assert plan["releases"][1]["values"]["nameOverride"] == "nvidia-dra-driver-gpu"
    assert plan["plugin"]["daemonset"] == OLD_DAEMONSET
    assert any("nameOverride=nvidia-dra-driver-gpu" in note for note in plan["notes"])
    assert sorted(c["metadata"]["name"] for c in plan["dra_driver_crds"]) == [
        "computedomaincliques.resource.nvidia.com", "computedomains.resource.nvidia.com"]
    crds = results["Apply the DRA driver chart's CRDs before upgrading it"]
    assert [r["item"]["metadata"]["name"] for r in crds["results"]] == \
        [c["metadata"]["name"] for c in plan["dra_driver_crds"]]
    # One kubelet-plugin DaemonSet, the old one now running the renamed chart: no second one
    # beside it handing out the same GPUs.
    after = plugin_daemonsets(apps)
    assert list(after) == [OLD_DAEMONSET]
    assert after[OLD_DAEMONSET].metadata.labels["app.kubernetes.io/version"] == "0.4.1"
    assert after[OLD_DAEMONSET].metadata.uid == before[OLD_DAEMONSET].metadata.uid
    ext = client.ApiextensionsV1Api(api)
    for crd in plan["dra_driver_crds"]:
        assert ext.read_custom_resource_definition(crd["metadata"]["name"])

    # The next run keeps the override (nothing renamed) and changes nothing.
    rc, results, failed, stderr = gpu_operator(charts, "v26.3.3")
    assert rc == 0, (failed, stderr[-2000:])
    again = results["Plan the releases and node labels, refusing what would not work"]
    assert again["dra_driver_upgrade"] == {"name_override": "nvidia-dra-driver-gpu", "apply_crds": False,
                                           "from": "0.4.1"}
    assert not any(r.get("changed") for name, r in results.items() if name.startswith(("Install", "Apply", "Label")))

    # NVIDIA supports no way back: refused before any change.
    rc, _results, failed, _stderr = gpu_operator(charts, "v25.10.1")
    assert rc != 0
    assert len(failed) == 1 and "going back to 25.12.0 is not supported" in failed[0]
    assert plugin_daemonsets(apps)[OLD_DAEMONSET].metadata.labels["app.kubernetes.io/version"] == "0.4.1"
