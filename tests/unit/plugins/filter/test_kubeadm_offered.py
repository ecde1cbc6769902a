from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.filter import kubeadm_offered as plugin

# As Jinja sees it: through the plugin's table of filters.
kubeadm_offered = plugin.FilterModule().filters()["kubeadm_offered"]

APT_INDEX = "Package: cri-tools\nVersion: 1.35.0-1.1\n\nPackage: kubeadm\nVersion: 1.35.4-1.1\n"


def test_the_filter_is_registered_under_its_documented_name():
    assert list(plugin.FilterModule().filters()) == ["kubeadm_offered"]


def test_apt_reads_alone_as_the_input():
    apt = {"results": [{"status": 200, "content": APT_INDEX}]}
    assert kubeadm_offered(apt) == {"versions": ["1.35.4"], "unread": []}


def test_dnf_reads_as_the_argument_are_merged():
    apt = {"results": [{"status": 200, "content": APT_INDEX}, {"skipped": True}]}
    dnf = {"results": [{"stdout": "kubeadm.x86_64  1.34.7-150500.1.1  k8s-1.34\n"}]}
    assert kubeadm_offered(apt, dnf)["versions"] == ["1.34.7", "1.35.4"]


def test_unanswered_apt_reads_are_returned():
    apt = {"results": [{"status": -1, "url": "https://pkgs.k8s.io/core:/stable:/v1.36/deb/Packages", "msg": "timed out"}]}
    assert kubeadm_offered(apt)["unread"] == [{"url": "https://pkgs.k8s.io/core:/stable:/v1.36/deb/Packages",
                                               "msg": "timed out",
                                               "text": "https://pkgs.k8s.io/core:/stable:/v1.36/deb/Packages: timed out"}]


def test_nothing_registered_offers_nothing():
    assert kubeadm_offered({}) == {"versions": [], "unread": []}
    assert kubeadm_offered({}, None) == {"versions": [], "unread": []}
