"""The planned values, rendered by the stand-in charts with the real helm, per version and mode.

No lab needed: `helm template` with the resource.k8s.io/v1 API. The refusal without it is
rendered against a live cluster without DRA in test_without_dra_api.py; the molecule
scenario molecule/gpu_operator installs the charts into the lab.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHARTS = os.path.join(HERE, "..", "fixtures", "charts")

from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_catalog as catalog
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import gpu_operator_values as gov
from ansible_collections.dra.gpu.plugins.module_utils.nvidia import driver_gates

HELM = shutil.which("helm")
pytestmark = pytest.mark.skipif(HELM is None, reason="helm is not on PATH (eval \"$(make -s lab-env)\")")
COMBINATIONS = [(v, "auto", None) for v in catalog.supported_operator_versions()] + \
    [("v26.7.0", "standalone", None), ("v26.7.0", "gpucluster", None)] + \
    [(v, "standalone", other) for v in ("v26.3.3", "v26.7.0")
     for other in catalog.OPERATOR_VERSIONS[catalog.parse_version(v)[:2]]["dra_drivers"][1:]]


@pytest.fixture(scope="module")
def repo():
    dest = tempfile.mkdtemp(prefix="stand-in-repo-")
    subprocess.run([sys.executable, os.path.join(CHARTS, "chart_repo.py"), "build", dest, "--helm", HELM], check=True)
    yield dest
    shutil.rmtree(dest)


def chart_file(repo, chart, version):
    """The packaged chart: NVIDIA's DRA driver releases carry no "v" (0.4.1), the GPU Operator's
    do (v26.7.0); a plan may spell either, as Helm matches both."""
    for spelling in (version, version.lstrip("v"), "v" + version.lstrip("v")):
        path = os.path.join(repo, "%s-%s.tgz" % (chart, spelling))
        if os.path.exists(path):
            return path
    raise AssertionError("no %s %s in %s" % (chart, version, sorted(os.listdir(repo))))


def render(repo, release, api=True):
    path = chart_file(repo, release["chart"], release["chart_version"])
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        yaml.safe_dump(release["values"], handle)
    # As against the lab: NVIDIA's DRA chart (and its stand-in) has kubeVersion >=1.32, which
    # helm template's default (1.20) fails.
    cmd = [HELM, "template", release["name"], path, "-n", release["namespace"], "-f", handle.name,
           "--kube-version", "1.35.4"]
    if api:
        cmd += ["--api-versions", "resource.k8s.io/v1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    os.unlink(handle.name)
    return proc, [d for d in yaml.safe_load_all(proc.stdout) if d] if proc.returncode == 0 else []


def by_kind(docs, kind):
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


@pytest.mark.parametrize("version,mode,dra_version", COMBINATIONS)
@pytest.mark.parametrize("nodes", [["node-b"], []])
def test_planned_values_render(repo, version, mode, dra_version, nodes):
    try:
        plan = gov.plan(version, mode, gpu_nodes=["node-a", "node-b"], dra_nodes=nodes, dra_driver_version=dra_version)
    except catalog.PlanError as exc:
        assert nodes and "cannot migrate node by node" in str(exc)
        return
    rendered = {}
    for release in plan["releases"]:
        proc, docs = render(repo, release)
        assert proc.returncode == 0, proc.stderr
        rendered[release["chart"]] = docs
    operator = rendered["gpu-operator"]
    device_plugin = by_kind(operator, "DaemonSet").get("nvidia-device-plugin-daemonset")
    assert (device_plugin is not None) == plan["device_plugin_enabled"] == bool(nodes)
    if plan["layout"] == "standalone":
        dra = by_kind(rendered[plan["releases"][1]["chart"]], "DaemonSet")[plan["plugin"]["daemonset"]]
        assert dra["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/dra-kubelet-plugin": "true"}
        # Only the selector label is the chart's promise; the real chart adds app.kubernetes.io/ labels.
        label, value = plan["plugin"]["pod_selector"].split("=")
        assert dra["spec"]["template"]["metadata"]["labels"][label] == value == "kubelet-plugin"
        assert dra["metadata"]["labels"]["app.kubernetes.io/version"] == plan["releases"][1]["chart_version"]
        assert dra["spec"]["selector"]["matchLabels"] == {label: value}
        env = yaml.safe_load(by_kind(operator, "Deployment")["gpu-operator"]["spec"]["template"]["metadata"]
                             ["annotations"]["stand-in.dra.gpu/driver-manager-env"])
        assert env == [{"name": "NODE_LABEL_FOR_GPU_POD_EVICTION", "value": "nvidia.com/dra-kubelet-plugin"}]
    else:
        plugin = by_kind(operator, "DaemonSet")[plan["plugin"]["daemonset"]]
        label, value = plan["plugin"]["pod_selector"].split("=")
        assert plugin["spec"]["template"]["metadata"]["labels"][label] == value


@pytest.mark.parametrize("chart,version,values,message", [
    ("gpu-operator", "v26.7.0", {"gpuCluster": {"deployCR": True}}, "cannot both be true"),
    ("gpu-operator", "v26.7.0", {"clusterPolicy": {"deployCR": False}, "gpuCluster": {"deployCR": True}},
     "nvidiaDriverCRD"),
    ("dra-driver-nvidia-gpu", "0.4.1", {}, "gpuResourcesEnabledOverride=true"),
])
def test_stand_ins_refuse_like_the_real_charts(repo, chart, version, values, message):
    proc, _docs = render(repo, {"name": "x", "namespace": "x", "chart": chart, "chart_version": version,
                                "values": values})
    assert proc.returncode != 0 and message in proc.stderr


@pytest.mark.parametrize("version,mode", [("v25.10.1", "auto"), ("v26.7.0", "gpucluster")])
def test_sharing_gates_reach_the_kubelet_plugin(repo, version, mode):
    """gpu_operator_dra_sharing -> chart values -> FEATURE_GATES on the plugin's gpus container,
    read back by the reader dra.gpu.gpu_sharing uses to refuse classes whose gate is off."""
    for sharing, expected in ((True, {"MPSSupport": True, "TimeSlicingSettings": True}), (False, {})):
        plan = gov.plan(version, mode, gpu_nodes=["node-a"], sharing=sharing)
        daemonsets = []
        for release in plan["releases"]:
            proc, docs = render(repo, release)
            assert proc.returncode == 0, proc.stderr
            daemonsets += list(by_kind(docs, "DaemonSet").values())
        plugins = driver_gates.kubelet_plugins(daemonsets)
        assert len(plugins) == 1 and plugins[0]["gates"] == expected
        assert (driver_gates.problem(["MPSSupport", "TimeSlicingSettings"], plugins) is None) == sharing


@pytest.mark.parametrize("version,mode,shares", [("v26.7.0", "auto", "memory"), ("v26.7.0", "gpucluster", "4"),
                                                 ("v26.3.3", "auto", None)])
def test_consumable_shares_settings_reach_the_plugins_gpus_container(repo, version, mode, shares):
    """gpu_operator_dra_consumable_shares -> plan -> chart values -> CONSUMABLE_SHARES and the gate on the
    gpus container, in the DRA chart 0.5.0 that v26.7 pairs and in v26.7's GPUCluster alike, read
    back by the reader dra.gpu.gpu_sharing uses to refuse memory classes the driver cannot serve."""
    plan = gov.plan(version, mode, gpu_nodes=["node-a"], consumable_shares=shares,
                    dra_driver_version="0.5.0" if mode == "auto" else None)
    proc, docs = render(repo, plan["releases"][-1])
    assert proc.returncode == 0, proc.stderr
    daemonset = by_kind(docs, "DaemonSet")[plan["plugin"]["daemonset"]]
    spec = daemonset["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in {c["name"]: c for c in spec["containers"]}["gpus"].get("env") or []}
    if shares:
        assert env == {"CONSUMABLE_SHARES": shares, "FEATURE_GATES": "ConsumableShares=true,"}
    else:
        assert "CONSUMABLE_SHARES" not in env
    plugins = driver_gates.kubelet_plugins([daemonset])
    assert plugins[0]["consumable_shares"] == shares
    assert (driver_gates.shares_problem(plugins) is None) == bool(shares)
