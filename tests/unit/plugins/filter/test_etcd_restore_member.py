from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.dra.gpu.plugins.filter import etcd_restore_member

member_of = etcd_restore_member.FilterModule().filters()["etcd_restore_member"]
MANIFEST = ("spec:\n  containers:\n  - name: etcd\n    command: [etcd, --name=cp1, --data-dir=/var/lib/etcd,"
            " --initial-advertise-peer-urls=https://10.0.0.11:2380]\n")


def test_the_member_then_its_restore_command():
    cp1 = member_of(MANIFEST, "cp1")
    assert cp1 == {"name": "cp1", "peer_url": "https://10.0.0.11:2380", "data_dir": "/var/lib/etcd"}
    argv = member_of(MANIFEST, "cp1", [cp1], "/s.db", "restored-1")
    assert argv[:6] == ["etcdutl", "snapshot", "restore", "/s.db", "--name", "cp1"]
    assert argv[argv.index("--initial-cluster") + 1] == "cp1=https://10.0.0.11:2380"


def test_a_manifest_without_the_flags_fails_as_a_filter_error_naming_the_host():
    with pytest.raises(AnsibleFilterError, match="on cp7 lacks --name"):
        member_of(MANIFEST.replace(" --name=cp1,", ""), "cp7")
