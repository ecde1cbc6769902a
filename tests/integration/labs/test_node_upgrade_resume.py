"""cluster_upgrade on three control planes with stacked etcd, killed between the second and the
third control plane and run again: the rerun finishes without repeating what was done.

Against the node lab (run-node-lab.sh starts it with NODE_LAB_CONTROL_PLANES=3): the first hop
of the lab's mirror (1.34.4 -> 1.35.4 in `make test`). The first run is SIGKILLed, as a lost
controller would be, the moment the control-plane play turns to cp3 (cp1 and cp2 upgraded, their
etcd checked). The rerun is read task by task (Ansible's JSON callback): no `kubeadm upgrade
apply`, no snapshot, nothing at all on cp1 and cp2 (no drain, no `kubeadm upgrade node`, no
kubelet restart); cp3 and w1 upgraded, etcd checked before and after cp3. molecule node_upgrade
takes the same lab one minor further afterwards (the second hop).
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PLAYBOOK = os.path.join(ROOT, "playbooks", "upgrade.yml")
KUBECONFIG = os.environ.get("NODE_LAB_KUBECONFIG")
CONTROL_PLANES = [n for n in os.environ.get("NODE_LAB_CONTROL_PLANE_NODES", "").split(",") if n]
NODES = [n for n in os.environ.get("NODE_LAB_NODES", "").split(",") if n]
VERSIONS = os.environ.get("NODE_LAB_MIRROR_VERSIONS", "1.34.4 1.35.4").split()
START, HOP = VERSIONS[0], VERSIONS[1]
# The first run's whole budget: one hop on four nodes takes about 5 minutes here.
RUN_TIMEOUT = 1200

pytestmark = pytest.mark.skipif(len(CONTROL_PLANES) < 3 or not KUBECONFIG,
                                reason="needs the node lab with three control planes (run-node-lab.sh)")


def inventory(path):
    """The lab's machines as molecule node_upgrade lists them, localhost as the API host."""
    ssh = {"ansible_user": "root", "ansible_ssh_private_key_file": os.environ["NODE_LAB_SSH_KEY"],
           "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
           "ansible_python_interpreter": "/usr/bin/python3"}
    hosts = {n: dict(ssh, ansible_host=os.environ["NODE_LAB_%s_ADDRESS" % n.upper()]) for n in NODES}
    path.write_text(yaml.safe_dump({"all": {
        "hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
        "children": {"kube_control_plane": {"hosts": {n: hosts[n] for n in CONTROL_PLANES}},
                     "kube_node": {"hosts": hosts}}}}))
    return str(path)


def extra_vars(tmp_path):
    # As molecule/node_upgrade/molecule.yml's group_vars say why.
    return {"cluster_upgrade_target": ".".join(HOP.split(".")[:2]),
            "cluster_upgrade_repo_url": os.environ["NODE_LAB_MIRROR_URL"] + "/core:/stable:/v{minor}",
            "cluster_upgrade_kubeadm_ignore_preflight_errors": ["CoreDNSUnsupportedPlugins", "CoreDNSMigration",
                                                                "SystemVerification"],
            "cluster_upgrade_check_cgroups": False,
            "cluster_upgrade_etcd_snapshot_dir": str(tmp_path / "etcd-snapshots"),
            "cluster_upgrade_drain_grace_period": 5, "cluster_upgrade_drain_timeout": 120,
            "cluster_upgrade_drain_retries": 12}


def playbook_env(**extra):
    return dict(os.environ, KUBECONFIG=KUBECONFIG, K8S_AUTH_KUBECONFIG=KUBECONFIG, NO_COLOR="1",
                ANSIBLE_FORCE_COLOR="0", ANSIBLE_HOST_KEY_CHECKING="false", **extra)


def run_killed_at(inventory_path, extra_path, log_path, banner):
    """Run the upgrade with Ansible's plain output and SIGKILL its whole process group when
    ``banner`` (a task banner) appears; returns the output lines. Fails if the run ends first.

    A timer kills the group at RUN_TIMEOUT: a playbook that hangs without printing would never
    hand the loop below another line to check a deadline against."""
    proc = subprocess.Popen(["ansible-playbook", "-i", inventory_path, "-e", "@" + extra_path, PLAYBOOK],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=playbook_env(),
                            start_new_session=True)
    timer = threading.Timer(RUN_TIMEOUT, os.killpg, (proc.pid, signal.SIGKILL))
    timer.start()
    lines, killed = [], False
    try:
        with open(log_path, "w") as log:
            for line in proc.stdout:
                log.write(line)
                lines.append(line.rstrip("\n"))
                if re.match(banner, line):
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
                    break
        proc.wait(timeout=60)
    finally:
        timer.cancel()
    assert killed, "the first run never reached %r (rc %s%s); its output is in %s. Where it failed:\n%s" % (
        banner, proc.returncode, ", killed after %ss" % RUN_TIMEOUT if proc.returncode == -signal.SIGKILL else "",
        log_path, "\n".join(failure_excerpt(lines)))
    return lines


