"""The stand-in charts (tests/fixtures/charts) say at the API what NVIDIA's real charts say:
names, versions, labels, defaults, DeviceClasses and the images they would make a cluster pull.

No lab needed: the stand-ins are packaged by chart_repo.py and rendered with the real helm, as
the role's Helm would against a 1.35.4 cluster. The figures asserted here were read in
NVIDIA's released charts (gpu-operator v25.10.0-v26.7.0, DRA driver v25.12.0, v0.4.0, v0.4.1, and
0.5.0 as the driver repository's main branch has it: the stored copy ends before the v0.5.0 tag).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHART_REPO = os.path.join(HERE, "..", "fixtures", "charts", "chart_repo.py")
HELM = shutil.which("helm")
pytestmark = pytest.mark.skipif(HELM is None, reason="helm is not on PATH (eval \"$(make -s lab-env)\")")
API = ["--api-versions", "resource.k8s.io/v1", "--kube-version", "1.35.4"]
MIRROR = "mirror.example.com/nv"
OPERATOR_VERSIONS = ["v25.10.0", "v25.10.1", "v26.3.0", "v26.3.1", "v26.3.2", "v26.3.3", "v26.7.0"]
DRA_SWITCH_ON = ["--set", "gpuResourcesEnabledOverride=true"]


@pytest.fixture(scope="module")
def repo():
    dest = tempfile.mkdtemp(prefix="stand-in-charts-")
    subprocess.run([sys.executable, CHART_REPO, "build", dest, "--helm", HELM], check=True, capture_output=True)
    yield dest
    shutil.rmtree(dest)


def render(chart, *args, check=True):
    proc = subprocess.run([HELM, "template", "rel", chart, "-n", "ns"] + list(args), capture_output=True, text=True,
                          check=False)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc, [d for d in yaml.safe_load_all(proc.stdout) if d] if proc.returncode == 0 else []


def of_kind(docs, kind):
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def pod_annotations(doc):
    return doc["spec"]["template"]["metadata"].get("annotations") or {}


def all_images(docs):
    """Every image the render says the real chart would make the cluster pull."""
    images = {}
    for doc in docs:
        if doc["kind"] in ("Deployment", "DaemonSet"):
            notes = pod_annotations(doc)
            images["%s/%s" % (doc["kind"], doc["metadata"]["name"])] = notes["stand-in.dra.gpu/image"]
            images.update(json.loads(notes.get("stand-in.dra.gpu/images", "{}")))
    return images


# ----- the repository --------------------------------------------------------------------


def test_the_repository_spells_versions_as_nvidia_does(repo):
    index = yaml.safe_load(open(os.path.join(repo, "index.yaml")))["entries"]
    assert sorted(v["version"] for v in index["gpu-operator"]) == sorted(OPERATOR_VERSIONS)
    assert sorted(v["version"] for v in index["dra-driver-nvidia-gpu"]) == ["0.4.0", "0.4.1", "0.5.0"]
    assert [v["version"] for v in index["nvidia-dra-driver-gpu"]] == ["25.12.0"]
    assert {v["appVersion"] for v in index["dra-driver-nvidia-gpu"]} == {"0.4.0", "0.4.1", "0.5.0"}
    assert {v["kubeVersion"] for v in index["dra-driver-nvidia-gpu"] + index["nvidia-dra-driver-gpu"]} \
        == {">=1.32.0-0"}


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("spelling", ["0.4.1", "v0.4.1"])
def test_helm_finds_a_dra_version_with_or_without_its_v(repo, tmp_path, spelling):
    port = _free_port()
    pidfile = str(tmp_path / "pid")
    subprocess.run([sys.executable, CHART_REPO, "serve", repo, "--port", str(port), "--pidfile", pidfile], check=True)
    try:
        proc, docs = render("dra-driver-nvidia-gpu", "--repo", "http://127.0.0.1:%d" % port, "--version", spelling,
                            *(API + DRA_SWITCH_ON))
    finally:
        subprocess.run([sys.executable, CHART_REPO, "stop", "--pidfile", pidfile], check=True)
    assert of_kind(docs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]["metadata"]["labels"][
        "app.kubernetes.io/version"] == "0.4.1"


# ----- NVIDIA's DRA driver chart ---------------------------------------------------------


def dra(repo, chart="dra-driver-nvidia-gpu", version="0.4.1"):
    return os.path.join(repo, "%s-%s.tgz" % (chart, version))


def test_the_dra_chart_wants_kubernetes_1_32(repo):
    proc, _docs = render(dra(repo), "--api-versions", "resource.k8s.io/v1", "--kube-version", "1.31.9",
                         *DRA_SWITCH_ON, check=False)
    assert proc.returncode != 0 and ">=1.32.0-0" in proc.stderr


def test_the_dra_chart_deploys_what_nvidias_does(repo):
    _proc, docs = render(dra(repo), *(API + DRA_SWITCH_ON))
    plugin = of_kind(docs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]
    assert plugin["spec"]["selector"]["matchLabels"] == {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}
    labels = plugin["spec"]["template"]["metadata"]["labels"]
    assert labels["dra-driver-nvidia-gpu-component"] == "kubelet-plugin"
    assert labels["app.kubernetes.io/name"] == "dra-driver-nvidia-gpu" and labels["app.kubernetes.io/instance"] == "rel"
    # one pod, both drivers: compute domains are on by default
    assert [c["name"] for c in plugin["spec"]["template"]["spec"]["containers"]] == ["compute-domains", "gpus"]
    controller = of_kind(docs, "Deployment")["dra-driver-nvidia-gpu-controller"]
    assert controller["spec"]["selector"]["matchLabels"] == {"dra-driver-nvidia-gpu-component": "controller"}
    classes = {name: c["spec"]["selectors"][0]["cel"]["expression"] for name, c in of_kind(docs, "DeviceClass").items()}
    gpu = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '%s'"
    domain = "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == "
    assert classes == {"gpu.nvidia.com": gpu % "gpu", "mig.nvidia.com": gpu % "mig", "vfio.gpu.nvidia.com": gpu % "vfio",
                       "compute-domain-daemon.nvidia.com": domain + "'daemon'",
                       "compute-domain-default-channel.nvidia.com":
                           domain + "'channel' && device.attributes['compute-domain.nvidia.com'].id == 0"}
    assert of_kind(docs, "DeviceClass")["gpu.nvidia.com"]["spec"]["extendedResourceName"] == "nvidia.com/gpu"


def test_without_compute_domains_there_is_no_controller_and_no_second_container(repo):
    _proc, docs = render(dra(repo), *(API + DRA_SWITCH_ON + ["--set", "resources.computeDomains.enabled=false"]))
    plugin = of_kind(docs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]
    assert [c["name"] for c in plugin["spec"]["template"]["spec"]["containers"]] == ["gpus"]
    assert of_kind(docs, "Deployment") == {}
    assert sorted(of_kind(docs, "DeviceClass")) == ["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"]


def test_name_override_renames_the_workloads_and_their_selector_label(repo):
    _proc, docs = render(dra(repo), *(API + DRA_SWITCH_ON + ["--set", "nameOverride=nvidia-dra-driver-gpu"]))
    plugin = of_kind(docs, "DaemonSet")["nvidia-dra-driver-gpu-kubelet-plugin"]
    assert plugin["spec"]["template"]["metadata"]["labels"]["nvidia-dra-driver-gpu-component"] == "kubelet-plugin"
    assert "nvidia-dra-driver-gpu-controller" in of_kind(docs, "Deployment")


@pytest.mark.parametrize("chart,version,image", [
    ("nvidia-dra-driver-gpu", "25.12.0", "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"),
    ("dra-driver-nvidia-gpu", "0.4.0", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0"),
    ("dra-driver-nvidia-gpu", "0.4.1", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"),
    ("dra-driver-nvidia-gpu", "0.5.0", "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"),
])
def test_the_dra_image_is_the_real_default_per_version(repo, chart, version, image):
    _proc, docs = render(dra(repo, chart, version), *(API + DRA_SWITCH_ON))
    assert set(all_images(docs).values()) == {image}
    _proc, docs = render(dra(repo, chart, version), *(API + DRA_SWITCH_ON + [
        "--set", "image.repository=%s/x" % MIRROR, "--set", "image.tag=v9"]))
    assert set(all_images(docs).values()) == {MIRROR + "/x:v9"}


def test_the_dra_chart_keeps_the_kubelet_plugin_keys(repo):
    _proc, docs = render(dra(repo), *(API + DRA_SWITCH_ON + [
        "--set-string", "kubeletPlugin.nodeSelector.nvidia\\.com/dra-kubelet-plugin=true",
        "--set", "featureGates.MPSSupport=true"]))
    spec = of_kind(docs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"nvidia.com/dra-kubelet-plugin": "true"}
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert {c["name"]: c["env"] for c in spec["containers"]}["gpus"] == [{"name": "FEATURE_GATES",
                                                                          "value": "MPSSupport=true,"}]


def gpus_env(docs, name="dra-driver-nvidia-gpu-kubelet-plugin"):
    spec = of_kind(docs, "DaemonSet")[name]["spec"]["template"]["spec"]
    return {c["name"]: c.get("env") for c in spec["containers"]}["gpus"]


def test_the_0_5_0_chart_has_consumable_shares_with_the_real_default(repo):
    # main's values.yaml (0.5.0): consumableShares "" and featureGates {}, so by default the
    # plugin gets neither CONSUMABLE_SHARES nor FEATURE_GATES
    values = yaml.safe_load(subprocess.run([HELM, "show", "values", dra(repo, version="0.5.0")], capture_output=True,
                                           text=True, check=True).stdout)
    assert values["consumableShares"] == "" and values["featureGates"] == {}
    _proc, docs = render(dra(repo, version="0.5.0"), *(API + DRA_SWITCH_ON))
    assert gpus_env(docs) is None


@pytest.mark.parametrize("version,expected", [
    ("0.5.0", [{"name": "CONSUMABLE_SHARES", "value": "memory"}, {"name": "FEATURE_GATES", "value": "ConsumableShares=true,"}]),
    # 0.4.x has no consumableShares key: the value changes nothing and the gate is rendered as given
    # (a 0.4.x plugin stops on it; gpu_operator_values refuses ConsumableShares below 0.5.0)
    ("0.4.1", [{"name": "FEATURE_GATES", "value": "ConsumableShares=true,"}]),
])
def test_consumable_shares_reach_the_gpus_container_from_0_5_0(repo, version, expected):
    _proc, docs = render(dra(repo, version=version), *(API + DRA_SWITCH_ON + [
        "--set", "consumableShares=memory", "--set", "featureGates.ConsumableShares=true"]))
    assert gpus_env(docs) == expected
    spec = of_kind(docs, "DaemonSet")["dra-driver-nvidia-gpu-kubelet-plugin"]["spec"]["template"]["spec"]
    assert {c["name"]: c.get("env") for c in spec["containers"]}["compute-domains"] == expected[-1:]


def test_the_dra_chart_ships_its_crds(repo):
    out = subprocess.run([HELM, "show", "crds", dra(repo)], capture_output=True, text=True, check=True).stdout
    assert sorted(d["metadata"]["name"] for d in yaml.safe_load_all(out) if d) == [
        "computedomaincliques.resource.nvidia.com", "computedomains.resource.nvidia.com"]


# ----- NVIDIA's gpu-operator chart -------------------------------------------------------


def operator(repo, version):
    return os.path.join(repo, "gpu-operator-%s.tgz" % version)


def mirrored(images):
    """Every component's repository on the mirror, NVIDIA's path kept."""
    args = []
    for key, repository in images:
        args += ["--set", "%s.repository=%s/%s" % (key, MIRROR, repository.split("/", 1)[1])]
    return args


COMPONENTS = [("operator", "nvcr.io/nvidia"), ("operator.initContainer", "nvcr.io/nvidia"),
              ("validator", "nvcr.io/nvidia"), ("driver", "nvcr.io/nvidia"),
              ("driver.manager", "nvcr.io/nvidia/cloud-native"), ("toolkit", "nvcr.io/nvidia/k8s"),
              ("devicePlugin", "nvcr.io/nvidia"), ("dcgm", "nvcr.io/nvidia/cloud-native"),
              ("dcgmExporter", "nvcr.io/nvidia/k8s"), ("gfd", "nvcr.io/nvidia"),
              ("migManager", "nvcr.io/nvidia/cloud-native"), ("nodeStatusExporter", "nvcr.io/nvidia"),
              ("draDriver", "nvcr.io/nvidia"), ("node-feature-discovery.image", "registry.k8s.io/nfd/node-feature-discovery")]


def test_operator_defaults_are_nvidias():
    values = yaml.safe_load(open(os.path.join(HERE, "..", "fixtures", "charts", "gpu-operator", "values.yaml")))
    for key, repository in COMPONENTS:
        node = values
        for part in key.split("."):
            node = node[part]
        assert node["repository"] == repository, key
    assert values["validator"]["image"] == values["nodeStatusExporter"]["image"] == "gpu-operator"
    assert values["draDriver"]["image"] == "dra-driver-nvidia-gpu"
    assert values["draDriver"]["computeDomains"]["enabled"] is True


@pytest.mark.parametrize("version,expected", [
    ("v25.10.0", {"operator": "nvcr.io/nvidia/gpu-operator:v25.10.0", "validator": "nvcr.io/nvidia/gpu-operator:v25.10.0",
                  "operator.initContainer": "nvcr.io/nvidia/cuda:13.0.1-base-ubi9",
                  "driver": "nvcr.io/nvidia/driver:580.95.05",
                  "driver.manager": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.9.0",
                  "toolkit": "nvcr.io/nvidia/k8s/container-toolkit:v1.18.0",
                  "devicePlugin": "nvcr.io/nvidia/k8s-device-plugin:v0.18.0",
                  "gfd": "nvcr.io/nvidia/k8s-device-plugin:v0.18.0",
                  "migManager": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.13.0",
                  "dcgmExporter": "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-distroless",
                  "node-feature-discovery": "registry.k8s.io/nfd/node-feature-discovery:v0.18.2"}),
    ("v26.7.0", {"operator": "nvcr.io/nvidia/gpu-operator:v26.7.0", "validator": "nvcr.io/nvidia/gpu-operator:v26.7.0",
                 "driver": "nvcr.io/nvidia/driver:595.91.07",
                 "driver.manager": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0",
                 "toolkit": "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
                 "devicePlugin": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
                 "gfd": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
                 "migManager": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.15.0",
                 "dcgmExporter": "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless",
                 "node-feature-discovery": "registry.k8s.io/nfd/node-feature-discovery:v0.19.0"}),
])
def test_operator_images_by_default_are_the_real_charts(repo, version, expected):
    _proc, docs = render(operator(repo, version), *API)
    notes = pod_annotations(of_kind(docs, "Deployment")["gpu-operator"])
    assert json.loads(notes["stand-in.dra.gpu/images"]) == expected
    assert notes["stand-in.dra.gpu/image"] == expected["operator"]


def test_the_gpucluster_layout_pulls_the_dra_driver_and_no_clusterpolicy_operand(repo):
    _proc, docs = render(operator(repo, "v26.7.0"), *(API + [
        "--set", "clusterPolicy.deployCR=false", "--set", "gpuCluster.deployCR=true", "--set", "driver.enabled=false"]))
    images = json.loads(pod_annotations(of_kind(docs, "Deployment")["gpu-operator"])["stand-in.dra.gpu/images"])
    assert images["draDriver"] == "nvcr.io/nvidia/dra-driver-nvidia-gpu:v0.5.0"
    assert not {"toolkit", "devicePlugin", "gfd", "migManager", "driver"} & set(images)
    plugin = of_kind(docs, "DaemonSet")["nvidia-dra-driver-kubelet-plugin"]
    assert plugin["metadata"]["namespace"] == "ns"
    assert plugin["spec"]["selector"]["matchLabels"] == {"app": "nvidia-dra-driver-kubelet-plugin"}
    assert plugin["spec"]["template"]["metadata"]["labels"]["app"] == "nvidia-dra-driver-kubelet-plugin"
    # the stand-in's substitute for the operator's nvidia.com/gpu.deploy.dra-driver=true label
    assert plugin["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert [c["name"] for c in plugin["spec"]["template"]["spec"]["containers"]] == ["gpus", "compute-domains"]
    assert pod_annotations(plugin)["stand-in.dra.gpu/image"] == images["draDriver"]
    assert "nvidia-dra-driver-controller" in of_kind(docs, "Deployment")
    assert "nvidia-device-plugin-daemonset" not in of_kind(docs, "DaemonSet")


def test_the_gpucluster_passes_the_gpus_kubelet_plugin_env_after_its_gates(repo):
    # the operator renders FEATURE_GATES, then draDriver.gpus.kubeletPlugin.env, on the gpus container
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        yaml.safe_dump({"clusterPolicy": {"deployCR": False}, "gpuCluster": {"deployCR": True},
                        "driver": {"enabled": False},
                        "draDriver": {"featureGates": {"ConsumableShares": True},
                                      "gpus": {"kubeletPlugin": {"env": [{"name": "CONSUMABLE_SHARES", "value": 4}]}}}},
                       handle)
    try:
        _proc, docs = render(operator(repo, "v26.7.0"), *(API + ["-f", handle.name]))
    finally:
        os.unlink(handle.name)
    containers = of_kind(docs, "DaemonSet")["nvidia-dra-driver-kubelet-plugin"]["spec"]["template"]["spec"]["containers"]
    assert {c["name"]: c.get("env") for c in containers} == {
        "gpus": [{"name": "FEATURE_GATES", "value": "ConsumableShares=true,"},
                 {"name": "CONSUMABLE_SHARES", "value": "4"}],
        "compute-domains": None}


@pytest.mark.parametrize("version", OPERATOR_VERSIONS)
@pytest.mark.parametrize("layout", ["clusterpolicy", "gpucluster"])
def test_with_a_mirror_every_image_comes_from_it(repo, version, layout):
    args = API + mirrored(COMPONENTS) + ["--set", "dcgm.enabled=true", "--set", "nodeStatusExporter.enabled=true"]
    if layout == "gpucluster":
        if version != "v26.7.0":
            pytest.skip("a GPUCluster needs v26.7")
        args += ["--set", "clusterPolicy.deployCR=false", "--set", "gpuCluster.deployCR=true",
                 "--set", "driver.nvidiaDriverCRD.enabled=true"]
    _proc, docs = render(operator(repo, version), *args)
    images = all_images(docs)
    assert images and all(image.startswith(MIRROR + "/") for image in images.values()), images
    # NVIDIA's path is kept under the mirror
    assert images["driver.manager"].startswith(MIRROR + "/nvidia/cloud-native/k8s-driver-manager:")
    assert ("operator.initContainer" in images) == version.startswith("v25.10")


def test_a_digest_is_pulled_by_digest(repo):
    digest = "sha256:" + "0" * 64
    _proc, docs = render(operator(repo, "v26.3.1"), *(API + ["--set", "toolkit.version=" + digest]))
    images = json.loads(pod_annotations(of_kind(docs, "Deployment")["gpu-operator"])["stand-in.dra.gpu/images"])
    assert images["toolkit"] == "nvcr.io/nvidia/k8s/container-toolkit@" + digest
