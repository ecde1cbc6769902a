"""The upgrade's calls right after kube-apiserver restarts, with the window held open.

`lab.py restart kube-apiserver --hold-rbac N` restarts the lab's real API server with its
RBAC storage unreachable for N seconds (lab/labctl/apiserver/rbac_gate.py): it serves, but
refuses with 403 every user whose rights come from RBAC, and /readyz fails, exactly as a
kubeadm control plane does while its RBAC informers fill after `kubeadm upgrade apply` or
a kubelet restart. Each test first proves the window is open (a plain call gets 403), so
none can pass by timing. Marked to run last (conftest.py): the restart slows the controllers.
"""

import json
import os
import subprocess
import sys
import time

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from conftest import run_playbook, task_results

pytestmark = pytest.mark.restarts_api_server

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAB = os.path.join(ROOT, "lab", "lab.py")
NODE = "node-a"
HOLD = 20
BINDINGS = (
    # kubeadm binds its admin group the same way (kubeadm:cluster-admins -> cluster-admin).
    ("dra-gpu-lab:cluster-admins", "cluster-admin", None),
    ("dra-gpu-lab:node-readers", "dra-gpu-lab:node-reader",
     [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]),
)


def lab_kubeconfig(ident):
    """The kubeconfig the lab writes for one of its token users (labctl.apiserver.pki.TOKEN_USERS)."""
    return os.path.join(os.path.dirname(os.environ["KUBECONFIG"]), "pki", ident + ".kubeconfig")


def restart_api_server(*args):
    subprocess.run([sys.executable, LAB, "restart", "kube-apiserver"] + list(args), check=True)


@pytest.fixture(scope="module")
def rbac_users(api):
    rbac = client.RbacAuthorizationV1Api(api)
    for group, role, rules in BINDINGS:
        if rules:
            rbac.create_cluster_role({"metadata": {"name": role}, "rules": rules})
        rbac.create_cluster_role_binding({
            "metadata": {"name": group}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                     "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]})
    yield
    for group, role, rules in BINDINGS:
        rbac.delete_cluster_role_binding(group)
        if rules:
            rbac.delete_cluster_role(role)


@pytest.fixture
def cordoned(core):
    core.patch_node(NODE, {"spec": {"unschedulable": True}})
    yield
    core.patch_node(NODE, {"spec": {"unschedulable": False}})


@pytest.fixture
def held_window(rbac_users, cordoned):
    """The API server just restarted, its authorizer held back for HOLD seconds; proven open."""
    restart_api_server("--hold-rbac", str(HOLD))
    opened = time.monotonic()
    upgrader = client.CoreV1Api(config.new_client_from_config(config_file=lab_kubeconfig("upgrader")))
    with pytest.raises(ApiException) as refused:
        upgrader.patch_node(NODE, {"spec": {"unschedulable": False}})
    assert refused.value.status == 403, "the window is not open: %s" % refused.value
    yield opened
    # The gate is open by now; restart once more so later tests meet an ordinary API server.
    restart_api_server()


def role_tasks(*entries, **extra_vars):
    tasks = [{"name": "Run %s" % tasks_from, "ansible.builtin.include_role": {"name": "dra.gpu.cluster_upgrade",
                                                                              "tasks_from": tasks_from}}
             for tasks_from in entries]
    return [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "vars": dict({"cluster_upgrade_node_name": NODE, "cluster_upgrade_node_was_cordoned": False,
                           "cluster_upgrade_restart_step": "the test's restart"}, **extra_vars),
             "tasks": tasks}]


def run_as(ident, play, extra_args=()):
    """Run the play with one of the lab's RBAC-only users; results by task name (role prefix dropped)."""
    kubeconfig = lab_kubeconfig(ident)
    started = time.monotonic()
    rc, report, stderr = run_playbook(play, extra_args=extra_args,
                                      env={"K8S_AUTH_KUBECONFIG": kubeconfig, "KUBECONFIG": kubeconfig})
    results = dict((name.split(" : ", 1)[-1], result) for name, result in task_results(report))
    return rc, results, time.monotonic() - started, stderr


def schedulable(core):
    return not core.read_node(NODE).spec.unschedulable


def test_the_role_waits_for_the_authorizer_and_then_uncordons(core, held_window):
    rc, results, elapsed, stderr = run_as("upgrader", role_tasks("api_ready", "uncordon"))
    ready = results["Wait until the API server serves authorized requests after the test's restart"]
    assert rc == 0, json.dumps(results, indent=1)[-3000:] + stderr[-2000:]
    assert schedulable(core)
    # It waited for the held window (the gate's retries end it some seconds after HOLD).
    assert time.monotonic() - held_window >= HOLD - 1
    assert any("authorizer not ready" in phase for phase in ready["rode_out"]), ready
    print("api_ready rode out %s in %.1fs; play %.1fs" % (ready["rode_out"], ready["elapsed"], elapsed))


def test_in_the_window_the_uncordon_retries_only_when_the_role_restarted_the_server(core, held_window):
    # What the role did before the fix: the uncordon right after the restart with no window
    # of its own. The refusal is taken as a refusal and fails at once.
    rc, results, elapsed, _stderr = run_as("upgrader", role_tasks("uncordon"))
    assert rc != 0
    assert "Forbidden" in results["Uncordon %s" % NODE]["msg"]
    assert elapsed < HOLD, "a refusal outside a restart window must not be retried"
    assert not schedulable(core)
    # As after a kubelet restart that recreates kube-apiserver once api_ready had passed:
    # the role restarted the server a moment ago, so the same call retries until it is served.
    play = role_tasks("uncordon", cluster_upgrade_api_retry_timeout=120, cluster_upgrade_api_retry_delay=1)
    rc, results, _elapsed, stderr = run_as("upgrader", play,
                                           extra_args=["-e", "cluster_upgrade_api_ready_at=%f" % time.time()])
    uncordon = results["Uncordon %s" % NODE]
    assert rc == 0, json.dumps(results, indent=1)[-3000:] + stderr[-2000:]
    assert uncordon["attempts"] > 1, uncordon
    assert schedulable(core)


def test_a_real_refusal_fails_fast(core, rbac_users, cordoned):
    # node-reader may read nodes but not patch them. No restart of the role's is recent, so
    # the uncordon's 403 is a refusal and is reported on its first attempt.
    rc, results, elapsed, _stderr = run_as("node-reader", role_tasks("uncordon"))
    assert rc != 0
    uncordon = results["Uncordon %s" % NODE]
    assert "Forbidden" in uncordon["msg"] and uncordon.get("attempts", 1) == 1, uncordon
    assert elapsed < 20
    assert not schedulable(core)


def test_credentials_without_any_right_fail_fast_in_the_readiness_wait(rbac_users):
    rc, results, elapsed, _stderr = run_as("nobody", role_tasks("api_ready"))
    assert rc != 0
    message = results["Wait until the API server serves authorized requests after the test's restart"]["msg"]
    assert "missing permission" in message, message
    assert elapsed < 30
