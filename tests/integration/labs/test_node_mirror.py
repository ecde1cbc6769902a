"""The node lab's package mirror (lab/labctl/nodes/mirror.py), used as a real apt repository:
apt verifies its signature and installs nothing but reads it, and cluster_upgrade reads the
versions on offer from it as from pkgs.k8s.io."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest
import yaml

import old_lab
from conftest import run_playbook, task_results

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# The mirror the node lab serves to its nodes (the Makefile sets it; built by run-node-lab.sh).
MIRROR_ROOT = os.environ.get("NODE_LAB_MIRROR_ROOT") or os.path.join(ROOT, ".lab", "test-mirror")
VERSIONS = [old_lab.OLD_VERSION, "1.35.4"]


@pytest.fixture(scope="module")
def mirror():
    """Build the mirror (node binaries are cached per version) and serve it on loopback."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "lab", "lab.py"), "mirror",
                           "--root", MIRROR_ROOT, "--versions"] + VERSIONS, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    port = int(os.environ.get("LAB_PORT_BASE", "26500")) + 590
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory",
                               os.path.join(MIRROR_ROOT, "repo"), str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    deadline = time.monotonic() + 10
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                server.kill()
                raise
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture
def apt_root(mirror):
    """A private apt configuration: it touches nothing of the machine's own apt."""
    root = tempfile.mkdtemp(prefix="apt-")
    for sub in ("etc/sources.list.d", "etc/preferences.d", "etc/apt.conf.d", "state/lists/partial",
                "cache/archives/partial", "keyrings"):
        os.makedirs(os.path.join(root, sub))
    open(os.path.join(root, "status"), "w").close()
    yield root
    shutil.rmtree(root)


def apt(root, tool, *args):
    options = ["-o", "Dir::Etc=" + os.path.join(root, "etc"), "-o", "Dir::State=" + os.path.join(root, "state"),
               "-o", "Dir::Cache=" + os.path.join(root, "cache"), "-o", "Dir::State::status=" + os.path.join(root, "status"),
               "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"]
    return subprocess.run([tool] + options + list(args), capture_output=True, text=True, check=False, cwd=root)


def use_minor(root, url, minor, key_source=None):
    repo = "%s/core:/stable:/v%s/deb/" % (url, minor)
    key = os.path.join(root, "keyrings", "kubernetes-apt-keyring.asc")
    urllib.request.urlretrieve(key_source or repo + "Release.key", key)
    with open(os.path.join(root, "etc", "sources.list"), "w") as handle:
        handle.write("deb [signed-by=%s] %s /\n" % (key, repo))


def test_apt_verifies_the_signature_and_finds_each_minor(mirror, apt_root):
    for version in VERSIONS:
        minor = version.rsplit(".", 1)[0]
        use_minor(apt_root, mirror, minor)
        update = apt(apt_root, "apt-get", "update")
        assert update.returncode == 0 and "NO_PUBKEY" not in update.stderr, update.stdout + update.stderr
        policy = apt(apt_root, "apt-cache", "madison", "kubeadm", "kubelet", "kubectl")
        assert sorted(line.split("|")[1].strip() for line in policy.stdout.splitlines()) == [version + "-1.1"] * 3
        # kubeadm depends on cri-tools, as upstream; one crictl build serves both minors.
        tools = apt(apt_root, "apt-cache", "madison", "cri-tools")
        assert [line.split("|")[1].strip() for line in tools.stdout.splitlines()] == ["1.34.0-1.1"]
        assert "Depends: cri-tools" in apt(apt_root, "apt-cache", "show", "kubeadm").stdout


def test_apt_refuses_the_repository_with_another_key(mirror, apt_root, tmp_path):
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    subprocess.run(["gpg", "--homedir", str(home), "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
                    "--quick-gen-key", "someone else <x@example.invalid>", "ed25519", "sign", "never"],
                   check=True, capture_output=True)
    other = tmp_path / "other.asc"
    subprocess.run(["gpg", "--homedir", str(home), "--armor", "--export", "-o", str(other)], check=True)
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False)
    use_minor(apt_root, mirror, "1.35", key_source="file://" + str(other))
    update = apt(apt_root, "apt-get", "update")
    assert "NO_PUBKEY" in update.stdout + update.stderr or "not signed" in update.stdout + update.stderr


def test_the_packages_hold_the_lab_built_binaries(mirror, apt_root):
    use_minor(apt_root, mirror, "1.35")
    assert apt(apt_root, "apt-get", "update").returncode == 0
    download = apt(apt_root, "apt-get", "download", "kubeadm=1.35.4-1.1", "kubelet=1.35.4-1.1")
    assert download.returncode == 0, download.stderr
    extracted = os.path.join(apt_root, "x")
    for deb in ("kubeadm_1.35.4-1.1_amd64.deb", "kubelet_1.35.4-1.1_amd64.deb"):
        subprocess.run(["dpkg-deb", "-x", os.path.join(apt_root, deb), extracted], check=True)
    out = subprocess.run([os.path.join(extracted, "usr", "bin", "kubeadm"), "version", "-o", "short"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "v1.35.4"
    assert os.path.isfile(os.path.join(extracted, "usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"))
    assert os.path.isfile(os.path.join(extracted, "usr/lib/systemd/system/kubelet.service"))


def test_cluster_upgrade_reads_the_versions_on_offer_from_the_mirror(mirror, old_cluster, tmp_path):
    """A 1.34.4 cluster, target 1.35 and no versions given: the plan reads the 1.35 repository's
    Packages index on the first control plane (this machine, apt) and pins the hop to 1.35.4."""
    inventory = tmp_path / "inventory.yml"
    first_control_plane = {"ansible_connection": "local", "cluster_upgrade_node_name": "node-a"}
    inventory.write_text(yaml.safe_dump({"all": {
        "hosts": {"localhost": {"ansible_connection": "local"}},
        "children": {"kube_control_plane": {"hosts": {"cp-1": first_control_plane}}}}}))
    extra = {"cluster_upgrade_repo_url": mirror + "/core:/stable:/v{minor}", "cluster_upgrade_check_cgroups": False,
             "cluster_upgrade_target": "1.35"}
    rc, report, stderr = run_playbook(os.path.join(ROOT, "playbooks", "upgrade.yml"), str(inventory),
                                      ["--check", "-e", yaml.safe_dump(extra, default_flow_style=True)],
                                      env={"KUBECONFIG": old_cluster})
    assert rc == 0, stderr
    plans = [r["msg"] for name, r in task_results(report) if name.endswith("Show the plan") and not r.get("skipped")]
    assert "hops: 1.35.4" in plans[0][0]
    assert plans[0][1] == "This pass: kubeadm upgrade apply 1.35.4, then every node"
