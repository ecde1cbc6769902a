"""docs/upgrades.md's way back, run as it tells a user to: the etcd snapshot cluster_upgrade takes
before a pass (its own tasks, etcd_snapshot.yml, on the first control plane), then something
broken (a ConfigMap deleted, another created), then playbooks/etcd_restore.yml: in check mode
first (nothing changes), refused without a snapshot, then for real. Afterwards the cluster serves
again with what the snapshot held: the deleted ConfigMap is back, the later one gone, every node
Ready, and etcd has one started member per control plane (the playbook's own etcd_health check).

Against the node lab (run-node-lab.sh: three control planes with stacked etcd and a worker, at
the mirror's first version, before the upgrade tests); any shape with one control plane or more.
"""

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RESTORE = os.path.join(ROOT, "playbooks", "etcd_restore.yml")
KUBECONFIG = os.environ.get("NODE_LAB_KUBECONFIG")
CONTROL_PLANES = [n for n in os.environ.get("NODE_LAB_CONTROL_PLANE_NODES", "").split(",") if n]
NODES = [n for n in os.environ.get("NODE_LAB_NODES", "").split(",") if n]
SNAPSHOT_DIR = "/var/lib/dra-gpu/etcd-snapshots"
VERSION_TAG = "restore-test"  # the snapshot's name part a pass would fill with its version
KEPT, LOST = "dra-gpu-restore-kept", "dra-gpu-restore-lost"
RUN_TIMEOUT = 900

pytestmark = pytest.mark.skipif(not CONTROL_PLANES or not KUBECONFIG, reason="needs the node lab (run-node-lab.sh)")


def kubectl(*args, check=True):
    return subprocess.run(["kubectl", "--kubeconfig", KUBECONFIG] + list(args), capture_output=True, text=True,
                          check=check, timeout=120)


def configmaps():
    found = json.loads(kubectl("get", "configmaps", "-n", "default", "-o", "json").stdout)["items"]
    return sorted(c["metadata"]["name"] for c in found if c["metadata"]["name"] in (KEPT, LOST))


@pytest.fixture
def inventory(tmp_path):
    ssh = {"ansible_user": "root", "ansible_ssh_private_key_file": os.environ.get("NODE_LAB_SSH_KEY", ""),
           "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
           "ansible_python_interpreter": "/usr/bin/python3"}
    hosts = {n: dict(ssh, ansible_host=os.environ.get("NODE_LAB_%s_ADDRESS" % n.upper(), "")) for n in NODES}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"all": {
        "hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
        "children": {"kube_control_plane": {"hosts": {n: hosts[n] for n in CONTROL_PLANES}},
                     "kube_node": {"hosts": hosts}}}}))
    yield str(path)
    # Leave the lab as the next tests expect it: no ConfigMap of this test, no snapshot, no old data.
    kubectl("delete", "configmap", "-n", "default", KEPT, LOST, "--ignore-not-found", check=False)
    ansible(path, "kube_control_plane", "ansible.builtin.shell",
            "rm -rf %s/*-before-%s.db /var/lib/etcd-before-restore-restored-*" % (SNAPSHOT_DIR, VERSION_TAG))


def env():
    return dict(os.environ, KUBECONFIG=KUBECONFIG, K8S_AUTH_KUBECONFIG=KUBECONFIG, NO_COLOR="1",
                ANSIBLE_FORCE_COLOR="0", ANSIBLE_HOST_KEY_CHECKING="false")


def ansible(inventory_path, pattern, module, args):
    return subprocess.run(["ansible", "-i", str(inventory_path), pattern, "-m", module, "-a", args],
                          capture_output=True, text=True, check=False, timeout=300, env=env())


def playbook(path, inventory_path, *extra):
    started = time.monotonic()
    proc = subprocess.run(["ansible-playbook", "-i", inventory_path, path] + list(extra), capture_output=True,
                          text=True, check=False, timeout=RUN_TIMEOUT, env=env())
    print("%s %s: rc %s in %.0fs" % (os.path.basename(path), " ".join(extra), proc.returncode,
                                     time.monotonic() - started))
    return proc


def take_snapshot(inventory_path, tmp_path):
    """cluster_upgrade's own snapshot tasks, as a pass runs them on the first control plane."""
    play = tmp_path / "snapshot.yml"
    play.write_text(yaml.safe_dump([{
        "name": "Snapshot etcd as a pass of cluster_upgrade does", "hosts": CONTROL_PLANES[0], "gather_facts": False,
        "tasks": [{"name": "Take the snapshot", "ansible.builtin.include_role": {
            "name": "dra.gpu.cluster_upgrade", "tasks_from": "etcd_snapshot"},
            "vars": {"cluster_upgrade_pass": {"version": VERSION_TAG}}}]}]))
    proc = playbook(str(play), inventory_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return "%s/%s-before-%s.db" % (SNAPSHOT_DIR, CONTROL_PLANES[0], VERSION_TAG)


def wait_all_ready(timeout=300):
    deadline, last = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        done = kubectl("wait", "--for=condition=Ready", "node", "--all", "--timeout=30s", check=False)
        if done.returncode == 0:
            return
        last = done.stderr or done.stdout
        time.sleep(2)
    raise AssertionError("nodes not all Ready %ss after the restore: %s" % (timeout, last))


def test_a_snapshot_restored_on_every_control_plane_brings_back_what_it_held(inventory, tmp_path):
    kubectl("create", "configmap", "-n", "default", KEPT, "--from-literal=when=before-the-snapshot")
    snapshot = take_snapshot(inventory, tmp_path)
    kubectl("delete", "configmap", "-n", "default", KEPT)
    kubectl("create", "configmap", "-n", "default", LOST, "--from-literal=when=after-the-snapshot")
    assert configmaps() == [LOST]

    refused = playbook(RESTORE, inventory)
    assert refused.returncode != 0
    assert "cluster_upgrade_etcd_restore_snapshot is empty" in refused.stdout and "Nothing was changed" in refused.stdout

    checked = playbook(RESTORE, inventory, "--check", "-e", "cluster_upgrade_etcd_restore_snapshot=" + snapshot)
    assert checked.returncode == 0, checked.stdout[-3000:]
    assert "Restore %s (from %s) into the etcd members %s" % (snapshot, CONTROL_PLANES[0], ", ".join(
        sorted(CONTROL_PLANES))) in " ".join(checked.stdout.split()), checked.stdout[-3000:]
    assert "changed=0" in checked.stdout and configmaps() == [LOST]

    restored = playbook(RESTORE, inventory, "-e", "cluster_upgrade_etcd_restore_snapshot=" + snapshot)
    assert restored.returncode == 0, restored.stdout[-5000:]
    wait_all_ready()
    assert configmaps() == [KEPT]
    assert kubectl("get", "--raw", "/readyz").stdout.strip() == "ok"
