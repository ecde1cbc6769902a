"""What the memory-share tests (test_consumable_shares*.py) share: a lab at the Kubernetes minor
they need, the stand-in charts, and the two roles run as users run them.

The test lab runs 1.35.4 (where the mode must be refused); the tests of what 1.36+ serves start a
lab beside it at old_lab.NEW_VERSION in driver mode plugin (the gpu_operator role installs the
stand-in DRA chart, whose kubelet-plugin pods make the simulated nodes publish), unless the test
lab already runs a minor that fits. A lab started here is stopped when the module ends.
"""

import contextlib
import os
import subprocess
import sys

from kubernetes import client, config

import old_lab
from conftest import run_playbook, task_results

CHART_REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "charts", "chart_repo.py")
MANAGED = "app.kubernetes.io/managed-by=dra.gpu.gpu_sharing"


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


def clients(kubeconfig):
    api = config.new_client_from_config(kubeconfig)
    return client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)


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
    core, apps, custom = clients(kubeconfig)
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
