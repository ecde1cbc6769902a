from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import etcd_restore

MANIFEST = """apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers:
  - name: etcd
    command:
    - etcd
    - --advertise-client-urls=https://10.0.0.12:2379
    - --data-dir=/var/lib/etcd
    - --initial-advertise-peer-urls=https://10.0.0.12:2380
    - --initial-cluster=cp1=https://10.0.0.11:2380,cp2=https://10.0.0.12:2380
    - --initial-cluster-state=existing
    - --name=cp2
"""


def test_a_member_is_read_from_kubeadm_s_flags():
    assert etcd_restore.member(MANIFEST, "cp2") == {"name": "cp2", "peer_url": "https://10.0.0.12:2380",
                                                    "data_dir": "/var/lib/etcd"}


def test_a_manifest_that_is_not_kubeadm_s_is_refused_naming_the_host():
    with pytest.raises(etcd_restore.RestoreError, match="on cp9 is not a static pod manifest"):
        etcd_restore.member("- just a list", "cp9")
    with pytest.raises(etcd_restore.RestoreError, match="on cp2 lacks --name"):
        etcd_restore.member(MANIFEST.replace("    - --name=cp2\n", ""), "cp2")


def test_every_member_restores_as_one_of_the_new_cluster_each_under_its_own_name():
    cp1 = {"name": "cp1", "peer_url": "https://10.0.0.11:2380", "data_dir": "/var/lib/etcd"}
    cp2 = etcd_restore.member(MANIFEST, "cp2")
    argv = etcd_restore.restore_argv("/s.db", cp2, [cp2, cp1], "restored-1", "/usr/local/bin/etcdutl")
    assert argv == ["/usr/local/bin/etcdutl", "snapshot", "restore", "/s.db", "--name", "cp2",
                    "--initial-advertise-peer-urls", "https://10.0.0.12:2380",
                    "--initial-cluster", "cp1=https://10.0.0.11:2380,cp2=https://10.0.0.12:2380",
                    "--initial-cluster-token", "restored-1", "--data-dir", "/var/lib/etcd-restored",
                    "--bump-revision", "1000000000", "--mark-compacted"]
    with pytest.raises(etcd_restore.RestoreError, match=r"same etcd member \(cp2\)"):
        etcd_restore.restore_argv("/s.db", cp2, [cp2, dict(cp1, name="cp2")], "t")
