"""dra.gpu.kubeadm_config with a real kubeadm: the node lab's own kubeadm binaries (compiled into the
lab cache by `lab.py mirror`, which tests/integration/run-node-lab.sh runs before this file) migrate a
v1beta3 configuration file to v1beta4 through the module, as cluster_upgrade does before the 1.37
hop. No cluster is needed: `kubeadm config migrate` works on files.

Every kubeadm of 1.31 to 1.36 in the cache is tried; one of 1.37 or later, where present, must
refuse the v1beta3 file (why the migration must come before that hop)."""

import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import run_playbook, task_results

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "lab"))
from labctl import paths  # noqa: E402  pylint: disable=wrong-import-position

# What a site keeps for `kubeadm init --config`, in kubeadm's v1beta3 API, with its own settings
# (kept through the migration) and everything kubeadm would otherwise detect on the host given.
V1BETA3 = """apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.231.9.10
  bindPort: 6443
nodeRegistration:
  name: cp-1
  criSocket: unix:///run/containerd/containerd.sock
  kubeletExtraArgs:
    node-labels: nvidia.com/gpu.present=true
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v{version}
clusterName: dra-gpu-migrate
networking:
  podSubnet: 10.244.0.0/16
apiServer:
  extraArgs:
    audit-log-maxage: "7"
"""


def cached_kubeadms():
    """{(major, minor, patch): path} of every kubeadm the lab cache holds."""
    found = {}
    for path in glob.glob(os.path.join(paths.cache_root(), "kubernetes-v*", "node-bin", "kubeadm")):
        match = re.search(r"kubernetes-v(\d+)\.(\d+)\.(\d+)", path)
        if match and os.access(path, os.X_OK):
            found[tuple(int(n) for n in match.groups())] = path
    return found


KUBEADMS = cached_kubeadms()
MIGRATING = sorted(v for v in KUBEADMS if (1, 31) <= v[:2] <= (1, 36))
NEWER = sorted(v for v in KUBEADMS if v[:2] >= (1, 37))


def migrate_play(path, kubeadm, check=False):
    return [{"hosts": "localhost", "gather_facts": False,
             "tasks": [{"name": "migrate", "dra.gpu.kubeadm_config": {"paths": [str(path)], "migrate": True,
                                                                      "kubeadm": kubeadm},
                        "check_mode": check}]}]


def result_of(report):
    return [r for name, r in task_results(report) if name.endswith("migrate")][0]


def test_the_make_test_run_has_a_kubeadm_that_migrates():
    """run-node-lab.sh builds the mirror (and so kubeadm) first: an empty list here is a broken stage, not a skip."""
    assert MIGRATING, "no kubeadm of 1.31 to 1.36 under %s (found %s)" % (paths.cache_root(), sorted(KUBEADMS))


@pytest.mark.parametrize("version", MIGRATING, ids=lambda v: "%d.%d.%d" % v)
def test_a_v1beta3_file_is_migrated_by_a_real_kubeadm_with_a_backup(tmp_path, version):
    kubeadm = KUBEADMS[version]
    config = tmp_path / "kubeadm-config.yaml"
    original = V1BETA3.format(version="%d.%d.%d" % version)
    config.write_text(original)
    # Check mode: says it would migrate, writes nothing.
    rc, report, stderr = run_playbook(migrate_play(config, kubeadm, check=True), extra_args=["--diff"])
    assert rc == 0, stderr
    planned = result_of(report)
    assert planned["changed"] and planned["files"][0]["migrated"] and planned["files"][0]["api_versions"] == ["v1beta3"]
    assert config.read_text() == original and os.listdir(str(tmp_path)) == [config.name]
    # For real: kubeadm rewrites it as v1beta4; the original is kept beside it.
    rc, report, stderr = run_playbook(migrate_play(config, kubeadm), extra_args=["--diff"])
    assert rc == 0, stderr
    done = result_of(report)["files"][0]
    assert done["migrated"] and done["api_versions"] == ["v1beta4"]
    assert os.path.dirname(done["backup"]) == str(tmp_path) and re.search(r"\.\d{8}T\d{6}\.v1beta3$", done["backup"])
    assert open(done["backup"]).read() == original
    documents = {d["kind"]: d for d in yaml.safe_load_all(config.read_text()) if d}
    assert {d["apiVersion"] for d in documents.values()} == {"kubeadm.k8s.io/v1beta4"}
    # The site's settings survive; v1beta4 writes extra arguments as name/value lists.
    assert documents["InitConfiguration"]["localAPIEndpoint"]["advertiseAddress"] == "10.231.9.10"
    assert documents["InitConfiguration"]["nodeRegistration"]["name"] == "cp-1"
    assert {"name": "audit-log-maxage", "value": "7"} in documents["ClusterConfiguration"]["apiServer"]["extraArgs"]
    assert documents["ClusterConfiguration"]["networking"]["podSubnet"] == "10.244.0.0/16"
    # kubeadm filled in a bootstrap token; the diff, which logs keep, shows it masked.
    token = documents["InitConfiguration"]["bootstrapTokens"][0]["token"]
    diff = result_of(report)["diff"][0]
    assert "token: ***" in diff["after"] and token not in json.dumps(report)
    # kubeadm itself reads the new file.
    check = subprocess.run([kubeadm, "config", "validate", "--config", str(config)], capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0, check.stderr
    # Again: a v1beta4 file is left alone.
    migrated = config.read_text()
    rc, report, stderr = run_playbook(migrate_play(config, kubeadm))
    assert rc == 0, stderr
    assert not result_of(report)["changed"] and config.read_text() == migrated
    assert sorted(os.listdir(str(tmp_path))) == sorted([config.name, os.path.basename(done["backup"])])


@pytest.mark.skipif(not NEWER, reason="no kubeadm of 1.37 or later in the lab cache (built where the node lab "
                                      "upgrades to 1.37)")
def test_kubeadm_1_37_refuses_v1beta3_and_the_module_changes_nothing(tmp_path):
    kubeadm = KUBEADMS[NEWER[0]]
    config = tmp_path / "kubeadm-config.yaml"
    original = V1BETA3.format(version="1.37.2")
    config.write_text(original)
    rc, report, _stderr = run_playbook(migrate_play(config, kubeadm))
    assert rc != 0
    message = result_of(report)["msg"]
    assert "was not migrated, nothing of it changed" in message and "kubeadm 1.31 to 1.36" in message
    assert config.read_text() == original and os.listdir(str(tmp_path)) == [config.name]
