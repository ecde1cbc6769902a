"""A cluster that does not serve resource.k8s.io/v1 (a 1.34.4 lab with DRA turned off):
the roles refuse before changing anything, and say why."""

import json
import os
import subprocess
import sys

import pytest

import old_lab
from conftest import run_module, run_playbook, task_results

VERSION = "1.34.4"
CHART_REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "charts", "chart_repo.py")


@pytest.fixture(scope="module")
def no_dra_cluster():
    kubeconfig = old_lab.start(VERSION, without_dra=True)
    yield {"KUBECONFIG": kubeconfig}
    old_lab.stop(VERSION, without_dra=True)


def kubectl_json(env, *args):
    out = subprocess.run(["kubectl", *args, "-o", "json"], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["items"]


def test_gpu_operator_refuses_before_touching_anything(no_dra_cluster, tmp_path):
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": "dra.gpu.gpu_operator",
                        "vars": {"gpu_operator_version": "v26.3.1", "gpu_operator_min_kubernetes_version": "1.34",
                                 "gpu_operator_chart_source": "local", "gpu_operator_chart_dir": str(tmp_path)}}]}]
    rc, report, _stderr = run_playbook(play, env=no_dra_cluster)
    assert rc != 0
    failed = [r for _name, r in task_results(report) if r.get("failed")]
    assert len(failed) == 1 and "does not serve resource.k8s.io/v1" in failed[0]["msg"]
    assert "refused before installing anything" in failed[0]["msg"]
    env = dict(os.environ, **no_dra_cluster)
    assert kubectl_json(env, "get", "secrets", "-A", "-l", "owner=helm") == []  # no Helm release
    labels = [n["metadata"].get("labels", {}) for n in kubectl_json(env, "get", "nodes")]
    assert not any("nvidia.com/dra-kubelet-plugin" in node_labels for node_labels in labels)


def test_dra_readiness_names_the_missing_api(no_dra_cluster):
    result = run_module("dra.gpu.dra_readiness", {"min_version": "1.34"}, env=no_dra_cluster)
    assert not result["ready"]
    assert [b["name"] for b in result["blockers"]] == ["resource_api"]
    assert "does not serve resource.k8s.io/v1" in result["blockers"][0]["message"]


def test_the_stand_in_chart_refuses_a_gpucluster_without_the_dra_api(no_dra_cluster, tmp_path):
    """As NVIDIA's chart does: rendered against the live cluster's API list (helm --validate)."""
    env = dict(os.environ, **no_dra_cluster)
    subprocess.run([sys.executable, CHART_REPO, "build", str(tmp_path)], env=env, check=True, capture_output=True)
    proc = subprocess.run(["helm", "template", "gpu-operator", str(tmp_path / "gpu-operator-v26.7.0.tgz"),
                           "--validate", "--set", "clusterPolicy.deployCR=false", "--set", "gpuCluster.deployCR=true",
                           "--set", "driver.nvidiaDriverCRD.enabled=true"],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "needs the resource.k8s.io/v1 API" in proc.stderr
