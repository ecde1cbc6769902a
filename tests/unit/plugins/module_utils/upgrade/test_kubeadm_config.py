from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import kubeadm_config

V1BETA3 = """apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
---
apiVersion: "kubeadm.k8s.io/v1beta3"
kind: ClusterConfiguration
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
"""
NOW = datetime.datetime(2026, 12, 6, 23, 15, 0)


def test_api_versions_of_every_kubeadm_document():
    assert kubeadm_config.api_versions(V1BETA3) == ["v1beta3"]
    assert kubeadm_config.api_versions(V1BETA3.replace("v1beta3\"", "v1beta4\"")) == ["v1beta3", "v1beta4"]
    assert kubeadm_config.api_versions("kind: Foo\n  apiVersion: kubeadm.k8s.io/v1beta3\n") == []  # not top level
    assert kubeadm_config.api_versions(None) == []


def fake_kubeadm(output, rc=0):
    calls = []

    def run(argv):
        calls.append(argv)
        if rc == 0:
            with open(argv[argv.index("--new-config") + 1], "w") as new:
                new.write(output)
        return rc, "", "error: %s" % output if rc else ""
    return run, calls


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    path.write_text(V1BETA3)
    os.chmod(str(path), 0o600)
    return path


def test_migrate_keeps_the_original_beside_the_new_file(config):
    run, calls = fake_kubeadm(V1BETA3.replace("v1beta3", "v1beta4"))
    state = kubeadm_config.migrate(str(config), run, NOW, "/opt/kubeadm")
    assert calls[0][:4] == ["/opt/kubeadm", "config", "migrate", "--old-config"] and calls[0][4] == str(config)
    backup = str(config) + ".20261206T231500.v1beta3"
    assert state["changed"] and state["backup"] == backup and state["api_versions"] == ["v1beta4"]
    assert open(backup).read() == V1BETA3 and "v1beta3" not in config.read_text()
    assert oct(os.stat(str(config)).st_mode & 0o777) == "0o600"
    assert sorted(os.listdir(str(config.parent))) == sorted([config.name, os.path.basename(backup)])
    # Idempotent: the v1beta4 file is left alone, kubeadm not run again.
    again = kubeadm_config.migrate(str(config), run, NOW)
    assert not again["changed"] and len(calls) == 1


def test_check_mode_says_what_it_would_do_and_writes_nothing(config):
    run, calls = fake_kubeadm("unused")
    state = kubeadm_config.migrate(str(config), run, NOW, check_mode=True)
    assert state["changed"] and state["backup"].endswith(".v1beta3") and calls == []
    assert config.read_text() == V1BETA3 and os.listdir(str(config.parent)) == [config.name]


@pytest.mark.parametrize("output,rc,words", [
    ("no such flag", 1, "failed (rc 1): error: no such flag"),
    (V1BETA3, 0, "wrote v1beta3, not kubeadm.k8s.io/v1beta4"),
])
def test_a_refused_migration_changes_nothing(config, output, rc, words):
    run, _calls = fake_kubeadm(output, rc)
    with pytest.raises(kubeadm_config.MigrationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        kubeadm_config.migrate(str(config), run, NOW)
    assert config.read_text() == V1BETA3 and os.listdir(str(config.parent)) == [config.name]


def test_a_missing_file_is_reported_not_migrated(tmp_path):
    run, calls = fake_kubeadm("unused")
    state = kubeadm_config.migrate(str(tmp_path / "none.yaml"), run, NOW)
    assert state == {"path": str(tmp_path / "none.yaml"), "exists": False, "api_versions": [], "changed": False,
                     "backup": None} and calls == []


def test_credentials_are_masked_for_a_diff():
    text = ("bootstrapTokens:\n- groups: [a]\n  token: u2dtxa.enpivnazseuxxlfg\ndiscovery:\n  bootstrapToken:\n"
            "    token: abcdef.0123456789abcdef\n    caCertHashes:\n    - sha256:1234\ncertificateKey: f00d\n"
            "kind: InitConfiguration\n")
    shown = kubeadm_config.masked(text)
    assert "u2dtxa" not in shown and "0123456789abcdef" not in shown and "f00d" not in shown
    assert "  token: ***" in shown and "certificateKey: ***" in shown and "kind: InitConfiguration" in shown