def failure_excerpt(lines, after=30):
    """The task banner and the first lines of each failed result (Ansible prints a result's keys
    sorted: msg, rc and stderr come before the long stdout), else the last lines."""
    excerpt = []
    for index, line in enumerate(lines):
        if line.startswith(("fatal:", "failed:")):
            banner = next((lines[i] for i in range(index, -1, -1) if lines[i].startswith("TASK [")), "")
            excerpt += [banner] + lines[index:index + after] + ["..."]
    return excerpt or lines[-40:]


def run_reported(inventory_path, extra_path):
    """Run the upgrade to the end with the JSON callback: (rc, report)."""
    proc = subprocess.run(["ansible-playbook", "-i", inventory_path, "-e", "@" + extra_path, PLAYBOOK],
                          capture_output=True, text=True, check=False, timeout=RUN_TIMEOUT,
                          env=playbook_env(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json"))
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("the rerun printed no JSON (rc %s): %s %s"
                             % (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))


def steps(report):
    """What each host really did, from the rerun's task results: {host: [step, ...]} in order.

    A step is recognised by the module's own arguments, not by task names: "drain", "kubeadm
    upgrade apply", "kubeadm upgrade node", "kubelet restart", "etcd snapshot", "etcd health"."""
    done = {}
    for play in report["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                if result.get("skipped") or result.get("failed"):
                    continue
                args = (result.get("invocation") or {}).get("module_args") or {}
                cmd = result.get("cmd")
                cmd = " ".join(cmd) if isinstance(cmd, list) else cmd or ""
                step = None
                if args.get("state") == "drain":
                    step = "drain"
                elif cmd.startswith("kubeadm upgrade apply"):
                    step = "kubeadm upgrade apply"
                elif cmd.startswith("kubeadm upgrade node"):
                    step = "kubeadm upgrade node"
                elif args.get("name") == "kubelet" and args.get("state") == "restarted":
                    step = "kubelet restart"
                elif "snapshot save" in str(args.get("command", "")):
                    step = "etcd snapshot"
                elif "stacked" in result and "leader" in result:
                    step = "etcd health"
                if step:
                    done.setdefault(host, []).append(step)
    return done


def node_versions():
    out = subprocess.run(["kubectl", "--kubeconfig", KUBECONFIG, "get", "nodes", "-o", "json"], capture_output=True,
                         text=True, check=True).stdout
    return {n["metadata"]["name"]: (n["status"]["nodeInfo"]["kubeletVersion"], bool(n["spec"].get("unschedulable")))
            for n in json.loads(out)["items"]}


def test_upgrade_killed_between_second_and_third_control_plane_resumes(tmp_path):
    assert set(v for v, _c in node_versions().values()) == {"v" + START}, "the lab must start at %s" % START
    inventory_path = inventory(tmp_path / "inventory.yml")
    extra_path = str(tmp_path / "vars.yml")
    with open(extra_path, "w") as handle:
        yaml.safe_dump(extra_vars(tmp_path), handle)
    logs = os.path.join(ROOT, ".lab", "logs")
    os.makedirs(logs, exist_ok=True)

    t0 = time.monotonic()
    first = run_killed_at(inventory_path, extra_path, os.path.join(logs, "node-upgrade-killed.log"),
                          r"^TASK \[dra\.gpu\.cluster_upgrade : Read node %s\]" % CONTROL_PLANES[2])
    killed_after = time.monotonic() - t0
    # Where the kill left the cluster: cp1 and cp2 done and uncordoned, cp3 and the workers untouched.
    assert any("Wait until etcd is healthy after the upgrade of %s" % CONTROL_PLANES[1] in line for line in first)
    state = node_versions()
    assert {n: v for n, (v, _c) in state.items()} == {
        n: "v" + (HOP if n in CONTROL_PLANES[:2] else START) for n in NODES}, state
    assert not [n for n, (_v, cordoned) in state.items() if cordoned]

    t0 = time.monotonic()
    rc, report = run_reported(inventory_path, extra_path)
    rerun = time.monotonic() - t0
    done = steps(report)
    print("killed after %.0fs; rerun %.0fs; steps %s" % (killed_after, rerun, done))
    assert rc == 0, json.dumps(report.get("stats"))
    # Nothing done twice: cp1 and cp2 are skipped whole, no second apply or snapshot anywhere.
    assert not [s for host in CONTROL_PLANES[:2] for s in done.get(host, []) if s != "etcd health"], done
    assert not [s for steps_ in done.values() for s in steps_ if s in ("kubeadm upgrade apply", "etcd snapshot")]
    # What was left is done once: cp3 with etcd checked before and after, then the workers.
    assert done[CONTROL_PLANES[2]] == ["etcd health", "kubeadm upgrade node", "drain", "kubelet restart",
                                       "etcd health"], done
    for worker in NODES[len(CONTROL_PLANES):]:
        assert done[worker] == ["kubeadm upgrade node", "drain", "kubelet restart"], done
    state = node_versions()
    assert {n: v for n, (v, _c) in state.items()} == {n: "v" + HOP for n in NODES}
    assert not [n for n, (_v, cordoned) in state.items() if cordoned]
