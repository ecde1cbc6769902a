"""What the memory-share tests share: labs at the Kubernetes minor they need, the stand-in charts,
and the roles run as users run them.

The test lab runs 1.35.4 (where memory shares must be refused); the tests of what 1.36+ serves
start a lab beside it at old_lab.NEW_VERSION (1.37.2, built by run-apiserver-lab.sh), either
- in driver mode plugin (lab_at: the gpu_operator role installs the stand-in DRA chart, whose
  kubelet-plugin pods make the simulated nodes publish), unless the test lab already runs a minor
  that fits; or
- in driver mode always with a ConsumableShares mode (started: every GPU published with
  allowMultipleAllocations and a request policy on memory, as NVIDIA's plugin, main at 95932046
  taken as 0.5.0, publishes it), with a DeviceClass of the tests' own (share_class).
A lab started here is stopped when the test module (or the ``with`` block) ends.
"""

import contextlib
import os
import subprocess
import sys
import uuid

from kubernetes import client, config

import old_lab
from conftest import run_playbook, task_results
from waiting import wait_for_object

CHART_REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "charts", "chart_repo.py")
MANAGED = "app.kubernetes.io/managed-by=dra.gpu.gpu_sharing"
# A class of our own (no extendedResourceName: pods that keep nvidia.com/gpu are not served by DRA).
CLASS = "lab-it-share-gpu"
CLASS_BODY = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                                            "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}


def minor(api):
    return int(client.VersionApi(api).get_code().minor.rstrip("+"))


@contextlib.contextmanager
def lab_at(api, version, offset, fits):
    """KUBECONFIG of a lab whose minor ``fits``: the test lab's own, or one at ``version``
    started ``offset`` ports above it (driver mode plugin) and stopped afterwards."""
    if fits(minor(api)):
        yield os.environ["KUBECONFIG"]
        return
    settings = {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + offset, "driver_mode": "plugin",
                "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-%s-plugin" % version)}
    kubeconfig = old_lab.start(version, **settings)
    try:
        yield kubeconfig
    finally:
        old_lab.stop(version, **settings)


@contextlib.contextmanager
def started(name, offset=600, k8s_version=None, shares="memory"):
    """A lab in driver mode always publishing ConsumableShares ``shares``, ``offset`` ports above the
    test lab; yields its kubeconfig and stops it afterwards."""
    k8s_version = k8s_version or old_lab.NEW_VERSION
    settings = {"port_base": int(os.environ.get("LAB_PORT_BASE", "26500")) + offset, "driver_mode": "always",
                "state_dir": os.path.join(old_lab.ROOT, ".lab", "test-%s-%s" % (name, k8s_version)),
                "consumable_shares": shares}
    kubeconfig = old_lab.start(k8s_version, **settings)
    try:
        yield kubeconfig
    finally:
        old_lab.stop(k8s_version, **settings)


def namespace(core, prefix):
    """A new namespace with its default service account (pods need it)."""
    name = prefix + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": name}})
    wait_for_object(core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + name, timeout=30, namespace=name)
    return name


def share_class(custom):
    """Create CLASS (if missing); return its name."""
    try:
        custom.create_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", CLASS_BODY)
    except client.exceptions.ApiException as exc:
        if exc.status != 409:
            raise
    return CLASS


def clients(kubeconfig):
    api = config.new_client_from_config(kubeconfig)
    return api, client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)


def build_charts(directory):
    subprocess.run([sys.executable, CHART_REPO, "build", str(directory)], check=True, capture_output=True)
    return str(directory)


def run_role(kubeconfig, role, variables, check=False):
    """(rc, {task name: result}, failure messages) of one role run."""
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "roles": [{"role": role, "vars": variables}]}]
    rc, report, stderr = run_playbook(play, env={"KUBECONFIG": kubeconfig},
                                      extra_args=["--check", "--diff"] if check else [])
    results = task_results(report)
    failed = [r.get("msg", "") for _name, r in results if r.get("failed")]
    named = {}
    for name, result in results:
        named.setdefault(name.split(" : ")[-1], result)
    named["_stderr"] = stderr
    return rc, named, failed


def changed_tasks(named):
    return sorted(name for name, result in named.items() if isinstance(result, dict) and result.get("changed"))


def operator_vars(charts, **extra):
    return dict({"gpu_operator_chart_source": "local", "gpu_operator_chart_dir": charts,
                 "gpu_operator_dra_consumable_shares": "memory", "gpu_operator_force_removal": True,
                 "gpu_operator_timeout": 120, "gpu_operator_slice_timeout": 120}, **extra)


def cluster_state(kubeconfig):
    """What either role could change: DeviceClasses, ResourceClaimTemplates, node labels and
    annotations, Helm releases (their secrets), DaemonSets and namespaces."""
    _api, core, apps, custom = clients(kubeconfig)
    classes = custom.list_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses")["items"]
    templates = custom.list_cluster_custom_object("resource.k8s.io", "v1", "resourceclaimtemplates")["items"]
    return {
        "deviceclasses": sorted((c["metadata"]["name"], c["metadata"]["resourceVersion"]) for c in classes),
        "templates": sorted((t["metadata"]["namespace"], t["metadata"]["name"], t["metadata"]["resourceVersion"])
                            for t in templates),
        "node_labels": {n.metadata.name: (n.metadata.labels, n.metadata.annotations)
                        for n in core.list_node().items},
        "helm_releases": sorted((s.metadata.namespace, s.metadata.name) for s in core.list_secret_for_all_namespaces(
            label_selector="owner=helm").items),
        "daemonsets": sorted((d.metadata.namespace, d.metadata.name) for d in apps.list_daemon_set_for_all_namespaces(
        ).items),
        "namespaces": sorted(n.metadata.name for n in core.list_namespace().items),
    }
